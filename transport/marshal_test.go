package transport

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/tako-mcp/tako/mcp"
)

// TestMarshalToolParamsMatchesEncodingJSON pins the direct encoding of a
// tools/call's params to what encoding/json makes of the same struct: the
// same JSON value for every name and valid arguments, and a refusal for
// arguments that are not one JSON value.
func TestMarshalToolParamsMatchesEncodingJSON(t *testing.T) {
	names := []string{"echo", "", "a\"b\\c", "<tag>&", "é ☃ \u2028", "bad\xffutf8", "tab\there\n"}
	args := []string{"", `{}`, `{"message":"hi"}`, " {\n \"a\" : [1, 2.5e3, true, null]\t}\n", `[]`, `"s"`, `3`, `null`, `{"x":{"y":{"z":"\u00e9\n"}}}`}
	for _, name := range names {
		for _, a := range args {
			p := &mcp.CallToolParams{Name: name}
			if a != "" {
				p.Arguments = json.RawMessage(a)
			}
			got, err := marshalToolParams(p)
			if err != nil {
				t.Fatalf("%q %q: %v", name, a, err)
			}
			want, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("%q %q: not JSON: %s: %v", name, a, got, err)
			}
			json.Unmarshal(want, &w)
			if !reflect.DeepEqual(g, w) {
				t.Errorf("%q %q:\n got %s\nwant %s", name, a, got, want)
			}
		}
	}
	for _, bad := range []string{`{`, `{"a":}`, `{} {}`, `nul`, `{"a":1,}`, "\"\x01\"", `[1,,2]`} {
		p := &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(bad)}
		if _, err := json.Marshal(p); err == nil {
			t.Fatalf("encoding/json takes %q", bad)
		}
		if got, err := marshalToolParams(p); err == nil {
			t.Errorf("arguments %q: got %s, want an error", bad, got)
		}
	}
	// Anything else goes through encoding/json.
	task := &mcp.CallToolParams{Name: "echo", Task: &mcp.TaskParams{}, Meta: mcp.Meta{"k": json.RawMessage(`1`)}}
	got, err := marshalToolParams(task)
	want, _ := json.Marshal(task)
	if err != nil || string(got) != string(want) {
		t.Errorf("with task and _meta: got %s, %v; want %s", got, err, want)
	}
}

// BenchmarkMarshalToolParams is the encoding of an echo call's params,
// directly and through encoding/json.
func BenchmarkMarshalToolParams(b *testing.B) {
	p := &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"message":"hello, world"}`)}
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := marshalToolParams(p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := marshalObject(p); err != nil {
				b.Fatal(err)
			}
		}
	})
}
