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

// TestEncode64MatchesStd: every length around the chunks encode64 goes
// through, padded or not, encodes as base64.StdEncoding does.
func TestEncode64MatchesStd(t *testing.T) {
	raw := make([]byte, 3*768+3)
	for i := range raw {
		raw[i] = byte(i*7 + i>>8)
	}
	for _, n := range []int{1, 2, 3, 4, 5, 767, 768, 769, 770, 1535, 1536, 1537, 2303, 2304, 2305, 2306, len(raw)} {
		if got, want := encode64(raw[:n]), base64.StdEncoding.EncodeToString(raw[:n]); got != want {
			t.Errorf("encode64 of %d bytes = %.40q…, want %.40q…", n, got, want)
		}
	}
}

// TestTextBlockPaysNoBase64Encoder pins the fix for every content block of
// a gRPC CallTool result, text ones included, allocating a
// base64.NewEncoder (1 KB) to encode the data it does not have: the codec
// calls encode64 for each block, with nothing when it has no data.
func TestTextBlockPaysNoBase64Encoder(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _ = encode64(nil) }); n != 0 {
		t.Errorf("encode64(nil) allocates %v times, want 0", n)
	}
	small := []byte("\x89PNG\r\n")
	if n := testing.AllocsPerRun(100, func() { _ = encode64(small) }); n != 1 {
		t.Errorf("encode64 of %d bytes allocates %v times, want 1 (the string)", len(small), n)
	}
}
