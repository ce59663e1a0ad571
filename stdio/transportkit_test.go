package stdio_test

import (
	"context"
	"os"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/transport/transporttest"
)

// TestTransportKit runs the Transport kit on a Session over a real
// subprocess (the test binary serving the reference server, three tools
// per page), in both eras. The server is in another process, so the kit
// runs without WithServer: that every page arrived is checked by the tool
// list being complete.
func TestTransportKit(t *testing.T) {
	for _, v := range []string{"", mcp.Version20251125} {
		name := v
		if name == "" {
			name = "auto"
		}
		t.Run(name, func(t *testing.T) {
			transporttest.RunTransport(t, func(t *testing.T, h transport.Handlers) transport.Transport {
				conn := startServer(t, "reference-paged", stdio.Options{})
				s, err := transport.Connect(context.Background(), conn, &transport.Options{ProtocolVersion: v, Handlers: h})
				if err != nil {
					t.Fatalf("Connect: %v", err)
				}
				return s
			})
		})
	}
}

// serveReferencePaged is the "reference-paged" server mode.
func serveReferencePaged() int {
	conn := stdio.NewStreamConn(os.Stdin, os.Stdout, stdio.StreamOptions{})
	if err := mcptest.NewReference(mcptest.Options{PageSize: 3}).Serve(context.Background(), conn); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	return 0
}
