package mcpgrpc_test

import (
	"context"
	"net"
	"sync"
	"testing"

	"go.uber.org/goleak"

	mcpgrpc "github.com/tako-mcp/tako/grpc"
	"github.com/tako-mcp/tako/internal/testserve"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startBridge serves backend over gRPC on 127.0.0.1 and returns the address
// and the listener's wrapper, whose Drop closes every accepted connection.
func startBridge(t *testing.T, backend transport.Transport, opts *mcpgrpc.ServerOptions) (string, *dropListener) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lis := &dropListener{Listener: l}
	return testserve.GRPC(t, lis, backend, opts), lis
}

// referenceBackend is tako's in-process reference server reached through a
// Session, the way the bridge reaches any server.
func referenceBackend(t *testing.T, srv *mcptest.Server, h transport.Handlers) *transport.Session {
	t.Helper()
	ctx := context.Background()
	conn, wait := srv.Pipe(ctx)
	sess, err := transport.Connect(ctx, conn, &transport.Options{Handlers: h})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sess.Close()
		wait()
	})
	return sess
}

// dropListener remembers the connections it accepted so a test can cut
// them, as a network failure would.
type dropListener struct {
	net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func (l *dropListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.conns = append(l.conns, c)
	l.mu.Unlock()
	return c, nil
}

// Drop closes every connection accepted so far.
func (l *dropListener) Drop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		c.Close()
	}
	l.conns = nil
}
