package mcpgrpc

import (
	"bytes"
	"encoding/base64"
	"runtime"
	"testing"
)

// TestEncode64AllocatesTheStringOnce pins the fix for an image's data
// costing twice its base64 size on its way from protobuf to mcp.Content:
// EncodeToString encoded into a buffer and copied it into a string.
func TestEncode64AllocatesTheStringOnce(t *testing.T) {
	raw := bytes.Repeat([]byte{0x89, 'P', 'N', 'G', 0, 0xff}, 1<<17)
	want := base64.StdEncoding.EncodeToString(raw)
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	got := encode64(raw)
	runtime.ReadMemStats(&m1)
	if got != want {
		t.Fatal("encode64 differs from base64.StdEncoding")
	}
	if alloc, limit := m1.TotalAlloc-m0.TotalAlloc, uint64(len(want))+8<<10; alloc > limit {
		t.Errorf("encode64 of %d bytes allocated %d, want at most %d (the string once)", len(raw), alloc, limit)
	}
	if encode64(nil) != "" {
		t.Error("encode64(nil) is not empty")
	}
}
