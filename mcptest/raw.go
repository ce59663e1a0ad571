package mcptest

import (
	"context"
	"io"
	"sync"

	"github.com/tako-mcp/tako/transport"
)

// RawStream is the writer of a byte-stream Conn that a test server also
// writes raw bytes to (the Junk fault): it serialises the two, so that a
// junk line never lands inside a message. Give it to the stream Conn as
// its writer (stdio.NewStreamConn(r, raw, ...)) and the Conn to WithRaw.
//
// The Conn must write each message with one Write call, as tako's stream
// Conns do on a writer that takes no deadline.
type RawStream struct {
	mu sync.Mutex
	W  io.Writer
}

// Write writes one message's bytes.
func (s *RawStream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.W.Write(p)
}

// WriteRaw writes b between two messages.
func (s *RawStream) WriteRaw(_ context.Context, b []byte) error {
	_, err := s.Write(b)
	return err
}

// holdRaw runs fn with the stream held: the writes fn makes are not
// interleaved with any other (the Trickle fault).
func (s *RawStream) holdRaw(fn func(write func([]byte) error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(func(b []byte) error { _, err := s.W.Write(b); return err })
}

// WithRaw returns conn with the RawWriter of s, for the Junk fault.
func WithRaw(conn transport.Conn, s *RawStream) transport.Conn {
	return &rawConnOf{Conn: conn, s: s}
}

type rawConnOf struct {
	transport.Conn
	s *RawStream
}

func (c *rawConnOf) WriteRaw(ctx context.Context, b []byte) error { return c.s.WriteRaw(ctx, b) }

func (c *rawConnOf) holdRaw(fn func(write func([]byte) error)) { c.s.holdRaw(fn) }
