//go:build linux

package stdio_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/stdio"
)

// TestIdleServersHoldNoThreads pins the fix for every running server
// holding an OS thread of the client: the waiter goroutine sat in the
// waitid system call for the server's life, and a goroutine in a blocking
// system call keeps its thread, with 48 KB of runtime stacks (42 KB of
// stacks per idle session in bench/'s sessions suite, against go-sdk's 8).
// The waiters now wait in the runtime's poller, on the servers' pidfds,
// and no thread of this process is in the kernel's wait.
func TestIdleServersHoldNoThreads(t *testing.T) {
	const n = 8
	for range n {
		c := startServer(t, "echo", stdio.Options{})
		mustCall(t, c, mcp.Int64ID(1), "echo", map[string]string{"text": "hé \"there\"\n"})
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		parked := waitersInPoller()
		if parked >= n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d servers' waiters wait in the poller; the goroutines:\n%s", parked, n, goroutines())
		}
		time.Sleep(10 * time.Millisecond)
	}
	tasks, _ := filepath.Glob("/proc/self/task/*/wchan")
	readable, waiting := 0, 0
	for _, p := range tasks {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if w := string(b); w != "" && w != "0" {
			readable++
		}
		if string(b) == "do_wait" {
			waiting++
		}
	}
	if readable == 0 {
		mcptest.SkipOrFail(t, "this kernel shows no thread's wait channel (/proc/self/task/*/wchan)")
	}
	if waiting > 0 {
		t.Errorf("%d threads of this process are blocked waiting for a child, want 0", waiting)
	}
}

// waitersInPoller counts the stdio waiter goroutines parked on a pidfd.
func waitersInPoller() int {
	count := 0
	for _, rec := range strings.Split(goroutines(), "\n\n") {
		if strings.Contains(rec, "stdio.awaitExit") && strings.Contains(rec, "runtime_pollWait") {
			var k int
			if _, err := fmt.Sscan(rec, &k); err == nil {
				count += k
			}
		}
	}
	return count
}

// goroutines is this process's goroutines, alike ones counted together.
func goroutines() string {
	var b strings.Builder
	pprof.Lookup("goroutine").WriteTo(&b, 1)
	return b.String()
}
