// Package faultnet breaks a server's network connections on purpose, for
// tako's fault tests: a Listener whose accepted connections can be cut
// (both ends closed at once, no goodbye on the wire) or made to trickle
// (every byte the server writes goes out a few at a time, with a pause
// after each piece), and which can be killed (every connection cut and
// no new one accepted, as when the server's process dies).
package faultnet

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Piece is how many bytes a trickling connection writes at a time.
const Piece = 7

// Listener wraps a net.Listener. Its methods are safe for concurrent use.
type Listener struct {
	net.Listener
	trickle atomic.Int64 // the pause, in nanoseconds; 0: none

	mu     sync.Mutex
	conns  []net.Conn
	killed bool
}

// Listen listens on a free port of 127.0.0.1.
func Listen() (*Listener, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return &Listener{Listener: l}, nil
}

// ErrKilled is what Accept returns after Kill.
var ErrKilled = errors.New("faultnet: the server was killed")

// Accept accepts a connection and remembers it, so that Cut can close it.
// After Kill it refuses every connection (closing it at once), without
// returning an error, so that the server's Serve loop goes on until its
// owner stops it.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		if l.killed {
			l.mu.Unlock()
			c.Close()
			continue
		}
		l.conns = append(l.conns, c)
		l.mu.Unlock()
		return &conn{Conn: c, l: l}, nil
	}
}

// Cut closes every connection accepted so far; later ones are accepted.
func (l *Listener) Cut() {
	l.mu.Lock()
	conns := l.conns
	l.conns = nil
	l.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

// Kill cuts every connection and refuses new ones: a dead server.
func (l *Listener) Kill() {
	l.mu.Lock()
	l.killed = true
	l.mu.Unlock()
	l.Cut()
}

// Trickle makes every connection write in pieces of Piece bytes with
// pause after each, from now on; zero writes at full speed again.
func (l *Listener) Trickle(pause time.Duration) { l.trickle.Store(int64(pause)) }

type conn struct {
	net.Conn
	l *Listener
}

func (c *conn) Write(b []byte) (int, error) {
	pause := time.Duration(c.l.trickle.Load())
	if pause <= 0 {
		return c.Conn.Write(b)
	}
	n := 0
	for n < len(b) {
		m, err := c.Conn.Write(b[n:min(n+Piece, len(b))])
		n += m
		if err != nil {
			return n, err
		}
		time.Sleep(pause) // the trickle itself, not a wait for anything
	}
	return n, nil
}
