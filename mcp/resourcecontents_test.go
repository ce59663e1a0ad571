package mcp_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/tako-mcp/tako/mcp"
)

func TestResourceContentsHelpers(t *testing.T) {
	var r mcp.ReadResourceResult
	in := `{"contents":[{"uri":"a","text":""},{"uri":"b","mimeType":"image/png","blob":"AAEC"},{"uri":"c","text":"hi"}]}`
	if err := json.Unmarshal([]byte(in), &r); err != nil {
		t.Fatal(err)
	}
	a, b, c := &r.Contents[0], &r.Contents[1], &r.Contents[2]
	if text, ok := a.AsText(); !ok || text != "" || a.IsBlob() || !a.IsText() {
		t.Errorf("empty text: %q %v", text, ok)
	}
	if _, ok := b.AsText(); ok || !b.IsBlob() {
		t.Error("blob taken for text")
	}
	if data, err := b.Bytes(); err != nil || string(data) != "\x00\x01\x02" {
		t.Errorf("blob bytes %q %v", data, err)
	}
	if data, err := c.Data(); err != nil || string(data) != "hi" {
		t.Errorf("text data %q %v", data, err)
	}
	if _, err := c.Bytes(); !errors.Is(err, mcp.ErrNoBinaryData) {
		t.Errorf("Bytes of text: %v", err)
	}
	if got := r.Text(); got != "\nhi" {
		t.Errorf("Text = %q", got)
	}
	// The constructors round-trip through JSON.
	out, err := json.Marshal(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{
		mcp.TextResourceContents("x", "text/plain", ""),
		mcp.BlobResourceContents("y", "", []byte{0, 1, 2}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"contents":[{"uri":"x","mimeType":"text/plain","text":""},{"uri":"y","blob":"AAEC"}]}`; string(out) != want {
		t.Errorf("marshal = %s", out)
	}
}
