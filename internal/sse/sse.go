// Package sse reads Server-Sent Events for the Streamable HTTP transport
// (streamablehttp), in one pass. It is a package of its own so that bench/
// can run the same events through it and through
// github.com/r3labs/sse/v2, the reader the project first used (see the
// design notes in the repository's README).
package sse

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/tako-mcp/tako/internal/blocks"
	"github.com/tako-mcp/tako/transport"
)

// Event is one Server-Sent Event, its fields parsed per the WHATWG rules.
type Event struct {
	Type     string // "" means "message"
	Data     []byte // data lines joined with \n; owned by the event
	ID       string
	HasID    bool
	Retry    time.Duration
	HasRetry bool
}

// Reader splits an SSE stream into events, reading it line by line
// in one pass: each byte is looked at once, so an event of n bytes costs
// O(n) however the body arrives (a scanner that looks for the blank line
// from the start of its buffer at every read costs O(n²) on a large event
// that comes in 64 KiB reads, which is how the budget hands them out).
//
// The read buffer is pooled and given back by Release. A data line that
// fits the buffer is copied once, to a slice of its exact size. A long one
// is gathered in pooled blocks and, once its end is seen, copied into one
// slice of its exact size, which becomes the event's data as it is: a
// slice grown by append would allocate about five times its final size
// on the way (append grows large slices by a quarter), and a message of
// tens of megabytes would cost hundreds.
//
// Lines end in \r\n, \n or \r (WHATWG). An event still being received when
// the stream ends is discarded, not dispatched: a cut stream must not hand
// a half message to the engine.
type Reader struct {
	r        io.Reader
	buf      *[]byte
	pos, end int
	err      error       // the read error, returned once buf is drained
	line     []byte      // a line that did not end within buf
	blocks   blocks.List // a long line's bytes, once line would pass bigLine
	skipLF   bool        // the last line ended in \r: a \n next is part of it
	max      int         // the most bytes one event may take on the wire
	size     int         // bytes of the current event so far
	pending  bool        // the current event has a field
	ev       Event
	// idle: the stream is long-lived (the standalone GET stream), and
	// waits for its next event with a small buffer (fill).
	idle bool
}

// readBufSize is the read buffer: a few TCP segments, enough for most
// messages in one read.
const readBufSize = 16 << 10

var readBufs = sync.Pool{New: func() any { b := make([]byte, readBufSize); return &b }}

// idleReadSize is the buffer a long-lived stream waits with between events.
const idleReadSize = 512

var idleBufs = sync.Pool{New: func() any { b := make([]byte, idleReadSize); return &b }}

// bigLine is the size from which a data line's own buffer becomes the
// event's data instead of being copied.
const bigLine = 64 << 10

// Init makes er a reader of body whose events may take at most maxEvent
// bytes on the wire. idle says the stream may sit for a long time between
// events (the standalone GET stream): it then waits for each with a small
// buffer (fill).
func (er *Reader) Init(body io.Reader, maxEvent int, idle bool) {
	*er = Reader{r: body, max: maxEvent, idle: idle}
	if !idle {
		er.buf = readBufs.Get().(*[]byte)
	}
}

// NewReader returns a reader of body; see Init.
func NewReader(body io.Reader, maxEvent int, idle bool) *Reader {
	er := new(Reader)
	er.Init(body, maxEvent, idle)
	return er
}

// fill reads the next bytes into the read buffer. A long-lived stream
// between events gives the buffer back and waits with a small one: the
// standalone GET stream of every idle session held 16 KiB for nothing
// (16 MiB for a thousand sessions).
func (er *Reader) fill() (int, error) {
	if !er.idle || er.size > 0 || len(er.line) > 0 || er.blocks.Len() > 0 {
		if er.buf == nil {
			er.buf = readBufs.Get().(*[]byte)
		}
		return er.r.Read(*er.buf)
	}
	if er.buf != nil {
		readBufs.Put(er.buf)
		er.buf = nil
	}
	small := idleBufs.Get().(*[]byte)
	n, err := er.r.Read(*small)
	er.buf = readBufs.Get().(*[]byte)
	copy(*er.buf, (*small)[:n])
	idleBufs.Put(small)
	return n, err
}

// Release gives the read buffer back; er must not be used after.
func (er *Reader) Release() {
	er.blocks.Reset()
	if er.buf != nil {
		readBufs.Put(er.buf)
		er.buf = nil
	}
}

