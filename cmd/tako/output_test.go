package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// termBuffer is an output that says it is a terminal of width columns.
type termBuffer struct {
	bytes.Buffer
	width int
}

func (b *termBuffer) TerminalWidth() int { return b.width }

const tableWidth = 100

func TestWriteToolTable(t *testing.T) {
	yes, no := true, false
	tools := []mcp.Tool{
		{Name: "echo", Description: "Echoes the message back.\nSecond line is not shown."},
		{Name: "add", Title: "Add", Description: "Adds a and b.\nMore."},
		{Name: "read_file", Annotations: &mcp.ToolAnnotations{Title: "Read a file", ReadOnlyHint: &yes, OpenWorldHint: &no}},
		{Name: "rm", Description: "\n\n  Removes things.  ", Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes, IdempotentHint: &yes}},
		{Name: "long", Description: strings.Repeat("word ", 60)},
		{Name: "evil", Description: "red \x1b[31mtext\x1b[0m\tand\rmore"},
		{Name: "bare"},
		{Name: "same", Title: "Same", Description: "Same"},
	}
	b := termBuffer{width: tableWidth}
	if err := writeToolTable(&b, tools); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	t.Logf("table:\n%s", out)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(tools)+1 {
		t.Fatalf("got %d lines, want %d", len(lines), len(tools)+1)
	}
	want := []string{
		"NAME       HINTS  DESCRIPTION",
		"echo              Echoes the message back.",
		"add               Add: Adds a and b.",
		"read_file  r---   Read a file",
		"rm         -di-   Removes things.",
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("line %d = %q, want %q", i, lines[i], w)
		}
	}
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > tableWidth {
			t.Errorf("line %d has %d columns, more than %d: %q", i, n, tableWidth, l)
		}
		if strings.HasSuffix(l, " ") {
			t.Errorf("line %d has trailing blanks: %q", i, l)
		}
	}
	if !strings.HasSuffix(lines[5], "…") {
		t.Errorf("long description not cut with an ellipsis: %q", lines[5])
	}
	if strings.ContainsAny(out, "\x1b\t\r") {
		t.Errorf("control characters reached the table: %q", lines[6])
	}
	if lines[7] != "bare" {
		t.Errorf("tool with no description: %q", lines[7])
	}
	if lines[8] != "same              Same" {
		t.Errorf("title equal to the description: %q", lines[8])
	}
}

func TestWriteToolTableLongName(t *testing.T) {
	name := strings.Repeat("n", 128) // the longest name the spec allows
	b := termBuffer{width: 80}
	if err := writeToolTable(&b, []mcp.Tool{{Name: name, Description: strings.Repeat("d", 200)}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), name+"  ") {
		t.Errorf("a long name was shortened: %q", b.String())
	}
}

// TestTablesFollowTheTerminal: on a terminal the last column is cut to
// its width, whatever it is (not a fixed 100 columns); written anywhere
// else, nothing is cut.
func TestTablesFollowTheTerminal(t *testing.T) {
	desc := strings.Repeat("word ", 50) + "end"
	tools := []mcp.Tool{{Name: "t", Description: desc}}
	for _, width := range []int{60, 100, 180} {
		b := termBuffer{width: width}
		if err := writeToolTable(&b, tools); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if n := utf8.RuneCountInString(lines[1]); n != width || !strings.HasSuffix(lines[1], "…") {
			t.Errorf("width %d: the row has %d columns: %q", width, n, lines[1])
		}
		b = termBuffer{width: width}
		if err := writeTable(&b, "", []string{"NAME", "DESCRIPTION"}, [][]string{{"t", desc}}); err != nil {
			t.Fatal(err)
		}
		lines = strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if n := utf8.RuneCountInString(lines[1]); n != width {
			t.Errorf("width %d: writeTable's row has %d columns: %q", width, n, lines[1])
		}
	}
	var b bytes.Buffer
	if err := writeToolTable(&b, tools); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), desc+"\n") {
		t.Errorf("not a terminal, yet the table is cut:\n%s", b.String())
	}
	b.Reset()
	if err := writeTable(&b, "", []string{"NAME", "DESCRIPTION"}, [][]string{{"t", desc}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), desc+"\n") {
		t.Errorf("not a terminal, yet writeTable cuts:\n%s", b.String())
	}
}

func TestWriteToolTableEmpty(t *testing.T) {
	var b bytes.Buffer
	if err := writeToolTable(&b, nil); err != nil {
		t.Fatal(err)
	}
	if b.String() != "(the server has no tools)\n" {
		t.Errorf("got %q", b.String())
	}
}

