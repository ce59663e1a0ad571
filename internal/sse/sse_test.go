package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/tako-mcp/tako/transport"
)

// readAll returns every event of r until Next fails, and that error.
func readAll(r *Reader) ([]Event, error) {
	var evs []Event
	for {
		ev, err := r.Next()
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

// TestCRLFSplitAcrossReadsIsNotABlankLine pins the "\r\n" line ending
// split between two reads: the "\r" ends one read, the "\n" starts the
// next, and together they end one line. Counted as a line end and then a
// blank line, the "\n" would dispatch the event early: "id: 1" would go
// out as an event of its own, without data, and the data that follows
// would come without its id, so that a reconnect would not send the right
// Last-Event-ID. Servers on Windows stacks (and many proxies) end SSE
// lines in CRLF, and a body read byte by byte or in odd pieces splits them.
func TestCRLFSplitAcrossReadsIsNotABlankLine(t *testing.T) {
	const stream = "id: 0f3c9a:1\r\n" +
		"event: message\r\n" +
		`data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-7","progress":1,"total":3}}` + "\r\n" +
		"\r\n" +
		": keep-alive\r\n" +
		"\r\n" +
		"id: 0f3c9a:2\r\n" +
		"retry: 1500\r\n" +
		`data: {"jsonrpc":"2.0","id":7,` + "\r\n" +
		`data: "result":{"content":[{"type":"text","text":"done"}]}}` + "\r\n" +
		"\r\n"
	want := []Event{
		{Type: "message", ID: "0f3c9a:1", HasID: true,
			Data: []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-7","progress":1,"total":3}}`)},
		{ID: "0f3c9a:2", HasID: true, Retry: 1500 * time.Millisecond, HasRetry: true,
			Data: []byte(`{"jsonrpc":"2.0","id":7,` + "\n" + `"result":{"content":[{"type":"text","text":"done"}]}}`)},
	}
	for _, tc := range []struct {
		name string
		body func() io.Reader
	}{
		{"whole", func() io.Reader { return strings.NewReader(stream) }},
		{"one byte", func() io.Reader { return iotest.OneByteReader(strings.NewReader(stream)) }},
		{"halves", func() io.Reader { return iotest.HalfReader(strings.NewReader(stream)) }},
	} {
		for _, idle := range []bool{false, true} {
			r := NewReader(tc.body(), 1<<20, idle)
			got, err := readAll(r)
			r.Release()
			if err != io.EOF {
				t.Errorf("%s, idle %v: the stream ended with %v, want io.EOF", tc.name, idle, err)
			}
			if len(got) != len(want) {
				t.Errorf("%s, idle %v: %d events, want %d:\n%s", tc.name, idle, len(got), len(want), describe(got))
				continue
			}
			for i := range want {
				if !sameEvent(got[i], want[i]) {
					t.Errorf("%s, idle %v: event %d is\n%s\nwant\n%s", tc.name, idle, i, describe(got[i:i+1]), describe(want[i:i+1]))
				}
			}
		}
	}
}

// TestKeepAlivesDoNotCountTowardTheEventCap pins the reset of the event
// size on a blank line outside an event: a keep-alive comment and the
// blank line after it belong to no event, so they must not count toward
// the next event's cap. Counted, they add up on a long-lived stream (the
// standalone GET stream gets one every few seconds for hours) until a
// small event fails with ErrMessageTooLarge and the stream is lost.
func TestKeepAlivesDoNotCountTowardTheEventCap(t *testing.T) {
	const data = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`
	const event = "id: 88\ndata: " + data + "\n\n"
	const max = 100
	if len(event) > max {
		t.Fatalf("the event takes %d bytes, past the cap of %d it is meant to fit", len(event), max)
	}
	stream := strings.Repeat(": keep-alive\n\n", 1000) + event
	for _, idle := range []bool{true, false} {
		r := NewReader(strings.NewReader(stream), max, idle)
		ev, err := r.Next()
		if err != nil {
			r.Release()
			t.Fatalf("idle %v: after 1000 keep-alives, a %d-byte event under a cap of %d: %v", idle, len(event), max, err)
		}
		if !ev.HasID || ev.ID != "88" || string(ev.Data) != data {
			t.Errorf("idle %v: got %s, want id 88 with %s", idle, describe([]Event{ev}), data)
		}
		if _, err := r.Next(); err != io.EOF {
			t.Errorf("idle %v: then %v, want io.EOF", idle, err)
		}
		r.Release()
	}

	// The cap still holds for an event's own bytes, comments within it
	// included.
	r := NewReader(strings.NewReader("id: 89\n"+strings.Repeat(": keep-alive\n", 10)+"data: x\n\n"), max, true)
	defer r.Release()
	if _, err := r.Next(); !errors.Is(err, transport.ErrMessageTooLarge) {
		t.Errorf("an event of %d bytes under a cap of %d: %v, want ErrMessageTooLarge", 7+130+9, max, err)
	}
}

func sameEvent(a, b Event) bool {
	return a.Type == b.Type && string(a.Data) == string(b.Data) && a.ID == b.ID && a.HasID == b.HasID &&
		a.Retry == b.Retry && a.HasRetry == b.HasRetry
}

func describe(evs []Event) string {
	var b strings.Builder
	for _, ev := range evs {
		b.WriteString("  {type " + ev.Type + ", id ")
		if ev.HasID {
			b.WriteString(ev.ID)
		} else {
			b.WriteString("(none)")
		}
		b.WriteString(", data " + string(ev.Data) + "}\n")
	}
	return b.String()
}
