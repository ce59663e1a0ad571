package transporttest_test

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/transport/transporttest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// pipeDialer returns a dial function that serves each new in-memory pipe
// with srv, and stops serving when the subtest ends.
func pipeDialer(srv *mcptest.Server) func(t *testing.T) transport.Conn {
	return func(t *testing.T) transport.Conn {
		client, server := transport.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- srv.Serve(ctx, server) }()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Serve: %v", err)
			}
		})
		return client
	}
}

// TestPipe runs the kit on transport.Pipe, in both eras.
func TestPipe(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{})
	transporttest.Run(t, pipeDialer(srv), transporttest.WithServer(srv))
	if v := srv.Violations(); len(v) > 0 {
		t.Errorf("the Session broke the protocol: %q", v)
	}
}

// TestPipePaginatedLegacyServer runs the kit against a legacy-only server
// that pages its tools, and pins every legacy revision.
func TestPipePaginatedLegacyServer(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{
		Versions: []string{mcp.Version20251125, mcp.Version20250618, mcp.Version20250326, mcp.Version20241105},
		PageSize: 3,
	})
	transporttest.Run(t, pipeDialer(srv), transporttest.WithServer(srv),
		transporttest.WithVersions("", mcp.Version20251125, mcp.Version20250618, mcp.Version20250326, mcp.Version20241105))
	if v := srv.Violations(); len(v) > 0 {
		t.Errorf("the Session broke the protocol: %q", v)
	}
}

// TestPipeModernOnlyServer runs the kit against a 2026-07-28-only server,
// without WithServer (as for a server out of reach).
func TestPipeModernOnlyServer(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{Versions: []string{mcp.Version20260728}})
	transporttest.Run(t, pipeDialer(srv), transporttest.WithVersions("", mcp.Version20260728))
}
