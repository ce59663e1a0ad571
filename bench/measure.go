package bench

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Config says how much work each suite does. Every figure is a median or
// a rate over these counts, in one process per client.
type Config struct {
	Handshakes int // sessions started (and closed) to time the handshake
	Warmup     int // echo calls before any figure is taken
	SeqCalls   int // sequential echo calls
	ConcCalls  int // echo calls shared by ConcCallers goroutines
	Big1Calls  int // calls returning 1 MiB
	Big16Calls int // calls returning 16 MiB
	Tools      int // extra tools the ListTools server offers
	ListCalls  int // ListTools calls
}

// DefaultConfig is what `make bench-peers` runs.
var DefaultConfig = Config{
	Handshakes: 5, Warmup: 200, SeqCalls: 2000, ConcCalls: 3000,
	Big1Calls: 4, Big16Calls: 2, Tools: 2000, ListCalls: 2,
}

// ConcCallers is how many goroutines share one session in the throughput
// figure.
const ConcCallers = 16

// Suites are the groups of figures a worker process measures, one client
// per process, so that each has its own RSS and CPU.
var Suites = []string{"calls", "big", "tools"}

// Result is what one worker measured: figures by key, and the keys it
// could not measure with why.
type Result struct {
	Values map[string]float64 `json:"values"`
	Fails  map[string]string  `json:"fails,omitempty"`
}

func (r *Result) set(key string, v float64) { r.Values[key] = v }

func (r *Result) fail(key string, err error) {
	if r.Fails == nil {
		r.Fails = map[string]string{}
	}
	r.Fails[key] = err.Error()
}

// Run measures one suite of one client over one transport, in this
// process. An error means no figure at all; a figure the client cannot
// give (a result too large for it) is in Result.Fails.
func Run(ctx context.Context, suite, transportName, clientName string, bins Bins, cfg Config) (*Result, error) {
	t := TransportByName(transportName)
	if t == nil {
		return nil, fmt.Errorf("no transport %q", transportName)
	}
	k, ok := t.kind(clientName)
	if !ok {
		return nil, fmt.Errorf("transport %s has no client %q", transportName, clientName)
	}
	tools := 0
	if suite == "tools" {
		tools = cfg.Tools
	}
	ep, err := t.Serve(ctx, bins, tools)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	defer ep.Close()
	defer CloseIdleHTTP()
	r := &Result{Values: map[string]float64{}}
	switch suite {
	case "calls":
		err = runCalls(ctx, r, t, k, ep, cfg)
	case "big":
		err = runBig(ctx, r, k, ep, cfg)
	case "tools":
		err = runTools(ctx, r, k, ep, cfg, tools)
	default:
		err = fmt.Errorf("no suite %q", suite)
	}
	if err != nil {
		return nil, err
	}
	r.set("rss_mib", float64(maxRSS())/1024)
	return r, nil
}

// connCounter returns how to count the TCP connections a client opens:
// the tuned client's dialer, or the server's count when the client's
// transport is its own.
func connCounter(t *Transport, ep *Endpoint) func() (int64, error) {
	switch {
	case t == httpTunedTransport:
		return func() (int64, error) { return TunedDials(), nil }
	case t == httpTransport:
		return ep.Conns
	}
	return nil
}

func runCalls(ctx context.Context, r *Result, t *Transport, k kind, ep *Endpoint, cfg Config) error {
	// The handshake: start to a session ready for calls (for stdio, the
	// server's spawn included). All but the last session are closed.
	var c client
	hs := make([]time.Duration, 0, cfg.Handshakes)
	for i := range cfg.Handshakes {
		start := time.Now()
		var err error
		c, err = k.start(ctx, ep)
		if err != nil {
			return fmt.Errorf("start: %w", err)
		}
		hs = append(hs, time.Since(start))
		if i < cfg.Handshakes-1 {
			if err := c.Close(); err != nil {
				return fmt.Errorf("close: %w", err)
			}
		}
	}
	r.set("handshake_ms", ms(median(hs)))
	for range cfg.Warmup {
		if err := c.echo(ctx); err != nil {
			c.Close()
			return err
		}
	}
	conns := connCounter(t, ep)

	// Sequential calls: latency of each, and around the loop this
	// process's CPU and heap.
	lat := make([]time.Duration, cfg.SeqCalls)
	runtime.GC()
	c0, _ := count(conns)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := cpuTime()
	for i := range lat {
		start := time.Now()
		if err := c.echo(ctx); err != nil {
			c.Close()
			return err
		}
		lat[i] = time.Since(start)
	}
	cpu1 := cpuTime()
	runtime.ReadMemStats(&m1)
	c1, err := count(conns)
	n := float64(cfg.SeqCalls)
	r.set("seq_median_us", us(median(lat)))
	r.set("seq_p99_us", us(percentile(lat, 0.99)))
	r.set("cpu_us", us(cpu1-cpu0)/n)
	r.set("allocs", float64(m1.Mallocs-m0.Mallocs)/n)
	r.set("bytes", float64(m1.TotalAlloc-m0.TotalAlloc)/n)
	if conns != nil {
		if err != nil {
			r.fail("seq_conns", err)
		} else {
			r.set("seq_conns", float64(c1-c0))
		}
	}

	// Throughput: ConcCalls calls from ConcCallers goroutines.
	runtime.GC()
	c0, _ = count(conns)
	elapsed, clat, err := callConcurrentlyTimed(ctx, c, cfg.ConcCalls)
	if err != nil {
		c.Close()
		return fmt.Errorf("concurrent calls: %w", err)
	}
	c1, err = count(conns)
	r.set("conc_calls_s", float64(cfg.ConcCalls)/elapsed.Seconds())
	r.set("conc_p99_us", us(percentile(clat, 0.99)))
	if conns != nil {
		if err != nil {
			r.fail("conc_conns", err)
		} else {
			r.set("conc_conns", float64(c1-c0))
		}
	}

	// Close after a busy session: the session has just made those calls.
	start := time.Now()
	err = c.Close()
	r.set("close_ms", ms(time.Since(start)))
	if err != nil {
		r.fail("close_ms", err)
	}
	return nil
}

