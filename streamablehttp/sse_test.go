package streamablehttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tako-mcp/tako/internal/blocks"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

func readAll(t *testing.T, stream string, max int) ([]event, error) {
	t.Helper()
	er := newEventReader(strings.NewReader(stream), max)
	var evs []event
	for {
		ev, err := er.Next()
		if err != nil {
			if err == io.EOF {
				return evs, nil
			}
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func TestSSEFields(t *testing.T) {
	stream := ": keep-alive comment\r\n\r\n" +
		"id: e1\r\nretry: 500\r\ndata: \r\n\r\n" + // a priming event, CRLF
		"event: message\ndata: {\"a\":\ndata: 1}\n\n" + // two data lines
		"data:no-space\rid: e2\r\r" + // CR alone
		"event: endpoint\ndata: /messages?sessionId=x\n\n"
	evs, err := readAll(t, stream, 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 4 {
		t.Fatalf("got %d events, want 4: %+v", len(evs), evs)
	}
	if !evs[0].hasID || evs[0].id != "e1" || evs[0].retry != 500*time.Millisecond || len(evs[0].data) != 0 {
		t.Errorf("priming event: %+v", evs[0])
	}
	if got := string(evs[1].data); got != "{\"a\":\n1}" {
		t.Errorf("multi-line data %q", got)
	}
	if got := string(evs[2].data); got != "no-space" || evs[2].id != "e2" {
		t.Errorf("CR-only event: %+v", evs[2])
	}
	if evs[3].typ != "endpoint" {
		t.Errorf("event type %q", evs[3].typ)
	}
}

// TestSSEIncompleteEventAtEOF: an event cut off by the end of the stream
// (no blank line after it) is not dispatched.
func TestSSEIncompleteEventAtEOF(t *testing.T) {
	evs, err := readAll(t, "data: {\"whole\":1}\n\ndata: {\"half\":", 1<<16)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("err = %v, want io.ErrUnexpectedEOF", err)
	}
	if len(evs) != 1 || string(evs[0].data) != `{"whole":1}` {
		t.Errorf("events %+v, want only the whole one", evs)
	}
}

// TestSSELargeEvent: a 16 MiB event passes under a larger cap, and one
// over the cap gives ErrMessageTooLarge.
func TestSSELargeEvent(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 16<<20)
	stream := "data: " + string(big) + "\n\n"
	evs, err := readAll(t, stream, 17<<20)
	if err != nil || len(evs) != 1 || len(evs[0].data) != len(big) {
		t.Fatalf("16 MiB event: err %v, %d events", err, len(evs))
	}
	_, err = readAll(t, stream, 1<<20)
	if !errors.Is(err, transport.ErrMessageTooLarge) {
		t.Errorf("over the cap: err = %v, want ErrMessageTooLarge", err)
	}
}

func TestEncodeHeaderValue(t *testing.T) {
	for in, want := range map[string]string{
		"us-west1":          "us-west1",
		"us west 1":         "us west 1",
		"":                  "",
		" lead":             "=?base64?IGxlYWQ=?=",
		"trail ":            "=?base64?dHJhaWwg?=",
		"line\nbreak":       "=?base64?bGluZQpicmVhaw==?=",
		"\ttab":             "=?base64?CXRhYg==?=",
		"日本":                "=?base64?5pel5pys?=",
		"=?base64?abc?=":    "=?base64?PT9iYXNlNjQ/YWJjPz0=?=",
		"file:///a%20b?x=1": "file:///a%20b?x=1",
	} {
		if got := encodeHeaderValue(in); got != want {
			t.Errorf("encodeHeaderValue(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestToolHeaders(t *testing.T) {
	valid := `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},
		"n":{"type":"integer","x-mcp-header":"Priority"},"plain":{"type":"number"},
		"nested":{"type":"object","properties":{"flag":{"type":"boolean","x-mcp-header":"Flag"}}}}}`
	specs, err := toolHeaders([]byte(valid))
	if err != nil || len(specs) != 3 {
		t.Fatalf("valid schema: %v, %+v", err, specs)
	}
	for name, schema := range map[string]string{
		"empty":      `{"properties":{"v":{"type":"string","x-mcp-header":""}}}`,
		"object":     `{"properties":{"v":{"type":"object","x-mcp-header":"V"}}}`,
		"array":      `{"properties":{"v":{"type":"array","x-mcp-header":"V"}}}`,
		"null":       `{"properties":{"v":{"type":"null","x-mcp-header":"V"}}}`,
		"number":     `{"properties":{"v":{"type":"number","x-mcp-header":"V"}}}`,
		"duplicate":  `{"properties":{"a":{"type":"string","x-mcp-header":"My"},"b":{"type":"string","x-mcp-header":"my"}}}`,
		"space":      `{"properties":{"v":{"type":"string","x-mcp-header":"My Region"}}}`,
		"colon":      `{"properties":{"v":{"type":"string","x-mcp-header":"A:B"}}}`,
		"non-ascii":  `{"properties":{"v":{"type":"string","x-mcp-header":"Région"}}}`,
		"control":    `{"properties":{"v":{"type":"string","x-mcp-header":"A\tB"}}}`,
		"via items":  `{"properties":{"v":{"type":"array","items":{"type":"string","x-mcp-header":"V"}}}}`,
		"via anyOf":  `{"anyOf":[{"properties":{"v":{"type":"string","x-mcp-header":"V"}}}]}`,
		"root":       `{"type":"string","x-mcp-header":"V"}`,
		"not string": `{"properties":{"v":{"type":"string","x-mcp-header":5}}}`,
	} {
		if _, err := toolHeaders([]byte(schema)); err == nil {
			t.Errorf("%s: accepted %s", name, schema)
		}
	}
}

// TestToolsListedRejectsBadHeadersAndRemembersGood: the engine hands the
// Conn each listing; the Conn keeps the parameters of valid annotations and
// names the tools its wire cannot carry, without touching the result.
func TestToolsListedRejectsBadHeadersAndRemembersGood(t *testing.T) {
	c, err := Dial(context.Background(), "http://127.0.0.1:1/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rejected := c.ToolsListed([]mcp.Tool{
		{Name: "ok", InputSchema: json.RawMessage(`{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"R"}}}`)},
		{Name: "bad", InputSchema: json.RawMessage(`{"type":"object","properties":{"r":{"type":"number","x-mcp-header":"R"}}}`)},
	})
	if len(rejected) != 1 || rejected["bad"] == nil {
		t.Errorf("rejected %v, want only bad", rejected)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.tools["ok"]) != 1 || c.tools["ok"][0].name != "R" {
		t.Errorf("known %+v", c.tools)
	}
	if _, ok := c.tools["bad"]; ok {
		t.Error("a rejected tool's parameters were kept")
	}
}

// TestSSELongLinesInPieces: lines longer than the read buffer and the
// pooled blocks, cut anywhere by the reads, give the events a plain
// reading gives; a long data line becomes the event's data in a slice of
// its exact size.
func TestSSELongLinesInPieces(t *testing.T) {
	long := strings.Repeat("a", 3*blocks.Size+5)
	stream := "data: " + long + "\r\n" + "data: " + strings.Repeat("b", blocks.Size+1) + "\r" +
		": " + strings.Repeat("c", 2*blocks.Size) + "\n" + "id: 7\n\n" +
		"data: " + long + "\n\n" + "data: short\n\n"
	want, _ := reference([]byte(stream))
	for _, n := range []int{1 << 20, 4096, 1000, 7} {
		er := newEventReader(&choppy{b: []byte(stream), n: n}, len(stream))
		var got []event
		for {
			ev, err := er.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("reads of %d: %v", n, err)
			}
			got = append(got, ev)
		}
		er.release()
		if len(got) != len(want) {
			t.Fatalf("reads of %d: %d events, want %d", n, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i].data, want[i].data) || got[i].id != want[i].id {
				t.Errorf("reads of %d: event %d differs (%d bytes of data, want %d)", n, i, len(got[i].data), len(want[i].data))
			}
		}
		if d := got[1].data; cap(d) != len(d) {
			t.Errorf("reads of %d: the long data line has cap %d for %d bytes", n, cap(d), len(d))
		}
	}
}

// TestSSEHugeEventAllocatesItsSizeOnce pins the cost of a large event read
// in the 64 KiB pieces the budget hands out: about its size once (the
// slice of the event's data; a little more under the race detector,
// whose sync.Pool drops some blocks), not the five times a slice grown by append
// costs, nor the scanner's re-reading of its whole buffer at every piece
// (which made eight 100 MB events take a minute).
func TestSSEHugeEventAllocatesItsSizeOnce(t *testing.T) {
	const size = 16 << 20
	stream := []byte("data: " + strings.Repeat("x", size) + "\n\n")
	// Warm the pools, as a connection that has read before has.
	er := newEventReader(&choppy{b: stream, n: 64 << 10}, len(stream))
	if _, err := er.Next(); err != nil {
		t.Fatal(err)
	}
	er.release()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	er = newEventReader(&choppy{b: stream, n: 64 << 10}, len(stream))
	ev, err := er.Next()
	er.release()
	runtime.ReadMemStats(&after)
	if err != nil || len(ev.data) != size {
		t.Fatalf("err %v, %d bytes of data", err, len(ev.data))
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > size*3/2 {
		t.Errorf("reading a %d MiB event allocated %.1f MiB, want about its size", size>>20, float64(got)/(1<<20))
	}
}

// TestReadBodyOfKnownLengthAllocatesItOnce: a JSON answer whose length the
// server gave is read into one slice of that size (io.ReadAll would grow
// one to about twice that), and a body longer than it said is an error.
func TestReadBodyOfKnownLengthAllocatesItOnce(t *testing.T) {
	const size = 4 << 20
	body := bytes.Repeat([]byte("x"), size)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b, err := readBody(&choppy{b: body, n: 32 << 10}, size, 64<<20)
	runtime.ReadMemStats(&after)
	if err != nil || len(b) != size {
		t.Fatalf("err %v, %d bytes", err, len(b))
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > size*5/4 {
		t.Errorf("reading a %d MiB body allocated %.1f MiB", size>>20, float64(got)/(1<<20))
	}
	if _, err := readBody(bytes.NewReader(body), size-1, 64<<20); !errors.Is(err, transport.ErrProtocol) {
		t.Errorf("a body past its length: err %v, want ErrProtocol", err)
	}
}

func newEventReader(body io.Reader, maxEvent int) *eventReader {
	er := new(eventReader)
	er.init(body, maxEvent, false)
	return er
}

func newIdleEventReader(body io.Reader, maxEvent int) *eventReader {
	er := new(eventReader)
	er.init(body, maxEvent, true)
	return er
}
