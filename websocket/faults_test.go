package websocket_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"

	gorilla "github.com/gorilla/websocket"

	"github.com/tako-mcp/tako/internal/faultnet"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/transport/transporttest"
	"github.com/tako-mcp/tako/websocket"
)

// faultServerConn is the server end of a WebSocket for the fault matrix:
// the reference server reads and writes it directly (no bridge), and it
// is an mcptest.RawWriter whose raw bytes go out as one text frame, so
// that junk and an undecodable answer are real frames on the wire.
type faultServerConn struct {
	ws *gorilla.Conn
	mu sync.Mutex // one writer at a time, as gorilla requires
}

func (c *faultServerConn) Read(ctx context.Context) (*mcp.Message, error) {
	_, b, err := c.ws.ReadMessage()
	if err != nil {
		return nil, errors.Join(transport.ErrConnectionLost, err)
	}
	m, err := mcp.DecodeMessage(b)
	if err != nil {
		return nil, &transport.MessageError{Err: err}
	}
	return m, nil
}

func (c *faultServerConn) Write(ctx context.Context, m *mcp.Message) error {
	return c.WriteRaw(ctx, m.AppendJSON(nil))
}

func (c *faultServerConn) WriteRaw(_ context.Context, b []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.ws.WriteMessage(gorilla.TextMessage, b); err != nil {
		return errors.Join(transport.ErrConnectionLost, err)
	}
	return nil
}

func (c *faultServerConn) Close() error { return c.ws.Close() }

// TestFaults runs the fault matrix on a Session over a websocket.Conn, in
// both eras, against the reference server on a WebSocket server end of
// the test's own, which listens through a faultnet.Listener: a kill cuts
// every TCP connection and refuses new ones, a cut drops them (no close
// frame) while the server lives, a trickle slows every byte it writes.
func TestFaults(t *testing.T) {
	for _, v := range []string{"", mcp.Version20251125} {
		name := v
		if name == "" {
			name = "auto"
		}
		t.Run(name, func(t *testing.T) {
			transporttest.RunFaults(t, func(t *testing.T, f transporttest.Fault) transporttest.FaultTarget {
				srv := mcptest.NewReference(mcptest.Options{})
				trickle := f.Server.Trickle
				f.Server.Trickle = 0 // trickled at the net.Conn instead: a frame at a time would not be a trickle
				if f.Tool != "" {
					srv.FaultTool(f.Tool, f.Server)
				}
				lis, err := faultnet.Listen()
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				up := gorilla.Upgrader{Subprotocols: []string{websocket.Subprotocol}}
				hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					wg.Add(1)
					defer wg.Done()
					ws, err := up.Upgrade(w, r, nil)
					if err != nil {
						return
					}
					srv.Serve(ctx, &faultServerConn{ws: ws})
				})}
				served := make(chan struct{})
				go func() { defer close(served); hs.Serve(lis) }()
				t.Cleanup(func() {
					cancel()
					hs.Close()
					lis.Kill() // hijacked connections are not the http.Server's to close
					<-served
					wg.Wait()
				})
				conn, err := websocket.Dial(context.Background(), "ws://"+lis.Addr().String()+"/mcp", &websocket.Options{Keepalive: websocket.Keepalive{MaxMessageSize: f.MaxMessageSize}})
				if err != nil {
					t.Fatalf("Dial: %v", err)
				}
				opts := f.Options
				opts.ProtocolVersion = v
				s, err := transport.Connect(context.Background(), conn, &opts)
				if err != nil {
					t.Fatalf("Connect: %v", err)
				}
				lis.Trickle(trickle)
				return transporttest.FaultTarget{Transport: s, Server: srv, Kill: lis.Kill, Cut: lis.Cut}
			},
				transporttest.FaultNotApplicable(transporttest.FaultSessionExpired, "a WebSocket connection is the session: it cannot expire under a live connection"),
				transporttest.FaultTooLargeEndsConnection("a frame past the read limit ends the WebSocket connection (gorilla's read limit; websocket.Options.MaxMessageSize)"),
			)
		})
	}
}
