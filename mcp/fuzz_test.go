package mcp

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeMessage feeds DecodeMessage and DecodeMessages arbitrary bytes.
// Neither may panic, and whatever DecodeMessage accepts must re-encode (with
// AppendJSON) to one line of valid JSON that decodes to an equal message.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":"a","result":{"content":[{"type":"text","text":"hi"}]}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse","data":{"x":[1,2]}}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0.5}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":2.0,\"method\":\"m\",\"params\":{\n\"a\" : [ 1 ,\r\n 2 ]\n}}",
		`{"jsonrpc":"2.0","id":9223372036854775807,"result":null}`,
		`{"jsonrpc":"2.0","id":1e2,"result":{},"error":null}`,
		`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"n"}]`,
		`{"jsonrpc":"2.0","id":"\u2028\ud800","method":"\u0000"}`,
		`{"JSONRPC":"2.0","ID":1,"Method":"x"}`,
		`{"jsonrpc":"2.0","id":-9223372036854775809.0,"result":{}}`,
		``, `null`, `[]`, `{}`, `"x"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if msgs, err := DecodeMessages(data); err == nil {
			for _, m := range msgs {
				if !json.Valid(m.AppendJSON(nil)) {
					t.Fatalf("batch member re-encodes to invalid JSON: %q", m.AppendJSON(nil))
				}
			}
		}
		requireRoundTrip(t, data)
	})
}

// FuzzAppendJSONString checks that AppendJSONString's output always decodes
// with encoding/json to the input, with each byte of invalid UTF-8 replaced
// by U+FFFD (as encoding/json itself does), and never holds a raw line
// break.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range jsonStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := AppendJSONString([]byte("x"), s)[1:]
		var got string
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("AppendJSONString(%q) = %q does not decode: %v", s, out, err)
		}
		if want := string([]rune(s)); got != want {
			t.Fatalf("AppendJSONString(%q) decodes to %q, want %q", s, got, want)
		}
		for _, c := range out {
			if c == '\n' || c == '\r' {
				t.Fatalf("AppendJSONString(%q) = %q holds a raw line break", s, out)
			}
		}
	})
}
