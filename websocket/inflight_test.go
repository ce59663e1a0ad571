package websocket_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/websocket"
)

// slowWriteBackend is a backend Conn whose Write of a "slow" request
// returns only when released, as a Streamable HTTP Conn's Write waits for
// a server that answers a long tool call with one JSON body at the end;
// every other request is answered at once.
type slowWriteBackend struct {
	release chan struct{}
	out     chan *mcp.Message
	once    sync.Once
	closed  chan struct{}
}

func (b *slowWriteBackend) Write(ctx context.Context, m *mcp.Message) error {
	if m.Method == "slow" {
		select {
		case <-b.release:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	if m.IsRequest() {
		select {
		case b.out <- &mcp.Message{ID: m.ID, Result: []byte(`{"method":"` + m.Method + `"}`)}:
		case <-b.closed:
		}
	}
	return nil
}

func (b *slowWriteBackend) Read(ctx context.Context) (*mcp.Message, error) {
	select {
	case m := <-b.out:
		return m, nil
	case <-b.closed:
		return nil, transport.ErrClosed
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

func (b *slowWriteBackend) Close() error {
	b.once.Do(func() { close(b.closed) })
	return nil
}

// TestBridgeSlowRequestHoldsUpNoOther: a request whose write to the
// backend waits (a long tool call to an HTTP server) does not hold up the
// client's next request, which is answered while the first still waits.
// Before, the bridge wrote the client's messages one after another, and
// every later message waited for the slow one's answer.
func TestBridgeSlowRequestHoldsUpNoOther(t *testing.T) {
	b := &slowWriteBackend{release: make(chan struct{}), out: make(chan *mcp.Message, 4), closed: make(chan struct{})}
	url := startBridge(t, &websocket.Handler{Backend: func(context.Context) (transport.Conn, error) { return b, nil }})
	c := dial(t, url, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Write(ctx, &mcp.Message{ID: mcp.Int64ID(1), Method: "slow"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(ctx, &mcp.Message{ID: mcp.Int64ID(2), Method: "fast"}); err != nil {
		t.Fatal(err)
	}
	m, err := c.Read(ctx)
	if err != nil || m.ID != mcp.Int64ID(2) {
		t.Fatalf("while the slow request waits: %v %v, want the answer to request 2", m, err)
	}
	close(b.release)
	if m, err := c.Read(ctx); err != nil || m.ID != mcp.Int64ID(1) {
		t.Fatalf("after the release: %v %v, want the answer to request 1", m, err)
	}
}
