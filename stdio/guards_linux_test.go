//go:build linux

package stdio_test

import (
	"context"
	"os"
	"runtime/debug"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/stdio"
)

// openFDs is how many descriptors this process has open.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count open descriptors: %v", err)
	}
	return len(ents)
}

// TestStartAndCloseLeaveNoDescriptorsOpen pins the closing of the Conn's
// pipe ends: Close closes its read ends of the server's stdout and stderr,
// and a Start that fails closes every pipe it made. Without that the
// descriptors stay open until the collector happens to finalize their
// os.Files, which a host that starts and stops servers (or retries a
// missing command) may not do before it runs out of descriptors. The
// collector is off while descriptors are counted, so that no finalizer
// hides a leak.
func TestStartAndCloseLeaveNoDescriptorsOpen(t *testing.T) {
	const cycles = 10
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	// A server that runs throughout keeps the exit watcher, and its epoll
	// descriptor, alive: the watcher closes that after the last server
	// exits, which may be just after Close returns.
	startServer(t, "sleep", stdio.Options{StdinGrace: -1, TermGrace: -1})

	t.Run("Close", func(t *testing.T) {
		cycle := func() {
			c := startServer(t, "echo", stdio.Options{})
			mustCall(t, c, mcp.Int64ID(1), "echo", map[string]string{"text": "«bonjour»"})
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
		}
		cycle() // whatever a first server opens once
		before := openFDs(t)
		for range cycles {
			cycle()
		}
		if after := openFDs(t); after > before {
			t.Errorf("%d Start and Close cycles left %d more descriptors open (%d, then %d)", cycles, after-before, before, after)
		}
	})

	t.Run("failed Start", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		before := openFDs(t)
		for range cycles {
			if c, err := stdio.Start(ctx, &stdio.Options{Command: "tako-no-such-command-3f9a"}); err == nil {
				_ = c.Close()
				t.Fatal("Start of a missing command succeeded")
			}
		}
		if after := openFDs(t); after > before {
			t.Errorf("%d failed Starts left %d more descriptors open (%d, then %d)", cycles, after-before, before, after)
		}
	})
}
