package websocket_test

import (
	"context"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/transport/transporttest"
	"github.com/tako-mcp/tako/websocket"
)

// TestTransportKit runs the Transport kit on a Session over WebSocket, in
// both eras: a websocket.Conn dialled to a websocket.Handler whose backend
// is the reference server (three tools per page), in process.
func TestTransportKit(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{PageSize: 3})
	url := referenceBridge(t, srv, &websocket.Handler{})
	for _, v := range []string{"", mcp.Version20251125} {
		name := v
		if name == "" {
			name = "auto"
		}
		t.Run(name, func(t *testing.T) {
			transporttest.RunTransport(t, func(t *testing.T, h transport.Handlers) transport.Transport {
				s, err := transport.Connect(context.Background(), dial(t, url, nil), &transport.Options{ProtocolVersion: v, Handlers: h})
				if err != nil {
					t.Fatalf("Connect: %v", err)
				}
				return s
			}, transporttest.WithServer(srv))
		})
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Errorf("the Session broke the protocol: %q", v)
	}
}
