// Package syncbuf has Buffer, a bytes.Buffer that may be written and read
// at once: what a test hands a logger, or a command as its stdout, while
// goroutines the test does not control write to it and the test reads it.
//
// It is for the tests of this module, which kept a copy each before; it is
// a package of its own, with nothing of tako's below it, so that the tests
// of any package can import it without an import cycle.
package syncbuf

import (
	"bytes"
	"sync"
)

// A Buffer is a bytes.Buffer behind a mutex. The zero value is an empty
// buffer ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p to the buffer. It never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what has been written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
