package mcp

import (
	"encoding/json"
	"strings"
	"testing"
)

// scanAll feeds data to a scanner in pieces of n bytes (all at once if n
// is zero).
func scanAll(data []byte, n int) (ID, bool) {
	var s IDScanner
	if n <= 0 {
		n = len(data) + 1
	}
	for len(data) > 0 {
		k := min(n, len(data))
		s.Feed(data[:k])
		data = data[k:]
	}
	return s.Result()
}

var scanIDSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","result":{"id":2,"text":"\"id\":3"},"id":"x\"y"}`,
	`{"a":"id","id":4}`,
	`{"a":"\"id\":5","b":"\\","id":6}`,
	`{"i\u0064":7}`,
	`{"\u0069\u0064":"eight","\u006dethod":"m"}`,
	`{"id":null}`,
	`{"id":1.0}`,
	`{"id":1e3}`,
	`{"id":1.5}`,
	`{"id":[1]}`,
	`{"id":{"id":1}}`,
	`[{"id":1}]`,
	`{"id":1,"id":2}`,
	`{"id":1,"id":{}}`,
	`{"method":"tools/call","id":9,"params":{"id":10}}`,
	`{"ids":1,"xid":2}`,
	`{"\"id":1}`,
	`{"x":{"id":7},"y":[{"id":8}]}`,
	`{ "id" : "a\\\"b" , "result" : [ "]" , "}" ] }`,
	`{"id":-0}`,
	`{"id":123456789012345678901}`,
	`{"id":true}`,
	`{"id":"\ud83d\ude00"}`,
	`{"id":`,
	`{"id":"unterminated`,
	`}}}`,
	`""`,
	`{"result":"\\\\\"","id":11}`,
	"{\"id\"\t:\n12}",
	`{"Id":13}`,
}

func TestScanID(t *testing.T) {
	for _, tc := range []struct {
		in  string
		id  ID
		req bool
	}{
		{`{"jsonrpc":"2.0","result":{"id":2,"text":"\"id\":3"},"id":"x\"y"}`, StringID(`x"y`), false},
		{`{"x":{"id":7},"y":[{"id":8}]}`, ID{}, false},
		{`{"i\u0064":7}`, Int64ID(7), false},
		{`{"method":"tools/call","id":9,"params":{"id":10}}`, Int64ID(9), true},
		{`{"id":1,"id":{}}`, ID{}, false},
		{`{"id":1e3}`, Int64ID(1000), false},
		{`[{"id":1}]`, ID{}, false},
		// Invalid JSON: the scan stops at the first error, with what it
		// found before it.
		{`{"id":1,"x":tru,"id":2}`, Int64ID(1), false},
		{`{"method":"m","id":3 4}`, Int64ID(3), true},
	} {
		for _, n := range []int{0, 1, 3} {
			id, req := scanAll([]byte(tc.in), n)
			if id != tc.id || req != tc.req {
				t.Errorf("%s in pieces of %d: id %s, request %v; want %s, %v", tc.in, n, id, req, tc.id, tc.req)
			}
		}
	}
}

// FuzzScanID checks the scanner against encoding/json: on any JSON object
// it finds the same top-level id (and "method" member) however the input
// is split, and on any input it neither panics nor depends on the split.
func FuzzScanID(f *testing.F) {
	for _, s := range scanIDSeeds {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(1))
		f.Add([]byte(s), uint8(5))
	}
	f.Fuzz(func(t *testing.T, data []byte, split uint8) {
		id, req := scanAll(data, int(split))
		wholeID, wholeReq := scanAll(data, 0)
		if id != wholeID || req != wholeReq {
			t.Fatalf("split %d: %s/%v, whole: %s/%v", split, id, req, wholeID, wholeReq)
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(data, &m) != nil || m == nil {
			return // not a JSON object: nothing to agree with
		}
		var want ID
		if raw, ok := m["id"]; ok {
			if len(raw) > maxIDCapture {
				return // too long to capture, by design
			}
			if want.UnmarshalJSON(raw) != nil {
				want = ID{}
			}
		}
		_, wantReq := m["method"]
		if id != want || req != wantReq {
			t.Fatalf("scanner: id %s, request %v; encoding/json: id %s, request %v", id, req, want, wantReq)
		}
	})
}

// TestResponseIDOfMalformedResponses: "an undecodable response with a
// valid id hangs its call". These do not decode, and each names its call.
func TestResponseIDOfMalformedResponses(t *testing.T) {
	for _, line := range []string{
		`{"jsonrpc":"1.0","id":7,"result":{}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"text":"bad \x escape"}}`,
		`{"jsonrpc":"2.0","id":7,"result":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`,
		`{"id":7,"error":{"code":"not a number"}}`,
	} {
		if _, err := DecodeMessage([]byte(line)); err == nil {
			t.Errorf("%.60s decoded", line)
		}
		if id, ok := ResponseID([]byte(line)); !ok || id != Int64ID(7) {
			t.Errorf("ResponseID(%.60s) = %v, %v; want 7", line, id, ok)
		}
	}
	for _, line := range []string{
		`{"level":"info","id":7,"msg":"a log record"}`,
		`{"jsonrpc":"2.0","id":7,"method":"ping","params":"bad"}`,
		`not json {"id":7}`,
		`{"jsonrpc":"2.0","result":{}}`,
	} {
		if id, ok := ResponseID([]byte(line)); ok {
			t.Errorf("ResponseID(%.60s) = %v; want none", line, id)
		}
	}
}

// TestScanIDDropsAnOversizedID pins the bound on the captured id: the
// scanner runs over lines past the message cap (stdio discarding an
// oversized line), so an id longer than maxIDCapture must be treated as
// absent rather than gathered whole; without the bound a server that
// sends a string id of megabytes makes the scanner hold all of it. Ids up
// to the bound are still found, however the input is split.
func TestScanIDDropsAnOversizedID(t *testing.T) {
	for _, tc := range []struct {
		name string
		id   string // the string id's text
		want ID
	}{
		{"short", "req-5f2a", StringID("req-5f2a")},
		{"at the bound", strings.Repeat("a", maxIDCapture-2), StringID(strings.Repeat("a", maxIDCapture-2))},
		{"one past the bound", strings.Repeat("a", maxIDCapture-1), ID{}},
		{"2000 bytes", strings.Repeat("a", 2000), ID{}},
		{"a megabyte", strings.Repeat("a", 1<<20), ID{}},
	} {
		in := []byte(`{"id":"` + tc.id + `","method":"x"}`)
		for _, n := range []int{0, 1, 7, 100, 4096} {
			var s IDScanner
			for p := in; len(p) > 0; {
				k := len(p)
				if n > 0 {
					k = min(n, k)
				}
				s.Feed(p[:k])
				p = p[k:]
			}
			if id, req := s.Result(); id != tc.want || !req {
				t.Errorf("%s, pieces of %d: id %.40s, request %v; want %.40s, true", tc.name, n, id, req, tc.want)
			}
			// The capture buffer never grows much past the bound (append
			// may round its capacity up).
			if c := cap(s.buf); c > 2*maxIDCapture {
				t.Errorf("%s, pieces of %d: the scanner holds a buffer of %d bytes, past twice the bound of %d", tc.name, n, c, maxIDCapture)
			}
		}
	}
	// A response gone wrong with an oversized id names no call.
	line := `{"jsonrpc":"1.0","id":"` + strings.Repeat("a", 2000) + `","result":{}}`
	if id, ok := ResponseID([]byte(line)); ok {
		t.Errorf("ResponseID of a response with a 2000-byte id = %.40s; want none", id)
	}
}
