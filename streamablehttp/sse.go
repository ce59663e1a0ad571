package streamablehttp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/r3labs/sse/v2"

	"github.com/tako-mcp/tako/transport"
)

// event is one Server-Sent Event, its fields parsed per the WHATWG rules.
type event struct {
	typ      string // "" means "message"
	data     []byte // data lines joined with \n; owned by the event
	id       string
	hasID    bool
	retry    time.Duration
	hasRetry bool
}

// eventReader splits an SSE stream into events. r3labs/sse's
// EventStreamReader finds the event boundaries (any of \n\n, \r\r, \r\n\r\n
// and their mixes) with a buffer cap; the fields are parsed here, since the
// library keeps that step private.
//
// One WHATWG rule the library does not follow: an event still being
// received when the stream ends must be discarded, not dispatched (a cut
// stream must not hand a half message to the engine). tail watches the raw
// bytes for that.
type eventReader struct {
	r    *sse.EventStreamReader
	tail *tailReader
	next []byte // an event read ahead at EOF, see Next
	have bool
}

func newEventReader(body io.Reader, maxEvent int) *eventReader {
	t := &tailReader{r: body}
	return &eventReader{r: sse.NewEventStreamReader(t, maxEvent), tail: t}
}

// Next returns the next complete event. At the end of the stream it returns
// io.EOF (or the read error); an event larger than the cap gives an error
// wrapping transport.ErrMessageTooLarge.
func (er *eventReader) Next() (event, error) {
	for {
		raw, err := er.read()
		if err != nil {
			if errors.Is(err, bufio.ErrTooLong) {
				return event{}, fmt.Errorf("sse event: %w", transport.ErrMessageTooLarge)
			}
			return event{}, err
		}
		if er.tail.eof {
			// The library dispatches whatever is buffered at EOF as an
			// event. Look ahead: if this was the last block and the stream
			// did not end with a blank line, the block is incomplete.
			nxt, nerr := er.r.ReadEvent()
			if nerr != nil {
				if !er.tail.endsWithBlankLine() {
					return event{}, io.ErrUnexpectedEOF
				}
			} else {
				er.next, er.have = append([]byte(nil), nxt...), true
			}
		}
		ev, ok := parseEvent(raw)
		if ok {
			return ev, nil
		}
	}
}

func (er *eventReader) read() ([]byte, error) {
	if er.have {
		er.have = false
		b := er.next
		er.next = nil
		return b, nil
	}
	return er.r.ReadEvent()
}

// parseEvent reads the fields of one event block. ok is false for a block
// that is only comments or blank lines.
func parseEvent(block []byte) (ev event, ok bool) {
	for len(block) > 0 {
		var line []byte
		i := bytes.IndexAny(block, "\r\n")
		if i < 0 {
			line, block = block, nil
		} else {
			line = block[:i]
			if block[i] == '\r' && i+1 < len(block) && block[i+1] == '\n' {
				i++
			}
			block = block[i+1:]
		}
		if len(line) == 0 || line[0] == ':' {
			continue // blank, or a comment (keep-alive)
		}
		ok = true
		field, value := line, []byte(nil)
		if c := bytes.IndexByte(line, ':'); c >= 0 {
			field, value = line[:c], line[c+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "event":
			ev.typ = string(value)
		case "data":
			if ev.data != nil {
				ev.data = append(ev.data, '\n')
			} else {
				ev.data = make([]byte, 0, len(value))
			}
			ev.data = append(ev.data, value...)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				ev.id, ev.hasID = string(value), true
			}
		case "retry":
			if n, err := strconv.ParseUint(string(value), 10, 31); err == nil {
				ev.retry, ev.hasRetry = time.Duration(n)*time.Millisecond, true
			}
		}
	}
	return ev, ok
}

// tailReader remembers whether the stream ended and its last four bytes.
type tailReader struct {
	r    io.Reader
	last [4]byte
	n    int
	eof  bool
}

func (t *tailReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	for _, b := range p[:n] {
		t.last[0], t.last[1], t.last[2], t.last[3] = t.last[1], t.last[2], t.last[3], b
		t.n++
	}
	if err != nil {
		t.eof = true
	}
	return n, err
}

func (t *tailReader) endsWithBlankLine() bool {
	if t.n == 0 {
		return true
	}
	l := t.last[:]
	if t.n < 4 {
		l = l[4-t.n:]
	}
	return bytes.HasSuffix(l, []byte("\n\n")) || bytes.HasSuffix(l, []byte("\r\r")) ||
		bytes.HasSuffix(l, []byte("\n\r\n")) || bytes.HasSuffix(l, []byte("\r\n\r\n"))
}