// noTools is a server that declared no tools capability; any call to it
// panics (the embedded Transport is nil), so the test shows that tools
// --json does not ask it.
type noTools struct{ transport.Transport }

func (noTools) ServerInfo() transport.ServerInfo { return transport.ServerInfo{} }

func TestWriteToolsJSONWithoutCapability(t *testing.T) {
	var b bytes.Buffer
	if err := writeList(context.Background(), noTools{}, &b, "tools/list", false, "json"); err != nil {
		t.Fatal(err)
	}
	if b.String() != "{\"tools\":[]}\n" {
		t.Errorf("no tools: %q", b.String())
	}
}

func TestWriteContent(t *testing.T) {
	text := "embedded text"
	blob := mcp.BinaryFromBase64("AAECAwQ=") // 5 bytes
	size := int64(7)
	tests := []struct {
		name string
		res  mcp.CallToolResult
		want string
	}{
		{"text", mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("hello")}}, "hello\n"},
		{"text keeps its newline", mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("a\nb\n"), mcp.TextContent("c")}}, "a\nb\nc\n"},
		{"image", mcp.CallToolResult{Content: []mcp.Content{{Type: "image", Data: mcp.BinaryFromBase64("iVBORw0KGgo="), MIMEType: "image/png"}}},
			"[image image/png, 8 bytes]\n"},
		{"audio without type", mcp.CallToolResult{Content: []mcp.Content{{Type: "audio", Data: mcp.BinaryFromBase64("AAAA")}}},
			"[audio (no MIME type), 3 bytes]\n"},
		{"resource link", mcp.CallToolResult{Content: []mcp.Content{{Type: "resource_link", Link: &mcp.ResourceLink{URI: "file:///a.txt", Name: "a", Size: &size}}}},
			"file:///a.txt\n"},
		{"embedded text", mcp.CallToolResult{Content: []mcp.Content{{Type: "resource", Resource: &mcp.ResourceContents{URI: "mem://x", Text: &text}}}},
			"embedded text\n"},
		{"embedded blob", mcp.CallToolResult{Content: []mcp.Content{{Type: "resource", Resource: &mcp.ResourceContents{URI: "mem://b", MIMEType: "application/octet-stream", Blob: &blob}}}},
			"[resource mem://b application/octet-stream, 5 bytes]\n"},
		{"unknown block", mcp.CallToolResult{Content: []mcp.Content{{Type: "hologram"}}}, "[hologram block]\n"},
		{"structured only", mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: json.RawMessage(`{"sum":3,"parts":[1,2]}`)},
			"{\n  \"sum\": 3,\n  \"parts\": [\n    1,\n    2\n  ]\n}\n"},
		{"structured with an image", mcp.CallToolResult{
			Content:           []mcp.Content{{Type: "image", Data: mcp.BinaryFromBase64("AAAA"), MIMEType: "image/gif"}},
			StructuredContent: json.RawMessage(`[1]`)},
			"[image image/gif, 3 bytes]\n[\n  1\n]\n"},
		{"structured hidden by text", mcp.CallToolResult{
			Content:           []mcp.Content{mcp.TextContent(`{"sum":3}`)},
			StructuredContent: json.RawMessage(`{"sum":3}`)},
			"{\"sum\":3}\n"},
		{"null structured", mcp.CallToolResult{StructuredContent: json.RawMessage(`null`)}, ""},
		{"empty", mcp.CallToolResult{}, ""},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if err := writeContent(&b, &tt.res); err != nil {
			t.Fatal(err)
		}
		if b.String() != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, b.String(), tt.want)
		}
	}
}

func TestParseArguments(t *testing.T) {
	good := map[string]string{
		`{}`:                        `{}`,
		` { "a" : 1 } `:             `{"a":1}`,
		"{\n  \"a\": [1,\n 2]\n}\n": `{"a":[1,2]}`,
		`{"s":"x\ny"}`:              `{"s":"x\ny"}`,
	}
	for in, want := range good {
		got, err := parseArguments(in)
		if err != nil || string(got) != want {
			t.Errorf("parseArguments(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{``, `{`, `{"a":}`, `[1]`, `"x"`, `1`, `null`, `{} {}`, `{'a':1}`} {
		if _, err := parseArguments(in); err == nil {
			t.Errorf("parseArguments(%q): no error", in)
		} else if _, ok := err.(*usageError); !ok {
			t.Errorf("parseArguments(%q): %T, want a usage error", in, err)
		}
	}
}
