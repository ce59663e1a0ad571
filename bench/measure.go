package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tako-mcp/tako/bench/internal/payload"
)

// Config says how much work each suite does. Every figure is a median or
// a rate over these counts.
type Config struct {
	Handshakes int // sessions started (and closed) to time the handshake
	Warmup     int // echo calls before any figure is taken
	SeqCalls   int // sequential echo calls of each client
	ConcCalls  int // echo calls of each client, shared by ConcCallers goroutines
	Big1Calls  int // calls returning 1 MiB, of each payload kind
	Big16Calls int // calls returning 16 MiB, of each payload kind
	Tools      int // extra tools the ListTools server offers
	ListCalls  int // ListTools calls

	Sessions    []int         // the sessions suite's points (SessionCounts)
	SessionIdle time.Duration // how long they sit idle before they are measured

	SizePoints []int // the scale suite's result sizes (SizePoints)
	ToolPoints []int // the scale suite's tool counts (ToolPoints)
}

// DefaultConfig is what `make bench-peers` runs.
var DefaultConfig = Config{
	Handshakes: 5, Warmup: 200, SeqCalls: 2000, ConcCalls: 4500,
	Big1Calls: 4, Big16Calls: 3, Tools: 2000, ListCalls: 2,
	Sessions: SessionCounts, SessionIdle: SessionIdle,
	SizePoints: SizePoints, ToolPoints: ToolPoints,
}

// bigCalls is how many calls of n bytes the big suite measures.
func (cfg Config) bigCalls(n int) int {
	if n > 1<<20 {
		return cfg.Big16Calls
	}
	return cfg.Big1Calls
}

// ConcCallers is how many goroutines share one session in the throughput
// figure.
const ConcCallers = 16

// Suites are the groups of figures a worker process measures. "side" runs
// every client of a transport in one process, taking turns (runSide);
// the others run one client per process, so that each has its own RSS.
// footprint runs the cmd/footprint-* binaries, one per client, over stdio.
var Suites = []string{"side", "calls", "big", "footprint", "tools", "sessions", "scale"}

// SideClient is the client name a "side" worker is run with: it measures
// them all.
const SideClient = "all"

// Turns in the side suite: sequential calls are taken sideBlock at a time,
// calls from ConcCallers goroutines sideConcBlock at a time.
const (
	sideBlock     = 50
	sideConcBlock = 300
)

