package mcpgrpc_test

import (
	"context"
	"testing"

	mcpgrpc "github.com/tako-mcp/tako/grpc"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/transport/transporttest"
)

// TestTransportKit runs the Transport kit on the gRPC client, over mutual
// TLS with certificates made for the test, through the gRPC server end
// fronting a Session over the reference server (three tools per page), as
// `tako bridge --listen-grpc` does. Each subtest gets a bridge of its own,
// so that a server request is attributed to the one call that can carry
// it.
//
// The backend runs once in each era. 2026-07-28 asks for input in
// input_required rounds tied to the call; the bridge opts in to roots
// (Dependents.Roots), so all three kinds reach the client's handlers. The
// legacy backend asks with server requests, and the bridge has the default
// Dependents.Handlers, which leave roots out: the kit checks that the roots
// tool then fails without reaching the client's handler.
func TestTransportKit(t *testing.T) {
	p := newPKI(t)
	stls, err := mcpgrpc.ServerTLSConfig(mcpgrpc.TLSOptions{CertPEM: p.Server.CertPEM, KeyPEM: p.Server.KeyPEM, CAPEM: p.CA.PEM})
	if err != nil {
		t.Fatal(err)
	}
	ctls, err := mcpgrpc.ClientTLSConfig(mcpgrpc.TLSOptions{CertFile: p.Client.CertFile, KeyFile: p.Client.KeyFile, CAPEM: p.CA.PEM, ServerName: "mcp.test"})
	if err != nil {
		t.Fatal(err)
	}
	srv := mcptest.NewReference(mcptest.Options{PageSize: 3})
	for _, tc := range []struct {
		name, version string
		roots         bool
		requests      []string
	}{
		{"modern-backend", "", true, []string{mcp.MethodSamplingCreateMessage, mcp.MethodElicitationCreate, mcp.MethodRootsList}},
		{"legacy-backend", mcp.Version20251125, false, []string{mcp.MethodSamplingCreateMessage, mcp.MethodElicitationCreate}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			transporttest.RunTransport(t, func(t *testing.T, h transport.Handlers) transport.Transport {
				deps := mcpgrpc.NewDependents()
				bh := deps.Handlers()
				if tc.roots {
					bh.Roots = deps.Roots
				}
				backend := referenceBackendVersion(t, srv, tc.version, bh)
				addr, _ := startBridge(t, backend, &mcpgrpc.ServerOptions{TLS: stls.Clone(), Dependents: deps})
				c, err := mcpgrpc.Dial(context.Background(), addr, &mcpgrpc.Options{TLS: ctls.Clone(), Handlers: h})
				if err != nil {
					t.Fatalf("Dial: %v", err)
				}
				return c
			}, transporttest.WithServer(srv), transporttest.WithServerRequests(tc.requests...))
		})
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Errorf("the bridge's Session broke the protocol: %q", v)
	}
}
