package bench

import (
	"testing"
)

// forEachHTTPClient runs fn as one sub-benchmark per client over
// Streamable HTTP, named after it.
func forEachHTTPClient(b *testing.B, fn func(b *testing.B, k kind)) {
	for _, k := range httpKinds {
		b.Run(k.name, func(b *testing.B) { fn(b, k) })
	}
}

// dialled is how many TCP connections c's transport has opened so far.
func dialled(c client) int64 { return c.(*httpSession).conns.Load() }

// BenchmarkHTTPEchoCall is BenchmarkEchoCall over Streamable HTTP: ns/op
// is the mean latency of one echo call, B/op and allocs/op the client's
// allocations, net/http's included (the server is another process).
// conns is the TCP connections opened during the timed calls.
func BenchmarkHTTPEchoCall(b *testing.B) {
	forEachHTTPClient(b, func(b *testing.B, k kind) {
		c := open(b, k)
		b.ReportAllocs()
		before := dialled(c)
		b.ResetTimer()
		echoLoop(b, c)
		b.StopTimer()
		b.ReportMetric(float64(dialled(c)-before), "conns")
	})
}

// BenchmarkHTTPClientCPU is BenchmarkClientCPU over Streamable HTTP: the
// user+sys CPU of the test process (the client, net/http, the GC) per echo
// call, cpu-ns/op.
func BenchmarkHTTPClientCPU(b *testing.B) {
	forEachHTTPClient(b, func(b *testing.B, k kind) {
		c := open(b, k)
		b.ReportAllocs()
		b.ResetTimer()
		start := cpuTime(b)
		echoLoop(b, c)
		used := cpuTime(b) - start
		b.StopTimer()
		b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
	})
}

// connsCalls is how many calls BenchmarkHTTPConns25k makes per iteration:
// the perf anchors count the TCP connections opened for 25k calls.
const connsCalls = 25_000

// BenchmarkHTTPConns25k is 25,000 echo calls from 16 goroutines on one
// session per iteration (so ns/op is the time for all of them, and b.N is
// 1 at the default -benchtime): conns/25k is the TCP connections the
// client's transport dialled for them (counted by the DialContext of the
// http.Transport the harness lends every client; the setup's connections
// are excluded), calls/s the throughput. Every client gets the same clone
// of http.DefaultTransport, whose MaxIdleConnsPerHost of 2 is what makes
// 16 callers open new connections: the figure is how a client's design
// meets that default, as a program that passes no transport would.
func BenchmarkHTTPConns25k(b *testing.B) {
	forEachHTTPClient(b, func(b *testing.B, k kind) {
		c := open(b, k)
		b.ReportAllocs()
		before := dialled(c)
		b.ResetTimer()
		for range b.N {
			if err := callConcurrently(c, connsCalls); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(dialled(c)-before)/float64(b.N), "conns/25k")
		b.ReportMetric(float64(b.N*connsCalls)/b.Elapsed().Seconds(), "calls/s")
	})
}

// BenchmarkHTTPBigResult16MiB is BenchmarkBigResult16MiB over Streamable
// HTTP: one call whose result is a 16 MiB text block, answered as one
// application/json body.
func BenchmarkHTTPBigResult16MiB(b *testing.B) {
	forEachHTTPClient(b, func(b *testing.B, k kind) { bigLoop(b, k, 16<<20) })
}
