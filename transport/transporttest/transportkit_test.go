package transporttest_test

import (
	"context"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/transport/transporttest"
)

// sessionDialer returns a RunTransport dial function: a Session, pinned to
// version ("" lets it probe), over a new pipe served by srv.
func sessionDialer(srv *mcptest.Server, version string) func(t *testing.T, h transport.Handlers) transport.Transport {
	pipe := pipeDialer(srv)
	return func(t *testing.T, h transport.Handlers) transport.Transport {
		s, err := transport.Connect(context.Background(), pipe(t), &transport.Options{ProtocolVersion: version, Handlers: h})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

// TestTransportKitSession runs the Transport kit on a Session over a pipe,
// in both eras, against a server that pages its tools.
func TestTransportKitSession(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{PageSize: 3})
	for _, v := range []string{"", mcp.Version20251125} {
		name := v
		if name == "" {
			name = "auto"
		}
		t.Run(name, func(t *testing.T) {
			transporttest.RunTransport(t, sessionDialer(srv, v), transporttest.WithServer(srv))
		})
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Errorf("the Session broke the protocol: %q", v)
	}
}

// TestTransportKitWithoutServer runs the kit as for a server out of reach:
// the checks that need the server's side are skipped, the rest hold.
func TestTransportKitWithoutServer(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{PageSize: 4})
	transporttest.RunTransport(t, sessionDialer(srv, ""))
}
