//go:build linux

package stdio_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
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
// The servers' exits are now watched in the runtime's poller, and no
// thread of this process is in the kernel's wait.
func TestIdleServersHoldNoThreads(t *testing.T) {
	const n = 8
	for range n {
		c := startServer(t, "echo", stdio.Options{})
		mustCall(t, c, mcp.Int64ID(1), "echo", map[string]string{"text": "hé \"there\"\n"})
	}
	waitForWatcher(t)
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

// TestIdleServerHasNoWaiterGoroutine pins the fix for each running server
// having a goroutine of its own parked on its pidfd, an idle session's
// third beside the reader and the stderr drain: one goroutine now watches
// them all, and ends when the last has exited.
func TestIdleServerHasNoWaiterGoroutine(t *testing.T) {
	const n = 6
	g0 := runtime.NumGoroutine()
	conns := make([]*stdio.Conn, n)
	for i := range conns {
		conns[i] = startServer(t, "echo", stdio.Options{})
		mustCall(t, conns[i], mcp.Int64ID(1), "echo", map[string]string{"text": fmt.Sprintf("«idle %d»\n", i)})
	}
	waitForWatcher(t)
	if w := count("stdio.(*Conn).wait"); w > 0 {
		t.Errorf("%d goroutines wait for one server each, want none:\n%s", w, goroutines())
	}
	if w := count("stdio.watchExits"); w != 1 {
		t.Errorf("%d goroutines watch the servers' exits, want 1", w)
	}
	// The reader and the stderr drain of each, and the watcher. (Other
	// tests' goroutines may still be ending, never starting.)
	if got := runtime.NumGoroutine() - g0; got > 2*n+1 {
		t.Errorf("%d idle servers run %d goroutines, want at most %d:\n%s", n, got, 2*n+1, goroutines())
	}
	for _, c := range conns {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for count("stdio.watchExits") > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the exit watcher outlived every server:\n%s", goroutines())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestManyServersExitAtOnce: more servers die together than the watcher
// takes events at a time (32), and each Conn still reports its own exit.
func TestManyServersExitAtOnce(t *testing.T) {
	const n = 40
	conns := make([]*stdio.Conn, n)
	for i := range conns {
		conns[i] = startServer(t, "echo", stdio.Options{})
	}
	waitForWatcher(t)
	for _, c := range conns {
		if err := syscall.Kill(c.Pid(), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i, c := range conns {
		_, err := c.Read(ctx)
		var ee *stdio.ExitError
		if !errors.As(err, &ee) || ee.Signal != "SIGKILL" {
			t.Fatalf("server %d, killed: Read returned %v, want an *ExitError for SIGKILL", i, err)
		}
	}
}

// waitForWatcher waits until the exit watcher is parked in the poller.
func waitForWatcher(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for count("stdio.watchExits", "runtime_pollWait") == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no goroutine watches the servers' exits in the poller; the goroutines:\n%s", goroutines())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// count is how many goroutines have every one of frames in their stacks.
func count(frames ...string) int {
	total := 0
	for _, rec := range strings.Split(goroutines(), "\n\n") {
		all := true
		for _, f := range frames {
			all = all && strings.Contains(rec, f)
		}
		if all {
			var k int
			if _, err := fmt.Sscan(rec, &k); err == nil {
				total += k
			}
		}
	}
	return total
}

// goroutines is this process's goroutines, alike ones counted together.
func goroutines() string {
	var b strings.Builder
	pprof.Lookup("goroutine").WriteTo(&b, 1)
	return b.String()
}
