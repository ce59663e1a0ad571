package mcp

import (
	"encoding/json"
	"reflect"
	"testing"
	"unsafe"
)

// TestContentIsSmall pins the fix for Content carrying every block kind's
// fields inline: 296 bytes, so that each block of every tools/call result
// allocated 320 (a third of a stdio echo call's bytes). The rarer kinds'
// fields now sit behind a pointer each. (120 rather than 112 since Data is
// a Binary, a string and the flag that says which form it holds.)
func TestContentIsSmall(t *testing.T) {
	if n := unsafe.Sizeof(Content{}); n > 120 {
		t.Errorf("Content is %d bytes, want at most 120", n)
	}
}

// TestContentKindsDecode: the wire's flat block goes into the kind's own
// struct, which is set for a block of that type even when its members are
// absent, and a "name" is a tool_use's in a tool_use block and a link's in
// any other.
func TestContentKindsDecode(t *testing.T) {
	size := int64(7)
	for _, tc := range []struct {
		wire string
		want Content
	}{
		{`{"type":"text","text":"hi"}`, Content{Type: ContentText, Text: "hi"}},
		{`{"type":"resource_link","uri":"file:///a","name":"a","title":"A","description":"d","mimeType":"text/plain","size":7,"icons":[{"src":"i.png"}]}`,
			Content{Type: ContentResourceLink, MIMEType: "text/plain", Link: &ResourceLink{URI: "file:///a", Name: "a", Title: "A", Description: "d", Size: &size, Icons: []Icon{{Src: "i.png"}}}}},
		{`{"type":"resource_link"}`, Content{Type: ContentResourceLink, Link: &ResourceLink{}}},
		{`{"type":"tool_use","id":"c1","name":"get","input":{"a":1}}`,
			Content{Type: ContentToolUse, ToolUse: &ToolUse{ID: "c1", Name: "get", Input: json.RawMessage(`{"a":1}`)}}},
		{`{"type":"tool_use","name":"get"}`, Content{Type: ContentToolUse, ToolUse: &ToolUse{Name: "get"}}},
		{`{"type":"tool_result","toolUseId":"c1","content":[{"type":"text","text":"ok"}],"structuredContent":{"x":1},"isError":true}`,
			Content{Type: ContentToolResult, ToolResult: &ToolResult{ToolUseID: "c1", Content: []Content{{Type: ContentText, Text: "ok"}},
				StructuredContent: json.RawMessage(`{"x":1}`), IsError: true}}},
		{`{"type":"tool_result"}`, Content{Type: ContentToolResult, ToolResult: &ToolResult{}}},
		{`{"type":"future","name":"n","id":"i"}`, Content{Type: "future", Link: &ResourceLink{Name: "n"}, ToolUse: &ToolUse{ID: "i"}}},
		{`{"TYPE":"text","Text":"case"}`, Content{Type: ContentText, Text: "case"}},
	} {
		var got Content
		if err := json.Unmarshal([]byte(tc.wire), &got); err != nil {
			t.Fatalf("%s: %v", tc.wire, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.wire, got, tc.want)
		}
		// Through the tools/call fast path too, wherever it takes them.
		var r CallToolResult
		if err := DecodeCallToolResult([]byte(`{"content":[`+tc.wire+`]}`), &r); err != nil {
			t.Fatalf("DecodeCallToolResult(%s): %v", tc.wire, err)
		}
		if !reflect.DeepEqual(r.Content[0], tc.want) {
			t.Errorf("DecodeCallToolResult(%s):\n got %+v\nwant %+v", tc.wire, r.Content[0], tc.want)
		}
		// And back to flat members that decode to the same block (with
		// the members its type requires, which MarshalJSON adds).
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		var again Content
		if err := json.Unmarshal(b, &again); err != nil {
			t.Fatal(err)
		}
		if b2, _ := json.Marshal(again); string(b2) != string(b) {
			t.Errorf("%s: marshalled as %s, which decodes to a block marshalled as %s", tc.wire, b, b2)
		}
	}
}

// TestContentUnmarshalKeepsAbsentMembers: decoding into a block that holds
// values changes only the members the input has, as a plain struct did.
func TestContentUnmarshalKeepsAbsentMembers(t *testing.T) {
	c := Content{Type: ContentResourceLink, MIMEType: "text/plain", Link: &ResourceLink{URI: "u", Name: "n"}}
	if err := json.Unmarshal([]byte(`{"title":"T","uri":null}`), &c); err != nil {
		t.Fatal(err)
	}
	want := Content{Type: ContentResourceLink, MIMEType: "text/plain", Link: &ResourceLink{URI: "u", Name: "n", Title: "T"}}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got %+v, want %+v", c, want)
	}
}
