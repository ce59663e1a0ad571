// Package inbox is the one hand-off between a Conn's reading goroutines and
// the engine: a Conn that reads on goroutines of its own (stdio's pipe
// reader, a WebSocket's frame reader, Streamable HTTP's stream goroutines)
// gives each result to an Inbox, which holds it for Conn.Read until the
// Session asks for pushes (transport.Pusher), and from then on hands it to
// the Session's deliver function directly.
//
// It is internal rather than part of transport: the Pusher contract is the
// public seam, and a user's Conn meets it with Read alone. What is here is
// the bookkeeping that makes the contract hold (each result once, in order,
// the final error exactly once and last, nothing after it, whichever of
// Push and the end of reading comes first), kept in one place so that the
// three Conns cannot drift apart, and free to change with the profile.
package inbox

import (
	"context"
	"sync"

	"github.com/tako-mcp/tako/mcp"
)

// Inbox holds a Conn's incoming results. The zero value is not ready: call
// Init once, before any other method.
//
// A result is a message, or an error for one message (what Read returns
// without ending the connection), given with Give or Put; the connection's
// final error is given with End. Until Push, Read returns them in order,
// then, once End has been called and nothing is left, the final error. After
// Push, each is passed to the deliver function at once, and the final error
// once, last.
//
// Calls of deliver are serialized by the Inbox's lock, which is held while
// deliver runs: deliver must not call back into the Inbox (the Session's
// never does; it closes the Conn on a goroutine of its own).
type Inbox struct {
	mu      sync.Mutex
	deliver func(*mcp.Message, error) // set by Push
	queue   []result                  // for Read, until Push
	final   error                     // set by End
	ended   bool
	stopErr error // set by Stop: what Read returns from then on

	wake    chan struct{} // cap 1: Read may find something
	handoff chan result   // Give -> Read, unbuffered
	pushed  chan struct{} // closed by Push
	stopped chan struct{} // closed by Stop
}

type result struct {
	msg *mcp.Message
	err error
}

// Init makes the Inbox ready.
func (b *Inbox) Init() {
	b.wake = make(chan struct{}, 1)
	b.handoff = make(chan result)
	b.pushed = make(chan struct{})
	b.stopped = make(chan struct{})
}

// refusing reports whether results are no longer taken: the connection has
// ended, or the Conn is closing. Called with mu held.
func (b *Inbox) refusing() bool { return b.ended || b.stopErr != nil }

// Give hands over one result and, until Push, waits for Read to take it,
// so that a Conn whose peer outruns its reader holds one message, not a
// queue of them. It reports false, and drops the result, when the Conn is
// closing (Stop) or reading has ended (End) first. Give is for a Conn with
// one reading goroutine; Put is for one with several.
func (b *Inbox) Give(msg *mcp.Message, err error) bool {
	b.mu.Lock()
	if b.refusing() {
		b.mu.Unlock()
		return false
	}
	if b.deliver != nil {
		b.deliver(msg, err)
		b.mu.Unlock()
		return true
	}
	b.mu.Unlock()
	select {
	case b.handoff <- result{msg, err}:
		return true
	case <-b.pushed:
		return b.Give(msg, err)
	case <-b.stopped:
		return false
	}
}

// Put hands over one result without waiting: until Push it is queued for
// Read. It is for Conns whose results come from several goroutines, or
// from a caller's goroutine, none of which may wait for a reader (a
// Streamable HTTP answer that is an error status is queued by the Write
// that met it). Once the Conn is closing or reading has ended, the result
// is dropped.
func (b *Inbox) Put(msg *mcp.Message, err error) {
	b.mu.Lock()
	switch {
	case b.refusing():
	case b.deliver != nil:
		b.deliver(msg, err)
	default:
		b.queue = append(b.queue, result{msg, err})
	}
	b.mu.Unlock()
	b.signal()
}

// End records the error that ends the connection (what Read returns after
// the last result): with Push, deliver gets it now, once, and nothing more
// after it. Only the first End counts.
func (b *Inbox) End(err error) {
	b.mu.Lock()
	if !b.ended {
		b.ended = true
		b.final = err
		if b.deliver != nil {
			b.deliver(nil, err)
		}
	}
	b.mu.Unlock()
	b.signal()
}

// Stop makes Read return err from now on and drops what is queued; a Give
// waiting for Read returns false, and later results are dropped. It is for
// Close (err wraps transport.ErrClosed) or a Conn that knows itself dead
// before its reader does. The final error still comes from End. Only the
// first Stop counts.
func (b *Inbox) Stop(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopErr != nil {
		return
	}
	b.stopErr = err
	b.queue = nil
	close(b.stopped)
}

// Close is Stop and End with the same error, for a Conn whose reading
// ends when it is closed.
func (b *Inbox) Close(err error) {
	b.Stop(err)
	b.End(err)
}

// Push implements transport.Pusher for the Conn: what is queued goes to
// deliver first, in order, then (if reading has ended) the final error;
// from then on every result goes to deliver as it comes. The Session calls
// it once, before it would call Read, and never calls Read then.
func (b *Inbox) Push(deliver func(*mcp.Message, error)) {
	b.mu.Lock()
	b.deliver = deliver
	for _, r := range b.queue {
		deliver(r.msg, r.err)
	}
	b.queue = nil
	if b.ended {
		deliver(nil, b.final)
	}
	b.mu.Unlock()
	close(b.pushed)
}

// Read returns the next result: a message, an error for one message, or,
// once reading has ended and nothing is left, the final error (every time
// it is called). After Stop it returns Stop's error at once.
func (b *Inbox) Read(ctx context.Context) (*mcp.Message, error) {
	for {
		b.mu.Lock()
		switch {
		case b.stopErr != nil:
			err := b.stopErr
			b.mu.Unlock()
			return nil, err
		case len(b.queue) > 0:
			r := b.queue[0]
			b.queue[0] = result{}
			b.queue = b.queue[1:]
			more := len(b.queue) > 0
			b.mu.Unlock()
			if more {
				b.signal()
			}
			return r.msg, r.err
		case b.ended:
			err := b.final
			b.mu.Unlock()
			return nil, err
		}
		b.mu.Unlock()
		select {
		case r := <-b.handoff:
			return r.msg, r.err
		case <-b.wake:
		case <-b.stopped:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (b *Inbox) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}
