package bench

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"
)

// SessionCounts are the points of the sessions suite: how many idle
// connected sessions one process holds.
var SessionCounts = []int{1, 10, 100, 1000}

// SessionIdle is how long the sessions suite lets sessions sit after their
// last call before it measures them: what a session holds once its
// timers have run (a finished POST's wait for its stream's end, an idle
// connection's), not what a call left behind for a moment.
const SessionIdle = 6 * time.Second

// SessionTransports are the transports the sessions suite runs on.
// On http-tuned every client's sessions share one http.Client, so that
// their POST connections come from one pool, as go-sdk's and mcp-go's do
// by default (http.DefaultClient).
var SessionTransports = []string{"stdio", "http", "http-tuned"}

// footprint is what the process holds, after a collection.
type footprint struct {
	heap, stack uint64
	goroutines  int
	rss         int64
}

func measureFootprint() footprint {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return footprint{heap: m.HeapAlloc, stack: m.StackInuse, goroutines: runtime.NumGoroutine(), rss: currentRSS()}
}

// runSessions connects sessions one after another up to each of
// cfg.Sessions, makes one echo call on each new one, lets them all sit
// idle for cfg.SessionIdle, and measures per session what the process
// holds more than before the first: heap in use, goroutine stacks,
// goroutines and RSS; and the time it took to connect them. Over stdio
// each session is a servers/tiny process of its own; over HTTP they all
// share one servers/gosdk -http. Keys are "sessions.N.heap_kb" and so on.
func runSessions(ctx context.Context, r *Result, t *Transport, k kind, bins Bins, cfg Config) error {
	var ep *Endpoint
	switch t.Name {
	case "stdio":
		ep = &Endpoint{Command: bins.Tiny}
	case "http", "http-tuned":
		var err error
		if ep, err = t.Serve(ctx, bins, 0); err != nil {
			return fmt.Errorf("server: %w", err)
		}
		defer ep.Close()
	default:
		return fmt.Errorf("the sessions suite runs on %v, not %s", SessionTransports, t.Name)
	}
	var open []client
	defer func() { closeAll(open) }()
	base := measureFootprint()
	var connect time.Duration
	for _, n := range cfg.Sessions {
		first := len(open)
		start := time.Now()
		for len(open) < n {
			c, err := k.start(ctx, ep)
			if err != nil {
				return fmt.Errorf("session %d: start: %w", len(open)+1, err)
			}
			open = append(open, c)
		}
		connect += time.Since(start)
		for _, c := range open[first:] {
			if err := c.echo(ctx); err != nil {
				return fmt.Errorf("echo: %w", err)
			}
		}
		select {
		case <-time.After(cfg.SessionIdle):
		case <-ctx.Done():
			return ctx.Err()
		}
		f := measureFootprint()
		key := "sessions." + strconv.Itoa(n) + "."
		per := func(v float64) float64 { return v / float64(n) }
		r.set(key+"heap_kb", per(float64(int64(f.heap)-int64(base.heap)))/1024)
		r.set(key+"stack_kb", per(float64(int64(f.stack)-int64(base.stack)))/1024)
		r.set(key+"goroutines", per(float64(f.goroutines-base.goroutines)))
		r.set(key+"rss_kb", per(float64(f.rss-base.rss))/1024)
		r.set(key+"connect_ms", ms(connect))
	}
	return nil
}

// closeAll closes the sessions a few at a time: one after another, a
// thousand stdio sessions would each wait for their server to exit.
func closeAll(cs []client) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		sem  = make(chan struct{}, 16)
	)
	for _, c := range cs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := c.Close(); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
