package bench

import (
	"runtime"
	"testing"
)

// BenchmarkListTools2002 is one ListTools of the 2,002 tools (~4.7 MB of
// JSON) that servers/gosdk -tools 2000 offers, every page: ns/op is its
// time, alloc-MiB/op the heap the client allocates for it (the "tools"
// suite's figures, for profiling one client in the test process).
func BenchmarkListTools2002(b *testing.B) {
	const tools = 2000
	forEachClient(b, func(b *testing.B, x bench) {
		c := openWithTools(b, x, tools)
		ctx, cancel := callContext()
		defer cancel()
		b.ReportAllocs()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		b.ResetTimer()
		for range b.N {
			n, err := c.listTools(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if n != tools+2 {
				b.Fatalf("listed %d tools, want %d", n, tools+2)
			}
		}
		b.StopTimer()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "alloc-MiB/op")
	})
}