func count(f func() (int64, error)) (int64, error) {
	if f == nil {
		return 0, nil
	}
	return f()
}

// callConcurrentlyTimed makes n echo calls on c from ConcCallers
// goroutines and returns the time they took and each call's latency.
func callConcurrentlyTimed(ctx context.Context, c client, n int) (time.Duration, []time.Duration, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		first   error
		lats    = make([][]time.Duration, ConcCallers)
	)
	start := time.Now()
	for g := range ConcCallers {
		lats[g] = make([]time.Duration, 0, n/ConcCallers+1)
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				t := time.Now()
				if err := c.echo(ctx); err != nil {
					errOnce.Do(func() { first = err; cancel() })
					return
				}
				lats[g] = append(lats[g], time.Since(t))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	return elapsed, slices.Concat(lats...), first
}

func runBig(ctx context.Context, r *Result, k kind, ep *Endpoint, cfg Config) error {
	c, err := k.start(ctx, ep)
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	defer func() { c.Close() }()
	if _, err := c.big(ctx, 1024); err != nil {
		return err
	}
	for _, size := range []struct {
		key   string
		bytes int
		calls int
	}{{"big1", 1 << 20, cfg.Big1Calls}, {"big16", 16 << 20, cfg.Big16Calls}} {
		times := make([]time.Duration, 0, size.calls)
		heap := make([]time.Duration, 0, size.calls) // bytes, sorted as durations
		var err error
		for range size.calls {
			runtime.GC()
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			start := time.Now()
			var got int
			got, err = c.big(ctx, size.bytes)
			d := time.Since(start)
			runtime.ReadMemStats(&m1)
			if err == nil && got != size.bytes {
				err = fmt.Errorf("big returned %d bytes, want %d", got, size.bytes)
			}
			if err != nil {
				break
			}
			times = append(times, d)
			heap = append(heap, time.Duration(m1.TotalAlloc-m0.TotalAlloc))
		}
		if err != nil {
			r.fail(size.key+"_ms", err)
			r.fail(size.key+"_heap_mib", err)
			// A client that failed a result may be broken: start again.
			c.Close()
			if c, err = k.start(ctx, ep); err != nil {
				return fmt.Errorf("start again: %w", err)
			}
			continue
		}
		r.set(size.key+"_ms", ms(median(times)))
		r.set(size.key+"_heap_mib", float64(median(heap))/(1<<20))
	}
	return nil
}

func runTools(ctx context.Context, r *Result, k kind, ep *Endpoint, cfg Config, tools int) error {
	c, err := k.start(ctx, ep)
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	defer c.Close()
	want := tools + 2 // echo and big
	times := make([]time.Duration, 0, cfg.ListCalls)
	heap := make([]time.Duration, 0, cfg.ListCalls)
	for range cfg.ListCalls {
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		start := time.Now()
		n, err := c.listTools(ctx)
		d := time.Since(start)
		runtime.ReadMemStats(&m1)
		if err == nil && n != want {
			err = fmt.Errorf("listed %d tools, want %d", n, want)
		}
		if err != nil {
			r.fail("list_ms", err)
			r.fail("list_heap_mib", err)
			return nil
		}
		times = append(times, d)
		heap = append(heap, time.Duration(m1.TotalAlloc-m0.TotalAlloc))
	}
	r.set("list_ms", ms(median(times)))
	r.set("list_heap_mib", float64(median(heap))/(1<<20))
	return nil
}

// cpuTime is the user plus system time of this process: RUSAGE_SELF counts
// every thread of it (the client's goroutines, net/http's, the GC) and
// none of the server's.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// maxRSS is this process's peak resident set in KiB.
func maxRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Maxrss
}

func median(d []time.Duration) time.Duration { return percentile(d, 0.5) }

// percentile is the nearest-rank percentile of d (which it leaves in
// order).
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(p*float64(len(s))+0.5) - 1
	i = max(0, min(i, len(s)-1))
	return s[i]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
