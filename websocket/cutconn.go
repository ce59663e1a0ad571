package websocket

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Cutting a write short. A Write whose context ends while its frame is on
// the wire must return at once (Conn.Write). The only way to interrupt a
// write blocked in the kernel is the socket's write deadline, set from
// another goroutine. But gorilla sets that deadline again before every
// frame it writes, to the deadline it holds itself (conn.go, write), and a
// message larger than its write buffer goes out as several frames: a
// deadline set before the first frame, or between two, is undone, and the
// Write then blocks until its context's deadline, or for ever if it has
// none. So every connection under a gorilla Conn is a cutConn, whose write
// deadline, once cut, stays in the past whatever gorilla sets.

// past is a write deadline that has passed.
var past = time.Unix(1, 0)

// cutConn is the TCP connection under a gorilla Conn (under its TLS layer
// for wss, which sets deadlines through it).
type cutConn struct {
	net.Conn

	mu  sync.Mutex
	cut bool
}

// SetWriteDeadline sets t, or a past deadline while the connection is cut.
func (c *cutConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut {
		t = past
	}
	return c.Conn.SetWriteDeadline(t)
}

// SetDeadline sets both deadlines, the write one as SetWriteDeadline does.
func (c *cutConn) SetDeadline(t time.Time) error {
	if err := c.Conn.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

// setCut cuts the connection's writes (a blocked write returns at once, and
// every later one fails), or lifts the cut: gorilla sets its own deadline
// again before the next frame.
func (c *cutConn) setCut(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut = on
	if on {
		c.Conn.SetWriteDeadline(past)
	}
}

// cutConnOf finds the cutConn under ws, nil if there is none (a dial
// function that returned a TLS connection of its own, say).
func cutConnOf(ws *websocket.Conn) *cutConn {
	nc := ws.NetConn()
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	cc, _ := nc.(*cutConn)
	return cc
}

// cuttableDial wraps every connection dial makes (nil means a net.Dialer)
// in a cutConn.
func cuttableDial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &cutConn{Conn: c}, nil
	}
}

// cuttableWriter hands gorilla's Upgrader the hijacked connection wrapped
// in a cutConn.
type cuttableWriter struct{ http.ResponseWriter }

func (w cuttableWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("websocket: the response cannot be hijacked")
	}
	c, brw, err := h.Hijack()
	if err != nil {
		return nil, nil, err
	}
	return &cutConn{Conn: c}, brw, nil
}
