// Package footprint is the measurement behind bench/cmd/footprint-*: one
// binary per client, each linking that client's code and nothing else, so
// that the memory a stdio session costs includes what its imports cost at
// start (package init, tables built in package variables), which a binary
// holding every client (peers' workers) would share out among them.
//
// Each binary spawns servers/gosdk, makes one small call, and reports the
// process's peak RSS then ("connected, before any large result"); makes
// three calls returning 1 MiB and two returning 16 MiB of log text, and
// reports the peak RSS after them; drops them and reports the RSS left
// after two collections (a pool's spares go with the second) once the
// runtime has handed every free page back (debug.FreeOSMemory,
// here in the harness: on its own the runtime returns them at its own
// pace, a second or more for a hundred megabytes, alike for every client),
// which is what the client keeps: its buffers, its pools. It prints a
// bench.Result's JSON on stdout; a step the client cannot take (go-sdk's
// stdio client refuses a 16 MiB result) is in Fails.
package footprint

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// Client is one client's session: a call of the benchmark server's big
// tool (log text of n bytes) that returns the text's length, and Close.
type Client interface {
	Big(ctx context.Context, n int) (int, error)
	Close() error
}

// ProtocolVersion is the revision every client is pinned to.
const ProtocolVersion = "2025-11-25"

// Main measures the client start returns, against the server -server
// names, and exits.
func Main(start func(ctx context.Context, server string) (Client, error)) {
	server := flag.String("server", "", "the servers/gosdk binary")
	flag.Parse()
	if *server == "" {
		fail(fmt.Errorf("-server is required"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	values := map[string]float64{}
	fails := map[string]string{}
	c, err := start(ctx, *server)
	if err != nil {
		fail(fmt.Errorf("start: %w", err))
	}
	if err := big(ctx, c, 1<<10, 1); err != nil {
		fail(err)
	}
	values["rss_idle_mib"] = float64(maxRSS()) / 1024
	if err := big(ctx, c, 1<<20, 3); err != nil {
		fail(err)
	}
	if err := big(ctx, c, 16<<20, 2); err != nil {
		fails["rss_peak_mib"], fails["rss_exit_mib"] = err.Error(), err.Error()
	} else {
		values["rss_peak_mib"] = float64(maxRSS()) / 1024
		// Two collections: what a sync.Pool holds spare survives the
		// first (in its victim cache) and goes with the second, which
		// any program's next GC brings. Then every free page back.
		runtime.GC()
		debug.FreeOSMemory()
		values["rss_exit_mib"] = float64(currentRSS()) / (1 << 20)
	}
	if err := c.Close(); err != nil && len(fails) == 0 {
		// After a failed result the session may be broken, and its
		// Close say so: only a clean run's Close must succeed.
		fail(fmt.Errorf("close: %w", err))
	}
	json.NewEncoder(os.Stdout).Encode(map[string]any{"values": values, "fails": fails})
}

func big(ctx context.Context, c Client, n, calls int) error {
	for range calls {
		got, err := c.Big(ctx, n)
		if err != nil {
			return fmt.Errorf("big %d: %w", n, err)
		}
		if got != n {
			return fmt.Errorf("big %d returned %d bytes", n, got)
		}
	}
	return nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "footprint:", err)
	os.Exit(1)
}

// maxRSS is the process's peak resident set in KiB.
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

// currentRSS is the process's resident set now, in bytes.
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