// sideHandshakes is how many handshakes each client makes in the side
// suite, in turns.
const sideHandshakes = 20

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
	if suite == "side" {
		defer CloseIdleHTTP()
		r := &Result{Values: map[string]float64{}}
		if err := runSide(ctx, r, t, bins, cfg); err != nil {
			return nil, err
		}
		return r, nil
	}
	k, ok := t.kind(clientName)
	if !ok {
		return nil, fmt.Errorf("transport %s has no client %q", transportName, clientName)
	}
	if suite == "sessions" || suite == "scale" {
		defer CloseIdleHTTP()
		r := &Result{Values: map[string]float64{}}
		run := runSessions
		if suite == "scale" {
			run = runScale
		}
		if err := run(ctx, r, t, k, bins, cfg); err != nil {
			return nil, err
		}
		return r, nil
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
		err = runCalls(ctx, r, k, ep, cfg)
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

// runCalls measures what needs a process of the client's own: the
// handshake, the peak RSS of a session that has made the side suite's
// calls, and Close after them.
func runCalls(ctx context.Context, r *Result, k kind, ep *Endpoint, cfg Config) error {
	// The handshake: start to a session ready for calls (for stdio, the
	// server's spawn included; over HTTP, the TCP connection's dial). All
	// but the last session are closed.
	var c client
	hs := make([]time.Duration, 0, cfg.Handshakes)
	for i := range cfg.Handshakes {
		// Each handshake as a program's first: no connection kept from the
		// one before in a pool the clients share (http.DefaultClient's,
		// which the floor and the peers use and tako's own Conn does not).
		CloseIdleHTTP()
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
	// The session's work, for its peak RSS and for the Close after it:
	// the per-call figures come from the side suite (runSide).
	for range cfg.SeqCalls {
		if err := c.echo(ctx); err != nil {
			c.Close()
			return err
		}
	}
	if _, _, err := callConcurrentlyTimed(ctx, c, cfg.ConcCalls); err != nil {
		c.Close()
		return fmt.Errorf("concurrent calls: %w", err)
	}

	// Close after a busy session: the session has just made those calls.
	start := time.Now()
	err := c.Close()
	r.set("close_ms", ms(time.Since(start)))
	if err != nil {
		r.fail("close_ms", err)
	}
	return nil
}

// runSide measures the per-call figures of every client of t in this one
// process, each against a server of its own, taking turns: sideBlock
// sequential calls of each client in turn until each has made
// cfg.SeqCalls, then sideConcBlock calls from ConcCallers goroutines in
// turn until each has made cfg.ConcCalls. Keys are prefixed with the
// client's name ("tako.seq_median_us").
//
// Why: the machines these run on are shared, and their load drifts from
// second to second. Measured a minute apart in processes of their own,
// two clients' latency and CPU differ by 10-30 % from one run to the
// next with no change to either; taking turns every few milliseconds
// puts every client under the same drift, so that the ratios hold still.
// A collection is forced before each turn, outside the figures, so that
// no client pays for the garbage of the one before it: each pays for the
// collections its own turn triggers.
func runSide(ctx context.Context, r *Result, t *Transport, bins Bins, cfg Config) error {
	type side struct {
		name         string
		ep           *Endpoint
		c            client
		conns        func() (int64, error)
		lat, clat    []time.Duration
		hs, hsList   []time.Duration
		cpu, elapsed time.Duration
		mallocs      uint64
		bytes        uint64
		seqConns     int64
		concConns    int64
		connErr      error
	}
	var all []*side
	defer func() {
		for _, s := range all {
			if s.c != nil {
				s.c.Close()
			}
			s.ep.Close()
		}
	}()
	for _, k := range t.kinds {
		ep, err := t.Serve(ctx, bins, 0)
		if err != nil {
			return fmt.Errorf("%s: server: %w", k.name, err)
		}
		// Room for every latency up front: growing the slices inside
		// a turn would count as the client's allocations.
		s := &side{name: k.name, ep: ep, conns: connCounter(t, ep),
			lat: make([]time.Duration, 0, cfg.SeqCalls), clat: make([]time.Duration, 0, cfg.ConcCalls)}
		all = append(all, s)
		if s.c, err = k.start(ctx, ep); err != nil {
			return fmt.Errorf("%s: start: %w", k.name, err)
		}
		for range cfg.Warmup {
			if err := s.c.echo(ctx); err != nil {
				return fmt.Errorf("%s: %w", k.name, err)
			}
		}
	}
	// Handshakes in turns too, each as a program's first (no pooled
	// connection from the one before), and each session closed after:
	// the calls suite's handshake rows come from processes a minute apart,
	// and moved by a third from run to run. Timed twice: to a session
	// ready for calls, and to the tool list that a program asks for first
	// (the perf anchors' and issue 23's "connect, initialize, tools/list").
	for range sideHandshakes {
		for i, k := range t.kinds {
			CloseIdleHTTP()
			start := time.Now()
			c, err := k.start(ctx, all[i].ep)
			if err != nil {
				return fmt.Errorf("%s: handshake: %w", k.name, err)
			}
			all[i].hs = append(all[i].hs, time.Since(start))
			if _, err := c.listTools(ctx); err != nil {
				c.Close()
				return fmt.Errorf("%s: tools/list after the handshake: %w", k.name, err)
			}
			all[i].hsList = append(all[i].hsList, time.Since(start))
			if err := c.Close(); err != nil {
				return fmt.Errorf("%s: close after the handshake: %w", k.name, err)
			}
		}
	}
	// turn runs one client's turn and adds the connections it opened.
	turn := func(s *side, opened *int64, fn func() error) error {
		c0, err0 := count(s.conns)
		err := fn()
		c1, err1 := count(s.conns)
		if err := errors.Join(err0, err1); err != nil && s.connErr == nil {
			s.connErr = err
		}
		*opened += c1 - c0
		return err
	}
	for done := 0; done < cfg.SeqCalls; done += sideBlock {
		n := min(sideBlock, cfg.SeqCalls-done)
		for _, s := range all {
			runtime.GC()
			err := turn(s, &s.seqConns, func() error {
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				cpu0 := cpuTime()
				for range n {
					start := time.Now()
					if err := s.c.echo(ctx); err != nil {
						return err
					}
					s.lat = append(s.lat, time.Since(start))
				}
				s.cpu += cpuTime() - cpu0
				runtime.ReadMemStats(&m1)
				s.mallocs += m1.Mallocs - m0.Mallocs
				s.bytes += m1.TotalAlloc - m0.TotalAlloc
				return nil
			})
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
		}
	}
	for done := 0; done < cfg.ConcCalls; done += sideConcBlock {
		n := min(sideConcBlock, cfg.ConcCalls-done)
		for _, s := range all {
			runtime.GC()
			err := turn(s, &s.concConns, func() error {
				elapsed, lat, err := callConcurrentlyTimed(ctx, s.c, n)
				s.elapsed += elapsed
				s.clat = append(s.clat, lat...)
				return err
			})
			if err != nil {
				return fmt.Errorf("%s: concurrent calls: %w", s.name, err)
			}
		}
	}
	for _, s := range all {
		n := float64(len(s.lat))
		set := func(key string, v float64) { r.set(s.name+"."+key, v) }
		set("handshake_ms", ms(median(s.hs)))
		set("handshake_list_ms", ms(median(s.hsList)))
		set("seq_median_us", us(median(s.lat)))
		set("seq_p99_us", us(percentile(s.lat, 0.99)))
		set("cpu_us", us(s.cpu)/n)
		set("allocs", float64(s.mallocs)/n)
		set("bytes", float64(s.bytes)/n)
		set("conc_calls_s", float64(len(s.clat))/s.elapsed.Seconds())
		set("conc_p99_us", us(percentile(s.clat, 0.99)))
		if s.conns != nil {
			if s.connErr != nil {
				r.fail(s.name+".seq_conns", s.connErr)
				r.fail(s.name+".conc_conns", s.connErr)
			} else {
				set("seq_conns", float64(s.seqConns))
				set("conc_conns", float64(s.concConns))
			}
		}
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

// bigSizes are the result sizes of the big suite, by key.
var bigSizes = []struct {
	key   string
	bytes int
}{{"big1", 1 << 20}, {"big16", 16 << 20}}

// runBig measures large results of every payload kind (bench/internal/payload)
// and size, and the process's peak RSS (in a process that holds every
// client's code: the footprint suite measures a client alone). Keys are
// the kind's and the size's ("json.big16_heap_mib").
func runBig(ctx context.Context, r *Result, k kind, ep *Endpoint, cfg Config) error {
	c, err := k.start(ctx, ep)
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	defer func() { c.Close() }()
	if _, err := c.big(ctx, payload.Text, 1024); err != nil {
		return err
	}
	// An idle client's peak RSS in a binary that holds every client's
	// code: what differs between clients here is what each allocates and
	// touches, not what it links (the footprint suite measures that, each
	// client alone in a binary of its own).
	r.set("rss_idle_mib", float64(maxRSS())/1024)
	for _, kind := range payload.Kinds {
		for _, size := range bigSizes {
			if c, err = bigCalls(ctx, r, k, ep, c, kind, kind+"."+size.key, size.bytes, cfg.bigCalls(size.bytes)); err != nil {
				return err
			}
		}
	}
	return nil
}

// bigCalls makes one call of the kind and size outside the figures, then
// calls of them measured, and sets key's time and heap. A client that
// fails is started again and returned.
func bigCalls(ctx context.Context, r *Result, k kind, ep *Endpoint, c client, kind, key string, n, calls int) (client, error) {
	times := make([]time.Duration, 0, calls)
	heap := make([]time.Duration, 0, calls) // bytes, sorted as durations
	// One call of the size first, outside the figures: a client's first
	// large result fills its pools (grpc-go's receive buffers, tako's line
	// blocks). The heap figure is the least of the calls: whether a
	// pooled buffer is found again depends on which P (scheduler slot) the
	// goroutine that asks for it runs on, so the heap of one call moves by
	// a whole buffer from call to call (gRPC, either client: 1.05 or
	// 2.1 MiB for a 1 MiB result), and a median of a few calls came out at
	// one or the other from run to run. The least is what the client
	// cannot avoid allocating.
	got, err := c.big(ctx, kind, n)
	if err == nil {
		err = checkBig(kind, n, got)
	}
	got = received{}
	for i := 0; err == nil && i < calls; i++ {
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		start := time.Now()
		got, err = c.big(ctx, kind, n)
		d := time.Since(start)
		runtime.ReadMemStats(&m1)
		if err == nil {
			err = checkBig(kind, n, got)
		}
		got = received{}
		if err != nil {
			break
		}
		times = append(times, d)
		heap = append(heap, time.Duration(m1.TotalAlloc-m0.TotalAlloc))
	}
	if err != nil {
		r.fail(key+"_ms", err)
		r.fail(key+"_heap_mib", err)
		// A client that failed a result may be broken: start again.
		c.Close()
		if c, err = k.start(ctx, ep); err != nil {
			return c, fmt.Errorf("start again: %w", err)
		}
		return c, nil
	}
	r.set(key+"_ms", ms(median(times)))
	r.set(key+"_heap_mib", float64(slices.Min(heap))/(1<<20))
	return c, nil
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
	r.set("list_heap_mib", float64(slices.Min(heap))/(1<<20))
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

// currentRSS is this process's resident set now, in bytes.
func currentRSS() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// maxRSS is this process's peak resident set in KiB.
func maxRSS() int64 {
	// VmHWM, the peak of this process's own memory map. Not getrusage's
	// ru_maxrss: Linux carries that across execve from the map the
	// process was forked with, and os/exec forks from the harness (a
	// vfork sharing its map), so every worker reported at least the
	// harness's 17 MiB, whatever it held itself.
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb
		}
	}
	return 0
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
