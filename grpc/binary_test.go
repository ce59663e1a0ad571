package mcpgrpc

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	pb "github.com/tako-mcp/tako/proto/mcppb"
)

// allocated is the heap f allocates.
func allocated(f func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	f()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

// TestImageKeepsProtobufBytes pins the fix for a 1 MiB image costing
// 2.33 MiB of heap over gRPC, then 1.33 MiB: mcp.Content held base64
// text, so the bytes protobuf decoded were encoded (and, before a codec
// of its own, copied first). The block now holds protobuf's bytes
// themselves, as the hand-written floor does: converting the response
// allocates nothing in proportion to the data.
func TestImageKeepsProtobufBytes(t *testing.T) {
	data := bytes.Repeat([]byte("\x89PNG\x00\xff\x10 "), 1<<17) // 1 MiB
	resp := &pb.CallToolResponse{Content: []*pb.CallToolResponse_Content{
		{Image: &pb.ImageContent{Data: data, MimeType: "image/png"}},
		{Audio: &pb.AudioContent{Data: data[:4096], MimeType: "audio/wav"}},
		{EmbeddedResource: &pb.EmbeddedResource{Contents: &pb.ResourceContents{Uri: "file:///r.pdf", Blob: data}}},
	}}
	var res *mcp.CallToolResult
	alloc := allocated(func() {
		var err error
		if res, err = callResultFromPB(resp); err != nil {
			t.Fatal(err)
		}
	})
	// The bound is far from a copy (1 MiB) and above what -race and
	// the runtime allocate meanwhile.
	if limit := uint64(64 << 10); alloc > limit {
		t.Errorf("converting a result with a 1 MiB image and a 1 MiB blob allocated %d bytes, want at most %d", alloc, limit)
	}
	for i, d := range []mcp.Binary{res.Content[0].Data, res.Content[1].Data, *res.Content[2].Resource.Blob} {
		raw, ok := d.Raw()
		if !ok || len(raw) == 0 || &raw[0] != &data[0] {
			t.Errorf("block %d: held as bytes %v, shares protobuf's: %v", i, ok, ok && len(raw) > 0 && &raw[0] == &data[0])
		}
	}
	if res.Content[0].MIMEType != "image/png" || res.Content[1].Type != mcp.ContentAudio || res.Content[2].Resource.URI != "file:///r.pdf" {
		t.Errorf("blocks: %+v", res.Content)
	}
}

// TestReadResourceKeepsProtobufBytes: a binary resource's blob goes the
// same way, and an empty one still says it is text.
func TestReadResourceKeepsProtobufBytes(t *testing.T) {
	blob := bytes.Repeat([]byte("%PDF\x00\xff\r\n"), 1<<17)
	var rc mcp.ResourceContents
	alloc := allocated(func() { rc = resourceContentsFromPB(&pb.ResourceContents{Uri: "file:///r.pdf", Blob: blob}) })
	if alloc > 64<<10 {
		t.Errorf("converting a 1 MiB blob allocated %d bytes, want at most %d", alloc, 64<<10)
	}
	if raw, ok := rc.Blob.Raw(); !ok || &raw[0] != &blob[0] || rc.Text != nil {
		t.Errorf("blob held as bytes %v, text %v", ok, rc.Text)
	}
	if empty := resourceContentsFromPB(&pb.ResourceContents{Uri: "mem://e"}); empty.Text == nil || empty.Blob != nil {
		t.Errorf("empty contents: text %v, blob %v; want text", empty.Text, empty.Blob)
	}
}

// TestBytesOfBothForms: what goes onto the service is bytes, from either
// form, and text that is not base64 is an error naming the field.
func TestBytesOfBothForms(t *testing.T) {
	for _, c := range []mcp.Content{mcp.ImageContent([]byte("\x89PNG"), "image/png"), {Type: mcp.ContentImage, MIMEType: "image/png", Data: mcp.BinaryFromBase64("iVBORw==")}} {
		p, err := contentToParts(&c)
		if err != nil || !bytes.Equal(p.image.GetData(), []byte("\x89PNG")) {
			t.Errorf("%v: %q, %v", c.Data, p.image.GetData(), err)
		}
	}
	bad := mcp.Content{Type: mcp.ContentAudio, Data: mcp.BinaryFromBase64("no!")}
	if _, err := contentToParts(&bad); err == nil || !bytes.Contains([]byte(err.Error()), []byte("audio data is not base64")) {
		t.Errorf("bad base64: %v", err)
	}
}
