package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
)

// dialer starts or reaches the server and runs the MCP handshake. What it
// returns is a transport.Transport and nothing more: a Session for stdio,
// HTTP and WebSocket, the gRPC client for --grpc. The commands use the
// interface alone (transport.Call for --json), so every transport serves
// them the same way (DESIGN.md).
type dialer func(ctx context.Context) (transport.Transport, error)

// chooseServer turns the transport flag into a dialer. It is the one place
// that knows the transports: a new one is a case here (and its flag in
// args.go). Everything it rejects is a usage error, found before anything
// starts.
func chooseServer(o *options, logger *slog.Logger) (dialer, error) {
	if err := applyConfig(o); err != nil {
		return nil, err
	}
	if o.bridge.given() {
		return nil, usagef("--listen-*, --tls-cert, --tls-key, --token, --token-env, --allow-host, --allow-origin and --max-clients are flags of tako bridge")
	}
	if len(o.headers) > 0 && o.server.kind != "http" && o.server.kind != "ws" {
		return nil, usagef("--header is for an --http or --ws server")
	}
	if len(o.env) > 0 && o.server.kind != "stdio" && o.server.kind != "" {
		return nil, usagef("--env sets the environment of a --stdio server, not of --%s", o.server.kind)
	}
	if err := checkGRPCFlags(o); err != nil {
		return nil, err
	}
	sessionOpts := o.session
	if sessionOpts == nil {
		sessionOpts = &transport.Options{}
	}
	sessionOpts.Logger, sessionOpts.LogLevel = logger, o.logLevel
	switch o.server.kind {
	case "stdio":
		start, name, err := stdioStarter(o, logger)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) (transport.Transport, error) {
			conn, err := start(ctx)
			if err != nil {
				return nil, &stageError{stage: "start " + name, err: err}
			}
			return connect(ctx, conn, sessionOpts)
		}, nil
	case "http":
		return httpDialer(o, logger, sessionOpts)
	case "ws":
		return wsDialer(o, logger, sessionOpts)
	case "grpc":
		return grpcDialer(o, logger)
	case "":
		return nil, usagef(`no server: give one with --stdio "CMD ARGS...", --http URL or --config FILE (see tako help)`)
	default:
		// Only flags of flagDefs set kind; reaching here is a bug there.
		return nil, fmt.Errorf("internal error: unknown transport %q", o.server.kind)
	}
}

// connect runs the handshake over conn. It returns the Session as a
// Transport, and a nil interface, not a nil *Session in one, on failure.
func connect(ctx context.Context, conn transport.Conn, opts *transport.Options) (transport.Transport, error) {
	s, err := transport.Connect(ctx, conn, opts)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// stdioStarter parses --stdio like a shell would (running none) and returns
// what starts the server, and the command's name for messages. A bad
// command line is a usage error.
func stdioStarter(o *options, logger *slog.Logger) (start func(context.Context) (transport.Conn, error), name string, err error) {
	argv, err := o.argv, error(nil)
	if argv == nil {
		argv, err = splitCommand(o.server.value)
	}
	if err == nil && argv[0] == "" {
		err = errors.New("empty command name")
	}
	if err != nil {
		return nil, "", usagef("--stdio: %v", err)
	}
	return func(ctx context.Context) (transport.Conn, error) {
		conn, err := stdio.Start(ctx, &stdio.Options{Command: argv[0], Args: argv[1:], Env: o.env, Logger: logger})
		if err != nil {
			return nil, err // not a typed nil inside the interface
		}
		return conn, nil
	}, argv[0], nil
}
