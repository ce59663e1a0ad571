// Command hostile measures what a hostile server costs a tako client: the
// peak goroutines, resident memory and file descriptors of the client's
// process while the server floods it. Each probe runs the server as a child
// process (this same binary, with -serve), so that the figures are the
// client's alone:
//
//	cd interop && go run ./cmd/hostile -probe all
//
// The probes are the ones that found the bounds of DESIGN.md's rule 7
// missing:
//
//	pings       stdio: 100,000 ping requests from a server that then stops
//	            reading, so that every answer blocks on a full pipe
//	pings-http  Streamable HTTP: 25,000 ping requests on the GET stream from
//	            a server that takes a second to accept each answer's POST
//	notify      stdio: 100,000 notifications of 1 KiB to a subscriber that
//	            takes 100 µs over each
//	huge-http   Streamable HTTP: eight concurrent calls, each answered with
//	            an SSE event of -huge bytes (100 MB by default)
//
// The program uses only API that tako has had since its first release, so
// that the same source measures an older checkout too (see startStdio).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/streamablehttp"
	"github.com/tako-mcp/tako/transport"
)

var (
	probe = flag.String("probe", "all", "pings, pings-http, notify, huge-http or all")
	serve = flag.String("serve", "", "run as the hostile server of this probe (internal)")
	count = flag.Int("n", 0, "messages the server sends (0: the probe's default)")
	huge  = flag.Int("huge", 100_000_000, "bytes of each huge-http result")
	limit = flag.Duration("limit", 60*time.Second, "longest a probe may run")
)

func main() {
	flag.Parse()
	if *serve != "" {
		if err := runServer(*serve); err != nil {
			fmt.Fprintln(os.Stderr, "hostile server:", err)
			os.Exit(1)
		}
		return
	}
	probes := []string{*probe}
	if *probe == "all" {
		probes = []string{"pings", "pings-http", "notify", "huge-http"}
	}
	fmt.Println("probe\tpeak_goroutines\tpeak_rss_mib\tpeak_fds\tgoroutines_after\tseconds\toutcome")
	for _, p := range probes {
		if err := runProbe(p); err != nil {
			fmt.Fprintln(os.Stderr, "hostile:", p+":", err)
			os.Exit(1)
		}
	}
}

// figures samples the process every few milliseconds until stop is
// called; VmHWM would give the peak RSS too, but it cannot be reset
// between probes.
type figures struct {
	goroutines, rssKiB, fds atomic.Int64
	stop                    chan struct{}
	done                    chan struct{}
}

func sample() *figures {
	f := &figures{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(f.done)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			raise(&f.goroutines, int64(runtime.NumGoroutine()))
			raise(&f.rssKiB, rssKiB())
			raise(&f.fds, fdCount())
			select {
			case <-f.stop:
				return
			case <-t.C:
			}
		}
	}()
	return f
}

func (f *figures) end() { close(f.stop); <-f.done }

func raise(v *atomic.Int64, n int64) {
	for {
		old := v.Load()
		if n <= old || v.CompareAndSwap(old, n) {
			return
		}
	}
}

func rssKiB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

func fdCount() int64 {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	return int64(len(ents))
}

// doneMethod is the notification with which a server says its flood is
// over; it comes after the flood on the same stream, so a client that has
// seen it has read everything before it.
const doneMethod = "notifications/hostile/done"

func runProbe(name string) error {
	runtime.GC()
	ctx, cancel := context.WithTimeout(context.Background(), *limit)
	defer cancel()
	start := time.Now()
	f := sample()
	outcome, err := drive(ctx, name)
	f.end()
	if err != nil {
		return err
	}
	// What is left once the session is closed: the goroutines a probe
	// leaves behind show here.
	after := runtime.NumGoroutine()
	for i := 0; i < 200 && after > 2; i++ {
		time.Sleep(10 * time.Millisecond)
		after = runtime.NumGoroutine()
	}
	fmt.Printf("%s\t%d\t%.0f\t%d\t%d\t%.1f\t%s\n", name, f.goroutines.Load(),
		float64(f.rssKiB.Load())/1024, f.fds.Load(), after, time.Since(start).Seconds(), outcome)
	return nil
}

func drive(ctx context.Context, name string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	opts := &transport.Options{ProtocolVersion: "2025-11-25"}
	var conn transport.Conn
	var srv *exec.Cmd
	switch name {
	case "pings", "notify":
		conn, err = startStdio(ctx, self, []string{"-serve", name, "-n", strconv.Itoa(*count)})
	case "pings-http", "huge-http":
		var url string
		srv, url, err = startHTTPServer(self, name)
		if err == nil {
			defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
			conn, err = streamablehttp.Dial(ctx, url, nil)
		}
	default:
		return "", fmt.Errorf("unknown probe %q", name)
	}
	if err != nil {
		return "", err
	}
	var handled atomic.Int64
	done := make(chan struct{})
	var once sync.Once
	s, err := transport.Connect(ctx, conn, opts)
	if err != nil {
		_ = conn.Close()
		return "", err
	}
	defer s.Close()
	s.Subscribe(func(n mcp.Notification) {
		if n.Method == doneMethod {
			once.Do(func() { close(done) })
			return
		}
		if name == "notify" {
			time.Sleep(100 * time.Microsecond)
		}
		handled.Add(1)
	})
	switch name {
	case "huge-http":
		return hugeCalls(ctx, s), nil
	case "pings", "pings-http":
		// The answers cannot all go out: the server does not read them.
		// What matters is what the client holds while it tries, until the
		// server's last ping has been read.
		select {
		case <-done:
		case <-ctx.Done():
			return "did not read the flood within -limit", nil
		}
		time.Sleep(time.Second) // let what the flood started pile up
		return "flood read", nil
	default: // notify
		if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "wait"}); err != nil {
			return "", err
		}
		time.Sleep(time.Second) // the subscriber works on what is queued
		return fmt.Sprintf("flood read; subscriber had seen %d of %d a second later", handled.Load(), n(name)), nil
	}
}

// hugeCalls makes eight concurrent calls whose answers are each -huge bytes.
func hugeCalls(ctx context.Context, s *transport.Session) string {
	var wg sync.WaitGroup
	var ok, failed atomic.Int64
	var mu sync.Mutex
	kinds := map[string]int{}
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "huge"})
			if err != nil {
				failed.Add(1)
				e := err.Error()
				if len(e) > 70 {
					e = e[:70] + "…"
				}
				mu.Lock()
				kinds[e]++
				mu.Unlock()
				return
			}
			ok.Add(1)
		}()
	}
	wg.Wait()
	out := fmt.Sprintf("%d answered, %d failed", ok.Load(), failed.Load())
	for e, k := range kinds {
		out += fmt.Sprintf("; %d× %s", k, e)
	}
	return out
}

func n(probe string) int {
	if *count > 0 {
		return *count
	}
	switch probe {
	case "pings-http":
		return 25_000
	default:
		return 100_000
	}
}

var errNoURL = errors.New("the server printed no URL")
