package streamablehttp_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/tako-mcp/tako/internal/faultnet"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/streamablehttp"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/transport/transporttest"
)

// expire forgets every session, as a restarted server does: the next
// request with an old session id gets 404.
func (b *bridge) expire() {
	b.mu.Lock()
	old := b.sessions
	b.sessions = map[string]*bridgeSession{}
	b.mu.Unlock()
	for _, s := range old {
		s.pipe.Close()
	}
}

// TestFaults runs the fault matrix on a Session over Streamable HTTP, in
// both eras, against the reference server behind the test bridge of
// kit_test.go, which writes the server's raw bytes as SSE events and
// aborts the streams of a server end that died. The HTTP server listens
// through a faultnet.Listener: a kill cuts every connection and refuses
// new ones, a cut drops the connections of a server that lives on, a
// trickle slows every byte it writes.
func TestFaults(t *testing.T) {
	for _, tc := range []struct {
		name, version string
		opts          []transporttest.Option
	}{
		{"2026-07-28", "", []transporttest.Option{
			transporttest.FaultNotApplicable(transporttest.FaultSessionExpired, "2026-07-28 has no sessions: every request stands alone"),
			transporttest.FaultResends(),
		}},
		{"2025-11-25", mcp.Version20251125, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			transporttest.RunFaults(t, func(t *testing.T, f transporttest.Fault) transporttest.FaultTarget {
				srv := mcptest.NewReference(mcptest.Options{})
				trickle := f.Server.Trickle
				f.Server.Trickle = 0 // SSE events are whole messages; the wire trickles instead
				if f.Tool != "" {
					srv.FaultTool(f.Tool, f.Server)
				}
				lis, err := faultnet.Listen()
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				b := &bridge{srv: srv, ctx: ctx, sessions: map[string]*bridgeSession{}}
				hs := httptest.NewUnstartedServer(b)
				hs.Listener.Close()
				hs.Listener = lis
				hs.Start()
				t.Cleanup(func() {
					hs.CloseClientConnections()
					cancel()
					hs.Close()
					b.wg.Wait()
				})
				c, err := streamablehttp.Dial(context.Background(), hs.URL+"/mcp", &streamablehttp.Options{MaxMessageSize: f.MaxMessageSize})
				if err != nil {
					t.Fatal(err)
				}
				opts := f.Options
				opts.ProtocolVersion = tc.version
				s, err := transport.Connect(context.Background(), c, &opts)
				if err != nil {
					t.Fatalf("Connect: %v", err)
				}
				lis.Trickle(trickle)
				return transporttest.FaultTarget{Transport: s, Server: srv, Kill: lis.Kill, Cut: lis.Cut, Expire: b.expire}
			}, tc.opts...)
		})
	}
}
