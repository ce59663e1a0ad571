package unixconn_test

import (
	"context"
	"net"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/tako-mcp/tako/examples/unixconn"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/transport/transporttest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestConnKit runs the Conn conformance kit, both eras, over a real Unix
// socket whose accepted end serves the reference server through the same
// Conn type, so the framing is checked in both directions.
func TestConnKit(t *testing.T) {
	lis, err := net.Listen("unix", filepath.Join(t.TempDir(), "mcp.sock"))
	if err != nil {
		t.Skipf("no Unix sockets here: %v", err)
	}
	defer lis.Close()
	srv := mcptest.NewReference(mcptest.Options{})
	transporttest.Run(t, func(t *testing.T) transport.Conn {
		c, err := unixconn.Dial(context.Background(), lis.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		nc, err := lis.Accept()
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- srv.Serve(context.Background(), unixconn.New(nc)) }()
		t.Cleanup(func() {
			c.Close()
			if err := <-done; err != nil {
				t.Errorf("Serve: %v", err)
			}
		})
		return c
	}, transporttest.WithServer(srv))
	if v := srv.Violations(); len(v) > 0 {
		t.Errorf("the client broke the protocol: %q", v)
	}
}
