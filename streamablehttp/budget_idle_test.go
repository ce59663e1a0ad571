package streamablehttp

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// Regression: a stream reserved its read's room in the budget, and took
// its place in the order of messages, before its Read returned. An idle
// stream (the legacy GET stream, blocked in Read with nothing to say)
// then counted as the oldest message for good, and every other stream
// stopped at the budget: a legacy session could not receive a message
// near MaxMessageSize (nor report one over it), and its call hung until
// its context ended.
func TestBudgetIdleStreamDoesNotStallOthers(t *testing.T) {
	const limit = 1 << 20
	b := newBudget(limit)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	idleR, idleW := io.Pipe()
	defer idleW.Close()
	idle := b.reader(ctx, idleR)
	idleDone := make(chan struct{})
	go func() {
		defer close(idleDone)
		idle.Read(make([]byte, 4096)) // blocks: nothing is ever written
	}()
	// Wait until the idle stream holds its reservation.
	for {
		b.mu.Lock()
		used := b.used
		b.mu.Unlock()
		if used > 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the idle stream never reserved its read")
		}
		time.Sleep(time.Millisecond) // polling a counter; nothing to wait on
	}

	// One message larger than the budget on another stream reads to its end.
	busy := b.reader(ctx, strings.NewReader(strings.Repeat("x", limit+limit/2)))
	n, err := io.Copy(io.Discard, busy)
	if err != nil {
		t.Fatalf("the busy stream stopped after %d bytes: %v (an idle stream took the budget's turn)", n, err)
	}
	busy.done()
	idleW.Close()
	<-idleDone
	idle.done()
}
