package bench

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tako-mcp/tako/bench/internal/payload"
)

// callTimeout bounds every call of the benchmarks, so that a client that
// hangs fails the benchmark instead of the whole run. It is far above any
// figure measured.
const callTimeout = 2 * time.Minute

// These benchmarks are for focused profiling (`-bench 'EchoCall/http/tako'
// -cpuprofile ...`): the tables come from cmd/peers (see measure.go). Here
// every client runs in the test process.

// bench is one client over one transport, with its server.
type bench struct {
	t *Transport
	k kind
}

// forEachClient runs fn as one sub-benchmark per transport and client,
// named transport/client.
func forEachClient(b *testing.B, fn func(b *testing.B, x bench)) {
	for _, t := range Transports {
		for _, k := range t.kinds {
			b.Run(t.Name+"/"+k.name, func(b *testing.B) { fn(b, bench{t, k}) })
		}
	}
}

// open starts the server and a client against it. Both are closed when the
// benchmark function returns (testing runs Cleanup after each run of it),
// outside the timed region.
func open(b *testing.B, x bench) client { return openWithTools(b, x, 0) }

// openWithTools is open against a server that offers tools extra tools.
func openWithTools(b *testing.B, x bench, tools int) client {
	b.Helper()
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
	return c
}

func callContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), callTimeout)
}

// echoLoop makes b.N sequential echo calls.
func echoLoop(b *testing.B, c client) {
	ctx, cancel := callContext()
	defer cancel()
	for range b.N {
		if err := c.echo(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEchoCall is the round trip of one small tool call:
// ns/op is the mean latency, B/op and allocs/op the client's allocations
// (the server is another process).
func BenchmarkEchoCall(b *testing.B) {
	forEachClient(b, func(b *testing.B, x bench) {
		c := open(b, x)
		b.ReportAllocs()
		b.ResetTimer()
		echoLoop(b, c)
	})
}

// BenchmarkClientCPU reports the client's CPU time per echo call
// (cpu-ns/op): what a call costs the calling program, apart from waiting.
func BenchmarkClientCPU(b *testing.B) {
	forEachClient(b, func(b *testing.B, x bench) {
		c := open(b, x)
		b.ReportAllocs()
		b.ResetTimer()
		start := cpuTime()
		echoLoop(b, c)
		used := cpuTime() - start
		b.StopTimer()
		b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
	})
}

// bigLoop makes b.N sequential calls of the big tool, n bytes of kind
// each, checks what the client decoded, and reports the client's
// allocations per MiB of result (alloc-MiB/MiB). The go-sdk client is
// expected to fail over stdio on a result larger than its line cap: that
// is recorded as a skip with the error, not a failure of the run. Any
// other error fails the benchmark.
func bigLoop(b *testing.B, x bench, kind string, n int) {
	c := open(b, x)
	ctx, cancel := callContext()
	defer cancel()
	b.ReportAllocs()
	b.SetBytes(int64(n))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	var last received
	for range b.N {
		got, err := c.big(ctx, kind, n)
		if err != nil {
			if x.k.name == "gosdk" && strings.Contains(err.Error(), "line length") {
				b.Skipf("the go-sdk client cannot take a %d-byte result (its CommandTransport caps an incoming line at mcp.DefaultMaxLineLength, 16 MiB, which the JSON envelope pushes it past): %v", n, err)
			}
			b.Fatal(err)
		}
		last = got
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(n), "alloc-MiB/MiB")
	if err := checkBig(kind, n, last); err != nil {
		b.Fatal(err)
	}
}

// forEachKind runs fn for each payload kind and client, named
// kind/transport/client.
func forEachKind(b *testing.B, fn func(b *testing.B, x bench, kind string)) {
	for _, kind := range payload.Kinds {
		b.Run(kind, func(b *testing.B) {
			forEachClient(b, func(b *testing.B, x bench) { fn(b, x, kind) })
		})
	}
}

// BenchmarkBigResult16MiB is one tool call whose result is a 16 MiB block
// of each payload kind: ns/op is its latency.
func BenchmarkBigResult16MiB(b *testing.B) {
	forEachKind(b, func(b *testing.B, x bench, kind string) { bigLoop(b, x, kind, 16<<20) })
}

// BenchmarkHeapPer1MiB is one tool call whose result is a 1 MiB block of
// each payload kind: alloc-MiB/MiB is the heap the client allocates per
// MiB received.
func BenchmarkHeapPer1MiB(b *testing.B) {
	forEachKind(b, func(b *testing.B, x bench, kind string) { bigLoop(b, x, kind, 1<<20) })
}

// BenchmarkConcurrent16 is throughput: b.N echo calls shared by 16
// goroutines on one connection, reported as calls/s.
func BenchmarkConcurrent16(b *testing.B) {
	forEachClient(b, func(b *testing.B, x bench) {
		c := open(b, x)
		b.ReportAllocs()
		b.ResetTimer()
		ctx, cancel := callContext()
		defer cancel()
		if _, _, err := callConcurrentlyTimed(ctx, c, b.N); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	})
}

// BenchmarkHandshake is a session from start to ready, then closed, each
// as a program's first (no pooled connection from the one before): ns/op
// is the handshake and the Close, for focused profiles of the rows the
// side suite times alone.
func BenchmarkHandshake(b *testing.B) {
	forEachClient(b, func(b *testing.B, x bench) {
		ctx, cancel := callContext()
		defer cancel()
		ep, err := x.t.Serve(ctx, testBins(b), 0)
		if err != nil {
			b.Fatalf("server: %v", err)
		}
		defer ep.Close()
		b.ReportAllocs()
		start := cpuTime()
		for b.Loop() {
			CloseIdleHTTP()
			c, err := x.k.start(ctx, ep)
			if err != nil {
				b.Fatalf("%s: start: %v", x.k.name, err)
			}
			if err := c.Close(); err != nil {
				b.Fatalf("%s: close: %v", x.k.name, err)
			}
		}
		b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
	})
}
