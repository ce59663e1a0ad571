package mcp

import (
	"encoding/json"
	"reflect"
	"testing"
)

var callToolResultCases = []string{
	`{"content":[{"type":"text","text":"hi"}]}`,
	`{"content":[]}`,
	`{}`,
	` { "content" : [ { "type" : "text" , "text" : "a\nb\u00e9\"" } , {"type":"image","data":"AAAA","mimeType":"image/png"} ] , "isError" : true } `,
	`{"content":[{"type":"resource_link","uri":"file:///x","name":"x","title":"X","description":"d","mimeType":"text/plain"}],"isError":false}`,
	`{"content":[{"type":"text","text":"x"}],"structuredContent":{"a":[1,2,{"b":null}]},"resultType":"complete"}`,
	`{"content":[{"type":"text","text":"x","annotations":{"audience":["user"]}}]}`,
	`{"content":[{"type":"resource","resource":{"uri":"u","text":"t"}}],"_meta":{"k":1}}`,
	`{"content":[{"type":"text","text":null}]}`,
	`{"content":null}`,
	`{"Content":[{"Type":"text","TEXT":"upper"}]}`,
	`{"content":[{"type":"text","text":"a"}],"content":[{"type":"text","text":"b"}]}`,
	`{"content":[{"type":"text","text":"a","text":"b"}]}`,
	`{"content":[{"type":"te\u0078t","text":"escaped type"}]}`,
	`{"content":[{"type":"text","text":"bad \x01 control"}]}`,
	`{"content":[{"type":"text","text":"x"}]} trailing`,
	`{"content":[{"type":"text","text":"x"},]}`,
	`{"content":[{"type":"text","text":"x"}],"isError":tru}`,
	`{"content":[{"type":"text","text":"x"}],"structuredContent":{"a":}}`,
	`{"content":[{"type":"text","text":"\ud800 lone surrogate and \xff invalid utf8"}]}`,
	`{"content":[{"type":"text","text":"x"}],"isError":"yes"}`,
	`[]`, `null`, ``, `{"content":[{"type":"text","text":"x"}]`,
	`{"structuredContent":"just a string","content":[{"type":"text","text":"x"}]}`,
	`{"content":[{"type":"tool_use","id":"t1","name":"n","input":{"a":1}}]}`,
}

// TestDecodeCallToolResultMatchesEncodingJSON pins the fast path to what
// json.Unmarshal gives, inputs it declines and bad inputs included.
func TestDecodeCallToolResultMatchesEncodingJSON(t *testing.T) {
	for _, in := range callToolResultCases {
		checkCallToolResultDecode(t, []byte(in))
	}
}

func checkCallToolResultDecode(t *testing.T, data []byte) {
	t.Helper()
	var want CallToolResult
	werr := json.Unmarshal(data, &want)
	var got CallToolResult
	gerr := DecodeCallToolResult(append([]byte(nil), data...), &got)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%q: encoding/json err %v, fast path err %v", data, werr, gerr)
	}
	if werr != nil {
		return
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("%q:\n encoding/json %#v\n fast path     %#v", data, want, got)
	}
}

func FuzzDecodeCallToolResult(f *testing.F) {
	for _, in := range callToolResultCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkCallToolResultDecode(t, data) })
}

func BenchmarkDecodeCallToolResultFast(b *testing.B) {
	data := []byte(`{"content":[{"type":"text","text":"hello there"}]}`)
	b.ReportAllocs()
	for b.Loop() {
		var r CallToolResult
		if err := DecodeCallToolResult(data, &r); err != nil {
			b.Fatal(err)
		}
	}
}
