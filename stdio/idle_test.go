package stdio_test

import (
	"fmt"
	"runtime"
	"testing"

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