// Next returns the next complete event. At the end of the stream it returns
// io.EOF (io.ErrUnexpectedEOF if an event was cut off, or the read error);
// an event larger than the cap gives an error wrapping
// transport.ErrMessageTooLarge.
func (er *Reader) Next() (Event, error) {
	for {
		if er.pos == er.end {
			if er.err != nil {
				return Event{}, er.endErr()
			}
			n, err := er.fill()
			er.pos, er.end, er.err = 0, n, err
			if n == 0 && err == nil {
				er.err = io.ErrNoProgress
			}
			continue
		}
		chunk := (*er.buf)[er.pos:er.end]
		if er.skipLF {
			er.skipLF = false
			if chunk[0] == '\n' {
				er.pos++
				er.size++
				continue
			}
		}
		i := lineEnd(chunk)
		if i < 0 {
			if err := er.grow(len(chunk)); err != nil {
				return Event{}, err
			}
			er.carry(chunk)
			er.pos = er.end
			continue
		}
		n := i + 1
		if chunk[i] == '\r' {
			if i+1 < len(chunk) {
				if chunk[i+1] == '\n' {
					n++
				}
			} else {
				er.skipLF = true
			}
		}
		if err := er.grow(n); err != nil {
			return Event{}, err
		}
		er.pos += n
		line, carried := chunk[:i], false
		if er.blocks.Len() > 0 {
			er.line = er.blocks.Join(line)
			line, carried = er.line, true
		} else if len(er.line) > 0 {
			er.line = append(er.line, line...)
			line, carried = er.line, true
		}
		done := er.field(line, carried)
		if cap(er.line) > bigLine {
			er.line = nil // a long line's buffer is not kept for the next
		} else if er.line != nil {
			er.line = er.line[:0]
		}
		if done {
			ev := er.ev
			er.ev, er.pending, er.size = Event{}, false, 0
			return ev, nil
		}
	}
}

// grow counts n more bytes of the current event against the cap.
func (er *Reader) grow(n int) error {
	er.size += n
	if er.size > er.max {
		er.err = fmt.Errorf("sse event: %w", transport.ErrMessageTooLarge)
		er.pos, er.end = 0, 0
		return er.err
	}
	return nil
}

func (er *Reader) endErr() error {
	if er.err == io.EOF && (er.pending || len(er.line) > 0 || er.blocks.Len() > 0) {
		return io.ErrUnexpectedEOF
	}
	return er.err
}

// carry keeps b, the part of a line that did not end in the read buffer.
func (er *Reader) carry(b []byte) {
	if er.blocks.Len() == 0 && len(er.line)+len(b) <= bigLine {
		er.line = append(er.line, b...)
		return
	}
	if er.blocks.Len() == 0 {
		er.blocks.Write(er.line)
		er.line = er.line[:0]
	}
	er.blocks.Write(b)
}

// lineEnd returns the index of the first \r or \n in b, or -1.
func lineEnd(b []byte) int {
	for i, c := range b {
		if c == '\n' || c == '\r' {
			return i
		}
	}
	return -1
}

// field applies one line to the current event and reports whether the
// line ended it. carried says line is er.line, whose buffer a large data
// line may keep.
func (er *Reader) field(line []byte, carried bool) bool {
	if len(line) == 0 {
		if er.pending {
			return true
		}
		er.size = 0
		return false
	}
	if line[0] == ':' {
		return false // a comment (keep-alive)
	}
	er.pending = true
	ev := &er.ev
	name, value := line, []byte(nil)
	if c := bytes.IndexByte(line, ':'); c >= 0 {
		name, value = line[:c], line[c+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "event":
		ev.Type = string(value)
	case "data":
		switch {
		case ev.Data != nil:
			ev.Data = append(append(ev.Data, '\n'), value...)
		case carried && cap(line) >= bigLine:
			ev.Data = value
			er.line = nil
		default:
			ev.Data = append(make([]byte, 0, len(value)), value...)
		}
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			ev.ID, ev.HasID = string(value), true
		}
	case "retry":
		if n, err := strconv.ParseUint(string(value), 10, 31); err == nil {
			ev.Retry, ev.HasRetry = time.Duration(n)*time.Millisecond, true
		}
	}
	return false
}
