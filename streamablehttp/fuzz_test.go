package streamablehttp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tako-mcp/tako/transport"
)

// The decoders a server reaches: the SSE stream of every POST and GET
// (eventReader), the x-mcp-header annotations of the tools it
// lists (toolHeaders) and, through them, the Mcp-Param-* values tako sends
// (setParamHeaders, encodeHeaderValue).

var sseSeeds = []string{
	"",
	": keep-alive\n\n",
	"id: e1\r\nretry: 500\r\ndata: \r\n\r\n",
	"event: message\ndata: {\"a\":\ndata: 1}\n\n",
	"data:no-space\rid: e2\r\r",
	"event: endpoint\ndata: /messages?sessionId=x\n\n",
	"data: cut off",
	"id: a\x00b\ndata: x\n\n",
	"retry: 99999999999\ndata: x\n\r\n",
	"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n\n\ndata: two\n\n",
}

// FuzzEventReader: any byte stream gives events and then an error (io.EOF
// at the end, ErrMessageTooLarge past the cap), never a panic or an
// endless loop, and every event it gives is one a WHATWG parser could give.
func FuzzEventReader(f *testing.F) {
	for _, s := range sseSeeds {
		f.Add([]byte(s), uint16(64))
		f.Add([]byte(s), uint16(4096))
	}
	f.Fuzz(func(t *testing.T, stream []byte, max uint16) {
		limit := int(max)%8192 + 16
		er := newEventReader(bytes.NewReader(stream), limit)
		// Each event takes at least one byte of the stream.
		for n := 0; ; n++ {
			if n > len(stream)+1 {
				t.Fatalf("%d events from %d bytes", n, len(stream))
			}
			ev, err := er.Next()
			if err != nil {
				var tooLarge bool
				if errors.Is(err, transport.ErrMessageTooLarge) {
					tooLarge = true
				}
				if tooLarge && len(stream) <= limit {
					t.Errorf("ErrMessageTooLarge for a %d-byte stream under a %d-byte cap", len(stream), limit)
				}
				return
			}
			checkEvent(t, ev)
			if len(ev.data) > limit {
				t.Errorf("event data of %d bytes past the %d-byte cap", len(ev.data), limit)
			}
		}
	})
}

// FuzzEventReaderReference: however the stream is cut into reads, the
// events are those of a plain reading of the WHATWG rules (reference,
// below), and an event cut off by the end of the stream is never given.
func FuzzEventReaderReference(f *testing.F) {
	for _, s := range sseSeeds {
		f.Add([]byte(s), uint8(1))
		f.Add([]byte(s), uint8(7))
	}
	f.Fuzz(func(t *testing.T, stream []byte, cut uint8) {
		want, wantCut := reference(stream)
		// Both readers: a POST's, and the long-lived stream's, which
		// waits between events with a small buffer.
		for _, newReader := range []func(io.Reader, int) *eventReader{newEventReader, newIdleEventReader} {
			er := newReader(&choppy{b: stream, n: int(cut)%16 + 1}, len(stream)+1)
			var got []event
			var err error
			for {
				var ev event
				if ev, err = er.Next(); err != nil {
					break
				}
				got = append(got, ev)
			}
			er.release()
			if wantCut != (err == io.ErrUnexpectedEOF) || (!wantCut && err != io.EOF) {
				t.Errorf("end: err %v, want cut %v", err, wantCut)
			}
			if len(got) != len(want) {
				t.Fatalf("%d events, want %d:\n got %+v\nwant %+v", len(got), len(want), got, want)
			}
			for i := range got {
				g, w := got[i], want[i]
				if g.typ != w.typ || !bytes.Equal(g.data, w.data) || (g.data == nil) != (w.data == nil) ||
					g.id != w.id || g.hasID != w.hasID || g.retry != w.retry || g.hasRetry != w.hasRetry {
					t.Errorf("event %d: got %+v, want %+v", i, g, w)
				}
			}
		}
	})
}

// choppy hands out its bytes n at a time.
type choppy struct {
	b []byte
	n int
}

func (c *choppy) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.n)], c.b)
	c.b = c.b[n:]
	return n, nil
}

// reference parses a whole stream the plain way: split into lines, apply
// each; cut reports a last event with fields and no blank line after it.
func reference(stream []byte) (evs []event, cut bool) {
	lines := regexp.MustCompile("\r\n|\r|\n").Split(string(stream), -1)
	// The text after the last line end is an unterminated line.
	last := lines[len(lines)-1]
	lines = lines[:len(lines)-1]
	var ev event
	pending := false
	for _, line := range lines {
		switch {
		case line == "":
			if pending {
				evs = append(evs, ev)
			}
			ev, pending = event{}, false
			continue
		case line[0] == ':':
			continue
		}
		pending = true
		name, value, found := strings.Cut(line, ":")
		if found {
			value = strings.TrimPrefix(value, " ")
		}
		switch name {
		case "event":
			ev.typ = value
		case "data":
			if ev.data != nil {
				ev.data = append(ev.data, '\n')
			} else {
				ev.data = []byte{}
			}
			ev.data = append(ev.data, value...)
		case "id":
			if !strings.Contains(value, "\x00") {
				ev.id, ev.hasID = value, true
			}
		case "retry":
			if n, err := strconv.ParseUint(value, 10, 31); err == nil {
				ev.retry, ev.hasRetry = time.Duration(n)*time.Millisecond, true
			}
		}
	}
	return evs, pending || last != ""
}

