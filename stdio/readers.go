package stdio

import (
	"bufio"
	"io"
	"sync"
)

// Read buffers lent while a message arrives.
//
// A session spends its life waiting for the server's next message, and a
// host keeps one per server. The 4 KiB read buffer was over a third of an
// idle stdio session's heap (bench/'s sessions suite: 11.3 KB a session
// at 1,000, go-sdk's 8.4). So where the framer can wait for its source to
// have something to read without reading it (a server's stdout on Linux,
// wait_linux.go), it takes a buffer only once there is, and gives it back
// here as soon as everything read has been handled.
//
// One list under a mutex, not a sync.Pool: a pool is per P, and a reading
// goroutine that resumes on another P than the one it gave its buffer to
// finds that P's pool empty, so a busy sequential session allocated a new
// buffer every few calls (see readBufferSize). From this list a session
// that is the only one busy gets back the buffer it gave, every time.
var spareReaders struct {
	sync.Mutex
	free []*bufio.Reader
}

// maxSpareReaders bounds the list: enough for the sessions busy at once in
// a host, so that a burst finds buffers, and little memory (64 KiB) when
// every session is idle.
const maxSpareReaders = 16

// takeReader returns a reader of r with an empty readBufferSize buffer,
// a spare one if there is one.
func takeReader(r io.Reader) *bufio.Reader {
	spareReaders.Lock()
	n := len(spareReaders.free)
	if n == 0 {
		spareReaders.Unlock()
		return bufio.NewReaderSize(r, readBufferSize)
	}
	br := spareReaders.free[n-1]
	spareReaders.free[n-1] = nil
	spareReaders.free = spareReaders.free[:n-1]
	spareReaders.Unlock()
	br.Reset(r)
	return br
}

// giveReader puts br, whose buffered bytes have all been handled, on the
// list, or leaves it to the collector if the list is full.
func giveReader(br *bufio.Reader) {
	br.Reset(nil) // hold no reference to a Conn's stream
	spareReaders.Lock()
	if len(spareReaders.free) < maxSpareReaders {
		spareReaders.free = append(spareReaders.free, br)
	}
	spareReaders.Unlock()
}
