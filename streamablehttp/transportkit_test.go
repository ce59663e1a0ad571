package streamablehttp_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/streamablehttp"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/transport/transporttest"
)

// TestTransportKit runs the Transport kit on a Session over Streamable
// HTTP, in both eras, against the reference server (three tools per page)
// behind the test bridge of kit_test.go.
func TestTransportKit(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{PageSize: 3})
	ctx, cancel := context.WithCancel(context.Background())
	b := &bridge{srv: srv, ctx: ctx, sessions: map[string]*bridgeSession{}}
	hs := httptest.NewServer(b)
	defer func() {
		hs.CloseClientConnections()
		cancel()
		hs.Close()
		b.wg.Wait()
	}()
	for _, v := range []string{"", mcp.Version20251125} {
		name := v
		if name == "" {
			name = "auto"
		}
		t.Run(name, func(t *testing.T) {
			transporttest.RunTransport(t, func(t *testing.T, h transport.Handlers) transport.Transport {
				c, err := streamablehttp.Dial(context.Background(), hs.URL+"/mcp", nil)
				if err != nil {
					t.Fatal(err)
				}
				s, err := transport.Connect(context.Background(), c, &transport.Options{ProtocolVersion: v, Handlers: h})
				if err != nil {
					t.Fatalf("Connect: %v", err)
				}
				return s
			}, transporttest.WithServer(srv))
		})
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Errorf("the client broke the protocol: %q", v)
	}
}
