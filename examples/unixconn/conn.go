// Package unixconn shows how to plug a transport of one's own into tako at
// the message level: a transport.Conn over a Unix socket (any net.Conn,
// in fact) carrying newline-delimited JSON-RPC, in about a page. Given to
// transport.Connect it gets the whole protocol from tako's Session: the
// handshake in both eras, ids, server requests, progress, cancellation.
// conn_test.go checks it with the Conn conformance kit
// (transport/transporttest.Run).
//
// The same Conn serves either end, so the test also runs mcptest's
// reference server on the accepted side.
package unixconn

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// Conn is a transport.Conn over a net.Conn. As the Conn interface says,
// Read is called by one goroutine at a time, so the read side needs no
// lock; writes take one, so that concurrent messages never interleave.
type Conn struct {
	nc     net.Conn
	r      *bufio.Reader
	line   []byte // the message being read, kept across a Read its context ended
	skip   bool   // discarding the rest of a message over the cap
	wmu    sync.Mutex
	closed atomic.Bool
	once   sync.Once
}

// Dial connects to the Unix socket at path.
func Dial(ctx context.Context, path string) (*Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	return New(nc), nil
}

// New wraps nc; the Conn owns it from then on.
func New(nc net.Conn) *Conn {
	return &Conn{nc: nc, r: bufio.NewReader(nc)}
}

// Read returns the next message. A line that is not JSON-RPC, or one over
// transport.DefaultMaxMessageSize, is a *transport.MessageError, and the
// next Read goes on with the line after it.
func (c *Conn) Read(ctx context.Context) (*mcp.Message, error) {
	if ctx.Done() != nil {
		// net.Conn knows no contexts; a read deadline in the past is how
		// a blocked read is made to return.
		fired := make(chan struct{})
		stop := context.AfterFunc(ctx, func() {
			c.nc.SetReadDeadline(time.Unix(1, 0))
			close(fired)
		})
		defer func() {
			if !stop() {
				<-fired
				c.nc.SetReadDeadline(time.Time{})
			}
		}()
	}
	for {
		chunk, err := c.r.ReadSlice('\n')
		if !c.skip {
			c.line = append(c.line, chunk...)
		}
		if len(c.line) > transport.DefaultMaxMessageSize {
			c.line, c.skip = c.line[:0], true
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err() // a partial line stays in c.line
			}
			return nil, c.wireError("read", err)
		}
		if c.skip {
			c.skip = false
			return nil, &transport.MessageError{Err: transport.ErrMessageTooLarge}
		}
		// DecodeMessage aliases its input, and c.line is reused.
		line := bytes.TrimSpace(bytes.Clone(c.line))
		c.line = c.line[:0]
		if len(line) == 0 {
			continue
		}
		msg, err := mcp.DecodeMessage(line)
		if err != nil {
			return nil, &transport.MessageError{Err: err}
		}
		return msg, nil
	}
}

// Write sends one message as one line. A write blocked on a full socket
// ends when the Conn is closed; ctx is checked before writing, since a
// write cut short would break the framing for every later message.
func (c *Conn) Write(ctx context.Context, msg *mcp.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b := append(msg.AppendJSON(nil), '\n')
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.nc.Write(b); err != nil {
		return c.wireError("write", err)
	}
	return nil
}

// Close closes the socket, which unblocks a pending Read or Write. It is
// idempotent.
func (c *Conn) Close() error {
	var err error
	c.once.Do(func() {
		c.closed.Store(true)
		err = c.nc.Close()
	})
	return err
}

// wireError says whether we closed the connection or the peer went away,
// in the sentinels the engine acts on.
func (c *Conn) wireError(op string, err error) error {
	if c.closed.Load() {
		return fmt.Errorf("unixconn %s: %w", op, transport.ErrClosed)
	}
	return fmt.Errorf("unixconn %s: %w: %w", op, transport.ErrConnectionLost, err)
}
