package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"sync"

	"github.com/tako-mcp/tako/dial"
	"github.com/tako-mcp/tako/transport"
)

// `tako bridge` serves one MCP server, which tako reaches as a client, to
// clients of another transport: `tako bridge --listen-ws ADDR --stdio CMD`
// serves a stdio server over WebSocket, one subprocess per client.
//
// The command is built around a small table, bridgeEnds: each end (the
// protocol clients use to reach the bridge) is a file of its own that
// defines a bridgeEnd, one entry in the table, and its --listen-NAME flag in
// args.go (set with setListen). This file knows no end in particular.

// bridgeFlags are the flags only `tako bridge` takes.
type bridgeFlags struct {
	listen  []listenFlag // in command-line order
	tlsCert string
	tlsKey  string
	ws      wsBridgeFlags // --token, --allow-host, ... of --listen-ws (ws.go)
}

// listenFlag is one --listen-NAME ADDR.
type listenFlag struct {
	end  string // the bridgeEnd's name
	addr string
}

func (b *bridgeFlags) given() bool {
	return len(b.listen) > 0 || b.tlsCert != "" || b.tlsKey != "" || b.ws.given()
}

// serves reports whether an end of that name is listed.
func (b *bridgeFlags) serves(end string) bool {
	for _, l := range b.listen {
		if l.end == end {
			return true
		}
	}
	return false
}

// setListen returns the setter of the --listen-NAME flag of the end name.
func setListen(name string) func(*options, string) error {
	return func(o *options, v string) error {
		o.bridge.listen = append(o.bridge.listen, listenFlag{end: name, addr: v})
		return nil
	}
}

// bridgeBackend connects one client of the bridge to the server: it starts
// a fresh server (--stdio) or opens a fresh connection to it. ctx lives as
// long as that client's bridge.
type bridgeBackend func(ctx context.Context) (transport.Conn, error)

// bridgeConfig is what every end is given.
type bridgeConfig struct {
	backend bridgeBackend
	// tls is the server's TLS configuration (--tls-cert, --tls-key), or nil
	// to serve in the clear.
	tls    *tls.Config
	logger *slog.Logger // Warn and above on stderr; everything with --verbose
	// stderr is for warnings a person must see, --verbose or not (safe for
	// concurrent use).
	stderr io.Writer
	// flags are all the command's flags, for an end with flags of its own
	// (--listen-grpc reads --client-ca, --plaintext, --no-client-auth and
	// the --tls-* files).
	flags *options
}

// bridgeEnd is one protocol the bridge can serve.
type bridgeEnd struct {
	// name is the suffix of the end's flag: "ws" for --listen-ws.
	name string
	// check, if set, checks the end's flags before any end starts: what it
	// rejects is a usage error (exit status 2), found before anything runs.
	check func(o *options) error
	// serve listens on addr, calls ready with the URL clients should use,
	// and serves until ctx ends. Then it shuts down: it stops accepting,
	// ends every client's bridge and backend (every subprocess), and
	// returns nil. It returns an error if it cannot listen or serving
	// fails.
	serve func(ctx context.Context, addr string, cfg *bridgeConfig, ready func(url string)) error
}

// bridgeEnds lists the ends `tako bridge` can serve; add one line per end.
var bridgeEnds = []bridgeEnd{
	wsBridgeEnd,
	grpcBridgeEnd,
}

func findBridgeEnd(name string) *bridgeEnd {
	for i := range bridgeEnds {
		if bridgeEnds[i].name == name {
			return &bridgeEnds[i]
		}
	}
	return nil
}

// runBridge is `tako bridge`. It prints each URL it serves on a line of its
// own on stdout, then serves until ctx ends (SIGINT or SIGTERM) and shuts
// down cleanly, with status 0.
func runBridge(ctx context.Context, inv *invocation, stdout, stderr io.Writer) error {
	o := &inv.opts
	if len(inv.args) > 0 {
		return usagef("bridge takes no arguments, only flags (got %q)", inv.args[0])
	}
	if err := resolveConfig(o); err != nil {
		return err
	}
	if len(o.bridge.listen) == 0 {
		return usagef(`bridge needs an end to serve, such as --listen-ws 127.0.0.1:8765`)
	}
	ends := make([]*bridgeEnd, len(o.bridge.listen))
	for i, l := range o.bridge.listen {
		if ends[i] = findBridgeEnd(l.end); ends[i] == nil {
			return usagef("--listen-%s is not supported yet", l.end)
		}
	}
	if (o.bridge.tlsCert == "") != (o.bridge.tlsKey == "") {
		return usagef("--tls-cert and --tls-key go together")
	}
	for _, end := range ends {
		if end.check != nil {
			if err := end.check(o); err != nil {
				return err
			}
		}
	}
	if o.format != "" {
		return usagef("--json and --format are for the commands that print results, not bridge")
	}

	// Warnings reach stderr --verbose or not: a reloaded CA that was
	// refused, a client turned away at the cap, a web page refused.
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn, ReplaceAttr: dropTime}))
	if o.verbose {
		logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	backend, err := bridgeBackendFor(o, logger)
	if err != nil {
		return err
	}
	cfg := &bridgeConfig{backend: backend, logger: logger, stderr: stderr, flags: o}
	if o.bridge.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(o.bridge.tlsCert, o.bridge.tlsKey)
		if err != nil {
			return &failure{msg: "bridge: loading --tls-cert and --tls-key: " + err.Error(), err: err}
		}
		cfg.tls = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}

	// Every end runs until the first of them fails or ctx ends; then all
	// shut down, and the first error (if any) is the command's.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
		outMu    sync.Mutex
	)
	for i, end := range ends {
		addr := o.bridge.listen[i].addr
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := end.serve(ctx, addr, cfg, func(url string) {
				outMu.Lock()
				defer outMu.Unlock()
				fmt.Fprintln(stdout, url)
				if f, ok := stdout.(interface{ Sync() error }); ok {
					f.Sync()
				}
			})
			if err != nil {
				once.Do(func() {
					firstErr = &failure{msg: fmt.Sprintf("bridge --listen-%s %s: %v", end.name, addr, err), err: err}
				})
				cancel()
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// bridgeBackendFor turns the server flags into the backend every client is
// bridged to: a fresh process for --stdio, a fresh connection for --http
// and --ws, each a message Conn from dial that the ends speak through.
func bridgeBackendFor(o *options, logger *slog.Logger) (bridgeBackend, error) {
	if o.server.kind == "" && o.picked == nil {
		return nil, usagef(`bridge needs a server to serve: --stdio "CMD ARGS...", --http URL, --ws URL or --config FILE`)
	}
	s, err := serverOf(o)
	if err != nil {
		return nil, err
	}
	if s.Kind == dial.GRPC {
		return nil, usagef("bridge serves a --stdio, --http or --ws server; a --grpc one has no message stream to bridge")
	}
	if s.Kind == dial.Stdio {
		// Each client starts the command: one that cannot start is said
		// now, before the bridge listens, not to every client later.
		if _, err := exec.LookPath(s.Command); err != nil {
			w, _ := startFailure(s.Command, err)
			if w == "" {
				w = err.Error()
			}
			return nil, &failure{msg: "bridge: cannot start " + w, err: err}
		}
	}
	opts := &transport.Options{Logger: logger}
	return func(ctx context.Context) (transport.Conn, error) {
		c, err := dial.DialConn(ctx, s, opts)
		if err != nil {
			return nil, err // not a typed nil inside the interface
		}
		return c, nil
	}, nil
}

// dropTime leaves the time out of the warnings printed without --verbose:
// a person reads them as they come.
func dropTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}
