package mcp

import "testing"

func TestFirstText(t *testing.T) {
	r := &CallToolResult{Content: []Content{{Type: ContentImage, Data: BinaryFromBase64("AA==")}, TextContent("one"), TextContent("two")}}
	if got, ok := r.FirstText(); !ok || got != "one" {
		t.Errorf("FirstText = %q, %v; want one, true", got, ok)
	}
	if r.Text() != "one\ntwo" {
		t.Errorf("Text = %q", r.Text())
	}
	if got, ok := (&CallToolResult{}).FirstText(); ok || got != "" {
		t.Errorf("empty result: FirstText = %q, %v", got, ok)
	}
}
