package main

import (
	"context"
	"log/slog"
	"net"

	"github.com/tako-mcp/tako/dial"
	"github.com/tako-mcp/tako/transport"
)

// dialer starts or reaches the server and runs the MCP handshake. What it
// returns is a transport.Transport and nothing more: a Session for stdio,
// HTTP and WebSocket, the gRPC client for --grpc. The commands use the
// interface alone (transport.Call for --json), so every transport serves
// them the same way (DESIGN.md).
type dialer func(ctx context.Context) (transport.Transport, error)

// chooseServer turns the server flags into a dialer. The transports are
// dial's to know (serverOf builds the dial.Server); this checks the flags
// that only make sense with some of them. Everything it rejects is a usage
// error, found before anything starts.
func chooseServer(o *options, logger *slog.Logger) (dialer, error) {
	if o.bridge.given() {
		return nil, usagef("--listen-*, --tls-cert, --tls-key, --token, --token-env, --allow-host, --allow-origin and --max-clients are flags of tako bridge")
	}
	s, err := serverOf(o)
	if err != nil {
		return nil, err
	}
	sessionOpts := o.session
	if sessionOpts == nil {
		sessionOpts = &transport.Options{}
	}
	sessionOpts.Logger, sessionOpts.LogLevel = logger, o.logLevel
	return func(ctx context.Context) (transport.Transport, error) {
		t, err := dial.Dial(ctx, s, sessionOpts)
		if err != nil {
			return nil, err // not a typed nil inside the interface
		}
		return t, nil
	}, nil
}

// serverOf is the dial.Server the server flags of o name: a transport
// flag with its --env, --header and TLS flags, or the --config FILE entry
// (--server NAME picks it) with the command line's --env and --header
// added after the file's, so that they win. The tokens `tako login` stored
// authorize an --http or --ws server (loginAuth).
func serverOf(o *options) (dial.Server, error) {
	if err := resolveConfig(o); err != nil {
		return dial.Server{}, err
	}
	kind := o.server.kind
	if o.picked != nil {
		kind = kindFlag(o.picked)
	}
	switch {
	case kind == "":
		return dial.Server{}, usagef(`no server: give one with --stdio "CMD ARGS...", --http URL or --config FILE (see tako help)`)
	case len(o.headers) > 0 && kind != "http" && kind != "ws":
		return dial.Server{}, usagef("--header is for an --http or --ws server")
	case len(o.env) > 0 && kind != "stdio":
		return dial.Server{}, usagef("--env sets the environment of a --stdio server, not of --%s", kind)
	}
	if !o.bridge.given() { // the bridge's --listen-grpc has TLS flags of its own
		if err := checkGRPCFlags(o, kind); err != nil {
			return dial.Server{}, err
		}
	}
	var s dial.Server
	switch {
	case o.picked != nil:
		s = *o.picked
		s.Env = append(append([]string(nil), s.Env...), o.env...)
		if len(o.headers) > 0 {
			s.Header = s.Header.Clone()
			if s.Header == nil {
				s.Header = map[string][]string{}
			}
			for k, v := range headerFlags(o.headers) {
				s.Header[k] = v
			}
		}
	case kind == "stdio":
		argv, err := splitCommand(o.server.value)
		if err == nil && argv[0] == "" {
			err = errEmptyCommand
		}
		if err != nil {
			return s, usagef("--stdio: %v", err)
		}
		s = dial.Server{Kind: dial.Stdio, Command: argv[0], Args: argv[1:], Env: o.env}
	case kind == "http":
		s = dial.Server{Kind: dial.HTTP, URL: o.server.value, Header: headerFlags(o.headers)}
	case kind == "ws":
		s = dial.Server{Kind: dial.WebSocket, URL: o.server.value, Header: headerFlags(o.headers)}
	case kind == "grpc":
		g := &o.grpc
		if _, _, err := net.SplitHostPort(o.server.value); err != nil {
			return s, usagef("--grpc wants HOST:PORT, not %q", o.server.value)
		}
		s = dial.Server{Kind: dial.GRPC, URL: o.server.value,
			TLS: &dial.TLS{CAFile: g.ca, CertFile: g.cert, KeyFile: g.key, ServerName: g.serverName, Plaintext: g.plaintext}}
	}
	if s.Kind == dial.HTTP || s.Kind == dial.SSE || s.Kind == dial.WebSocket {
		s.AuthFunc = loginAuth
	}
	if err := s.Check(); err != nil {
		return s, usagef("%s", checkMessage(kind, err))
	}
	return s, nil
}

// kindFlag is the transport flag that a config entry stands for.
func kindFlag(s *dial.Server) string {
	switch s.Kind {
	case dial.HTTP, dial.SSE:
		return "http"
	case dial.WebSocket:
		return "ws"
	case dial.GRPC:
		return "grpc"
	}
	return "stdio"
}

// loginAuth is the authorization of an --http or --ws server: the tokens
// `tako login` stored for it (storedAuth).
func loginAuth(_ context.Context, s *dial.Server) (dial.Authorizer, error) {
	ac, err := storedAuth(s.URL)
	if err != nil {
		return nil, err // not a typed nil in an interface
	}
	return ac, nil
}