func checkEvent(t *testing.T, ev event) {
	t.Helper()
	if strings.ContainsAny(ev.typ, "\r\n") || strings.ContainsAny(ev.id, "\r\n\x00") || bytes.IndexByte(ev.data, '\r') >= 0 {
		t.Errorf("a field holds a line break (or the id a NUL): %+v", ev)
	}
	if ev.id != "" && !ev.hasID {
		t.Errorf("id %q without hasID", ev.id)
	}
	if ev.retry < 0 || (ev.retry != 0 && !ev.hasRetry) {
		t.Errorf("retry %v (hasRetry %v)", ev.retry, ev.hasRetry)
	}
}

// FuzzEncodeHeaderValue: any string becomes a header value net/http sends
// as is (visible ASCII and inner spaces), and decodes back to the string.
func FuzzEncodeHeaderValue(f *testing.F) {
	for _, s := range []string{"", "us-west1", "a b", " lead", "trail ", "日本", "tab\there", "=?base64?eA==?=", "=?BASE64?x?=", "\x7f", "line\r\nbreak"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := encodeHeaderValue(s)
		checkHeaderValue(t, v)
		got := v
		if strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") && len(v) >= len("=?base64??=") {
			b, err := base64.StdEncoding.DecodeString(v[len("=?base64?") : len(v)-len("?=")])
			if err != nil {
				t.Fatalf("encodeHeaderValue(%q) = %q: bad base64: %v", s, v, err)
			}
			got = string(b)
		}
		if got != s {
			t.Errorf("encodeHeaderValue(%q) = %q, which decodes to %q", s, v, got)
		}
	})
}

func checkHeaderValue(t *testing.T, v string) {
	t.Helper()
	if v != "" && (v[0] == ' ' || v[len(v)-1] == ' ') {
		t.Errorf("header value %q has an outer space", v)
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c >= 0x7f {
			t.Errorf("header value %q has byte %#x", v, c)
			return
		}
	}
}

// FuzzToolHeaders: any input schema a server lists gives header specs or
// an error, and the Mcp-Param-* headers built from any arguments with
// those specs are valid header fields.
func FuzzToolHeaders(f *testing.F) {
	f.Add(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"}}}`, `{"region":"us-west1","n":3}`)
	f.Add(`{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"boolean","x-mcp-header":"B"}}}}}`, `{"a":{"b":true}}`)
	f.Add(`{"type":"object","properties":{"v":{"type":"number","x-mcp-header":"V"}}}`, `{"v":1.5}`)
	f.Add(`{"type":"object","items":{"x-mcp-header":"X"}}`, `{}`)
	f.Add(`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"},"b":{"type":"string","x-mcp-header":"a"}}}`, `{"a":"1","b":"2"}`)
	f.Add(`{"type":"object","properties":{"s":{"type":"string","x-mcp-header":"S p"}}}`, `{"s":"x"}`)
	f.Add(`{"type":"object","properties":{"s":{"type":"string","x-mcp-header":"S"}}}`, `{"s":" 日本\n"}`)
	f.Add(`{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}}`, `{"n":9007199254740993}`)
	f.Fuzz(func(t *testing.T, schema, args string) {
		specs, err := toolHeaders(json.RawMessage(schema))
		if err != nil {
			if specs != nil {
				t.Errorf("toolHeaders gave specs %v with error %v", specs, err)
			}
			return
		}
		seen := map[string]bool{}
		for _, sp := range specs {
			if err := checkToken(sp.name); err != nil {
				t.Errorf("spec name %q: %v", sp.name, err)
			}
			if seen[strings.ToLower(sp.name)] {
				t.Errorf("spec name %q twice", sp.name)
			}
			seen[strings.ToLower(sp.name)] = true
			if len(sp.path) == 0 {
				t.Errorf("spec %q with an empty path", sp.name)
			}
		}
		h := http.Header{}
		setParamHeaders(h, specs, json.RawMessage(args))
		for name, vs := range h {
			if !strings.HasPrefix(name, "Mcp-Param-") || checkToken(name) != nil {
				t.Errorf("header name %q", name)
			}
			for _, v := range vs {
				checkHeaderValue(t, v)
			}
		}
	})
}
