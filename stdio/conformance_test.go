package stdio_test

import (
	"context"
	"io"
	"os"
	"testing"

	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/transport/transporttest"
)

// TestStreamConnConformance runs the transport kit, both eras, over a pair
// of StreamConns on io.Pipes: the client end against mcptest's reference
// server, which itself reads and writes through a StreamConn, so the
// framing is checked in both directions.
func TestStreamConnConformance(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{})
	transporttest.Run(t, func(t *testing.T) transport.Conn {
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		client := stdio.NewStreamConn(cr, cw, stdio.StreamOptions{})
		server := stdio.NewStreamConn(sr, sw, stdio.StreamOptions{})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- srv.Serve(ctx, server) }()
		t.Cleanup(func() {
			cancel()
			_ = client.Close()
			if err := <-done; err != nil {
				t.Errorf("Serve: %v", err)
			}
		})
		return client
	}, transporttest.WithServer(srv))
	if v := srv.Violations(); len(v) > 0 {
		t.Errorf("violations seen by the server: %q", v)
	}
}

// TestProcessConnConformance runs the kit, both eras, over a real
// subprocess: the test binary serving the reference server on its own
// stdin and stdout with NewStreamConn.
func TestProcessConnConformance(t *testing.T) {
	transporttest.Run(t, func(t *testing.T) transport.Conn {
		return startServer(t, "reference", stdio.Options{})
	})
}

// serveReference is the "reference" server mode.
func serveReference() int {
	conn := stdio.NewStreamConn(os.Stdin, os.Stdout, stdio.StreamOptions{})
	if err := mcptest.NewReference(mcptest.Options{}).Serve(context.Background(), conn); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	return 0
}
