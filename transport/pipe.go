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
// change a message after writing it. Closing either end closes both: the
// end that closed then fails with an error wrapping ErrClosed, the other
// (whose peer went away) with one wrapping ErrConnectionLost, as the Conn
// contract asks.
func Pipe() (client, server Conn) {
	shared := &pipeShared{done: make(chan struct{})}
	ab := make(chan *mcp.Message, 64)
	ba := make(chan *mcp.Message, 64)
	return &pipeConn{in: ba, out: ab, shared: shared}, &pipeConn{in: ab, out: ba, shared: shared}
}

type pipeShared struct {
	once   sync.Once
	done   chan struct{}
	closer *pipeConn // the end that closed; set before done is closed
}

// closedErr is the error of an operation on p after the pipe closed.
func (p *pipeConn) closedErr(op string) error {
	if p.shared.closer != p {
		return fmt.Errorf("pipe %s: the other end closed: %w", op, ErrConnectionLost)
	}
	return fmt.Errorf("pipe %s: %w", op, ErrClosed)
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
		return nil, p.closedErr("read")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *pipeConn) Write(ctx context.Context, m *mcp.Message) error {
	select {
	case <-p.shared.done:
		return p.closedErr("write")
	default:
	}
	// The other end reads the message after Write has returned, and a
	// Conn's writer may reuse it then (the Conn contract): hand over a
	// copy.
	cp := *m
	select {
	case p.out <- &cp:
		return nil
	case <-p.shared.done:
		return p.closedErr("write")
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *pipeConn) Close() error {
	p.shared.once.Do(func() {
		p.shared.closer = p
		close(p.shared.done)
	})
	return nil
}
