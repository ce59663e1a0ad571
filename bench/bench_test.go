package bench

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// callTimeout bounds every call of the benchmarks, so that a client that
// hangs fails the benchmark instead of the whole run. It is far above any
// figure measured.
const callTimeout = 2 * time.Minute

// forEachClient runs fn as one sub-benchmark per client, named after it.
func forEachClient(b *testing.B, fn func(b *testing.B, k kind)) {
	for _, k := range kinds {
		b.Run(k.name, func(b *testing.B) { fn(b, k) })
	}
}

// open starts a client against the benchmark server. It is closed when the
// benchmark function returns (testing runs Cleanup after each run of it),
// outside the timed region.
func open(b *testing.B, k kind) client {
	b.Helper()
	bin := serverBin(b)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	c, err := k.start(ctx, bin)
	if err != nil {
		b.Fatalf("%s: start: %v", k.name, err)
	}
	b.Cleanup(func() {
		if err := c.Close(); err != nil {
			b.Logf("%s: close: %v", k.name, err)
		}
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

// BenchmarkEchoCall is the round trip of one small tool call over stdio:
// ns/op is the mean latency, B/op and allocs/op the client's allocations
// (the server is another process).
func BenchmarkEchoCall(b *testing.B) {
	forEachClient(b, func(b *testing.B, k kind) {
		c := open(b, k)
		b.ReportAllocs()
		b.ResetTimer()
		echoLoop(b, c)
	})
}

// cpuTime is the user plus system time this process has used. RUSAGE_SELF
// counts every thread of the test process (the client's goroutines, its GC)
// and none of the server subprocess.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkClientCPU reports the client's CPU time per echo call
// (cpu-ns/op): what a call costs the calling program, apart from waiting.
func BenchmarkClientCPU(b *testing.B) {
	forEachClient(b, func(b *testing.B, k kind) {
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

// bigLoop makes b.N sequential calls of the big tool, n bytes each, and
// reports the client's allocations per MiB of result (alloc-MiB/MiB). The
// go-sdk client is expected to fail over stdio on a result larger than its
// line cap: that is recorded as a skip with the error, not a failure of the
// run. Any other error fails the benchmark.
func bigLoop(b *testing.B, k kind, n int) {
	c := open(b, k)
	ctx, cancel := callContext()
	defer cancel()
	b.ReportAllocs()
	b.SetBytes(int64(n))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for range b.N {
		got, err := c.big(ctx, n)
		if err != nil {
			if k.name == "gosdk" && strings.Contains(err.Error(), "line length") {
				b.Skipf("the go-sdk client cannot take a %d-byte result (its CommandTransport caps an incoming line at mcp.DefaultMaxLineLength, 16 MiB, which the JSON envelope pushes it past): %v", n, err)
			}
			b.Fatal(err)
		}
		if got != n {
			b.Fatalf("big returned %d bytes, want %d", got, n)
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(n), "alloc-MiB/MiB")
}

// BenchmarkBigResult16MiB is one tool call whose result is a 16 MiB text
// block: ns/op is its latency.
func BenchmarkBigResult16MiB(b *testing.B) {
	forEachClient(b, func(b *testing.B, k kind) { bigLoop(b, k, 16<<20) })
}

// BenchmarkHeapPer1MiB is one tool call whose result is a 1 MiB text block:
// alloc-MiB/MiB is the heap the client allocates per MiB received.
func BenchmarkHeapPer1MiB(b *testing.B) {
	forEachClient(b, func(b *testing.B, k kind) { bigLoop(b, k, 1<<20) })
}

// concurrentCallers is how many goroutines share one connection in
// BenchmarkConcurrent16.
const concurrentCallers = 16

// callConcurrently makes n echo calls on c from concurrentCallers goroutines
// and returns the first error.
func callConcurrently(c client, n int) error {
	ctx, cancel := callContext()
	defer cancel()
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		first   error
	)
	for range concurrentCallers {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if err := c.echo(ctx); err != nil {
					errOnce.Do(func() { first = err; cancel() })
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// BenchmarkConcurrent16 is throughput: b.N echo calls shared by 16
// goroutines on one connection, reported as calls/s.
func BenchmarkConcurrent16(b *testing.B) {
	forEachClient(b, func(b *testing.B, k kind) {
		c := open(b, k)
		b.ReportAllocs()
		b.ResetTimer()
		if err := callConcurrently(c, b.N); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	})
}

// busyCalls is how many calls a session makes before BenchmarkCloseAfterBusy
// closes it.
const busyCalls = 1000

// BenchmarkCloseAfterBusy is how long Close takes, from the call to its
// return, on a session that has just made 1000 calls from 16 goroutines.
// Starting the server and the calls are outside the timed region; ns/op is
// Close alone.
func BenchmarkCloseAfterBusy(b *testing.B) {
	forEachClient(b, func(b *testing.B, k kind) {
		bin := serverBin(b)
		b.ResetTimer()
		for range b.N {
			b.StopTimer()
			ctx, cancel := callContext()
			c, err := k.start(ctx, bin)
			cancel()
			if err != nil {
				b.Fatalf("%s: start: %v", k.name, err)
			}
			if err := callConcurrently(c, busyCalls); err != nil {
				c.Close()
				b.Fatal(err)
			}
			b.StartTimer()
			err = c.Close()
			b.StopTimer()
			if err != nil {
				b.Logf("%s: close: %v", k.name, err)
			}
		}
	})
}
