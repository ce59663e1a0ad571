package main

import (
	"context"
	"fmt"
	"net"

	mcpgrpc "github.com/tako-mcp/tako/grpc"
	"github.com/tako-mcp/tako/transport"
)

// grpcFlags are the TLS flags of --grpc (a client) and of bridge
// --listen-grpc (a server).
type grpcFlags struct {
	cert, key  string // this end's certificate and key
	ca         string // the CA of the server (--grpc)
	serverName string // the name expected in the server's certificate
	clientCA   string // bridge: the CA of the clients, which makes certificates required
	plaintext  bool   // no TLS, asked for by name
	// noClientAuth (bridge) serves TLS without client certificates, asked
	// for by name: mutual TLS is the default, and a server certificate
	// alone does not turn it off.
	noClientAuth bool
}

func (g *grpcFlags) clientGiven() bool {
	return g.cert != "" || g.key != "" || g.ca != "" || g.serverName != "" || g.plaintext
}

// setGRPC returns the setter of one grpc flag.
func setGRPC(name string) func(*options, string) error {
	return func(o *options, v string) error {
		g := &o.grpc
		switch name {
		case "cert":
			g.cert = v
		case "key":
			g.key = v
		case "ca":
			g.ca = v
		case "server-name":
			g.serverName = v
		case "client-ca":
			g.clientCA = v
		case "plaintext":
			return setBool(&g.plaintext, name, v)
		case "no-client-auth":
			return setBool(&g.noClientAuth, name, v)
		}
		return nil
	}
}

// checkGRPCFlags rejects the grpc flags where they do not apply, and
// checks them for a --grpc server (kind is the server's flag).
func checkGRPCFlags(o *options, kind string) error {
	g := &o.grpc
	switch {
	case g.clientCA != "":
		return usagef("--client-ca is a flag of tako bridge --listen-grpc")
	case g.noClientAuth:
		return usagef("--no-client-auth is a flag of tako bridge --listen-grpc")
	case kind != "grpc":
		if g.clientGiven() {
			return usagef("--cert, --key, --ca, --server-name and --plaintext are for a --grpc server")
		}
		return nil
	case g.plaintext:
		if g.cert != "" || g.key != "" || g.ca != "" || g.serverName != "" {
			return usagef("--plaintext goes without --cert, --key, --ca and --server-name")
		}
	case g.ca == "" && o.picked == nil:
		return usagef("--grpc needs --ca FILE (the CA of the server's certificate), or --plaintext to go without TLS")
	case (g.cert == "") != (g.key == ""):
		return usagef("--cert and --key go together")
	}
	return nil
}

// grpcBridgeEnd serves the MCP gRPC service: bridge --listen-grpc ADDR. All
// gRPC clients share one backend server, started when the bridge starts:
// gRPC calls are not tied to a connection, so there is no per-client
// server to start. The bridge ends when that server does.
var grpcBridgeEnd = bridgeEnd{name: "grpc", check: checkGRPCBridge, serve: serveGRPCBridge}

// checkGRPCBridge checks the TLS flags of --listen-grpc before anything
// starts. Mutual TLS is the default: a server certificate without
// --client-ca would let in anyone who reaches the port, and a bridge that
// runs the server's tools for them must not do that unless told so by
// name (--no-client-auth).
func checkGRPCBridge(o *options) error {
	if err := wsFlagsWithoutEnd(o); err != nil {
		return err
	}
	g := &o.grpc
	switch {
	case g.plaintext:
		if o.bridge.tlsCert != "" || g.clientCA != "" || g.noClientAuth {
			return usagef("--plaintext goes without --tls-cert, --tls-key, --client-ca and --no-client-auth")
		}
	case o.bridge.tlsCert == "":
		return usagef("--listen-grpc needs --tls-cert, --tls-key and --client-ca (mutual TLS), or --plaintext to go without TLS")
	case g.clientCA == "" && !g.noClientAuth:
		return usagef("--listen-grpc needs --client-ca FILE to verify client certificates; to accept clients without one, say --no-client-auth")
	case g.clientCA != "" && g.noClientAuth:
		return usagef("--client-ca and --no-client-auth contradict each other")
	}
	return nil
}

func serveGRPCBridge(ctx context.Context, addr string, cfg *bridgeConfig, ready func(url string)) error {
	o := cfg.flags
	sopts := &mcpgrpc.ServerOptions{Logger: cfg.logger, Dependents: mcpgrpc.NewDependents()}
	if o.grpc.plaintext {
		sopts.InsecurePlaintext = true
	} else {
		tlsCfg, err := mcpgrpc.ServerTLSConfig(mcpgrpc.TLSOptions{CertFile: o.bridge.tlsCert, KeyFile: o.bridge.tlsKey, CAFile: o.grpc.clientCA, Logger: cfg.logger})
		if err != nil {
			return err
		}
		sopts.TLS = tlsCfg
	}
	if o.grpc.noClientAuth {
		fmt.Fprintf(cfg.stderr, "tako: warning: --no-client-auth: the gRPC bridge on %s accepts clients without a certificate; anyone who can reach it can call the server's tools\n", addr)
	}
	conn, err := cfg.backend(ctx)
	if err != nil {
		return fmt.Errorf("starting the server: %w", err)
	}
	sess, err := transport.Connect(ctx, conn, &transport.Options{Logger: cfg.logger, Handlers: sopts.Dependents.Handlers()})
	if err != nil {
		return fmt.Errorf("connecting to the server: %w", err)
	}
	defer sess.Close()
	srv, err := mcpgrpc.NewServer(sess, sopts)
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	ready("grpc://" + lis.Addr().String())
	var result error
	select {
	case <-ctx.Done():
	case err := <-served:
		result = err
	case <-sess.Done():
		result = fmt.Errorf("the server ended: %w", sess.Err())
	}
	srv.Close()
	if result == nil {
		result = <-served
	} else {
		<-served
	}
	return result
}
