package transport

import (
	"context"
	"fmt"
	"sync"

	"github.com/tako-mcp/tako/mcp"
)

// Pipe returns two connected in-memory Conns: what one writes, the other
// reads. It serves tests and in-process servers (mcptest), and benchmarks of
// the engine without a wire. Messages pass by pointer, so a writer must not
// change a message after writing it. Closing either end closes both.
func Pipe() (client, server Conn) {
	shared := &pipeShared{done: make(chan struct{})}
	ab := make(chan *mcp.Message, 64)
	ba := make(chan *mcp.Message, 64)
	return &pipeConn{in: ba, out: ab, shared: shared}, &pipeConn{in: ab, out: ba, shared: shared}
}

type pipeShared struct {
	once sync.Once
	done chan struct{}
}

type pipeConn struct {
	in     <-chan *mcp.Message
	out    chan<- *mcp.Message
	shared *pipeShared
}

func (p *pipeConn) Read(ctx context.Context) (*mcp.Message, error) {
	// A message already queued wins over a close, so that nothing written
	// before Close is lost.
	select {
	case m := <-p.in:
		return m, nil
	default:
	}
	select {
	case m := <-p.in:
		return m, nil
	case <-p.shared.done:
		return nil, fmt.Errorf("pipe read: %w", ErrClosed)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *pipeConn) Write(ctx context.Context, m *mcp.Message) error {
	select {
	case <-p.shared.done:
		return fmt.Errorf("pipe write: %w", ErrClosed)
	default:
	}
	select {
	case p.out <- m:
		return nil
	case <-p.shared.done:
		return fmt.Errorf("pipe write: %w", ErrClosed)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *pipeConn) Close() error {
	p.shared.once.Do(func() { close(p.shared.done) })
	return nil
}
