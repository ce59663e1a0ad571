package bench

import (
	"context"
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
		bins := testBins(b)
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		ep, err := x.t.Serve(ctx, bins, tools)
		if err != nil {
			b.Fatalf("server: %v", err)
		}
		b.Cleanup(func() { ep.Close() })
		c, err := x.k.start(ctx, ep)
		if err != nil {
			b.Fatalf("%s: start: %v", x.k.name, err)
		}
		b.Cleanup(func() {
			if err := c.Close(); err != nil {
				b.Logf("%s: close: %v", x.k.name, err)
			}
			CloseIdleHTTP()
		})
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
