package stdio_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/stdio"
)

// TestIdleConnsHoldNoReadBuffers pins the fix for every stdio Conn holding
// its 64 KiB read buffer, and a 64 KiB stack for the stderr goroutine
// (whose 32 KiB read buffer lived on it), for as long as it lived: 20 idle
// Conns held about 2.6 MiB between them. Its read buffer is now 4 KiB
// (longer lines are gathered in pooled blocks, as they were past 64 KiB).
func TestIdleConnsHoldNoReadBuffers(t *testing.T) {
	const n = 20
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	g0 := runtime.NumGoroutine()
	conns := make([]*stdio.Conn, n)
	for i := range conns {
		conns[i] = startServer(t, "echo", stdio.Options{})
		mustCall(t, conns[i], mcp.Int64ID(1), "echo", map[string]string{"text": fmt.Sprint("call ", i)})
	}
	runtime.GC()
	runtime.GC() // and the pool's victims
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	heap := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	stack := (int64(after.StackInuse) - int64(before.StackInuse)) / n
	t.Logf("per idle Conn: %d bytes of heap, %d of goroutine stacks, %d goroutines", heap, stack, (runtime.NumGoroutine()-g0)/n)
	if heap > 24<<10 {
		t.Errorf("an idle Conn holds %d bytes of heap, want at most 24 KiB (no 64 KiB read buffer)", heap)
	}
	// Three goroutines (the reader, stderr's, the waiter) and the thread
	// the waiter's wait4 holds, whose system stack counts here too: about
	// 44 KiB. With the stderr buffer on its stack it was 104 KiB.
	if stack > 64<<10 {
		t.Errorf("an idle Conn's goroutines hold %d bytes of stack, want at most 64 KiB", stack)
	}
	// They still read what comes next, long and short.
	for i, c := range conns {
		long := fmt.Sprintf("%0*d", 200<<10, i)
		m := mustCall(t, c, mcp.Int64ID(2), "echo", map[string]string{"text": long})
		if len(m.Result) < len(long) {
			t.Fatalf("Conn %d: a 200 KiB answer after idling came back as %d bytes", i, len(m.Result))
		}
		mustCall(t, c, mcp.Int64ID(3), "echo", map[string]string{"text": "short"})
	}
}

// TestIdleConnGivesBackItsReadBuffer pins the fix for an idle Conn holding
// its 4 KiB read buffer for its whole life, over a third of an idle
// session's heap: once every line read is handled, the buffer goes back on
// the spare list, and the next message takes one again.
func TestIdleConnGivesBackItsReadBuffer(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the framer waits for a readable pipe on Linux only (wait_linux.go)")
	}
	conns := make([]*stdio.Conn, 3)
	for i := range conns {
		conns[i] = startServer(t, "echo", stdio.Options{})
		// With the list empty, the answer is read into a new buffer:
		// that one must come back.
		stdio.SpareReaders(true)
		mustCall(t, conns[i], mcp.Int64ID(1), "echo", map[string]string{"text": fmt.Sprintf("«call %d»\n\t\"quoted\"", i)})
		// The reading goroutine gives it back just after it delivers
		// the answer, so the list can trail the call for a moment.
		deadline := time.Now().Add(10 * time.Second)
		for stdio.SpareReaders(false) == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("Conn %d, idle after its call, kept its read buffer", i)
			}
			time.Sleep(time.Millisecond)
		}
	}
	// Idle, each takes one again for its next answers, long and short.
	for i, c := range conns {
		long := fmt.Sprintf("%0*d", 20<<10, i)
		if m := mustCall(t, c, mcp.Int64ID(2), "echo", map[string]string{"text": long}); len(m.Result) < len(long) {
			t.Fatalf("Conn %d: a 20 KiB answer after idling came back as %d bytes", i, len(m.Result))
		}
		mustCall(t, c, mcp.Int64ID(3), "echo", map[string]string{"text": "short"})
	}
}
