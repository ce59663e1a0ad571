//go:build unix

package stdio_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
)

// TestConnectDeadlineKeptAgainstSilentStubbornServer: "deadlines overrun
// on stdio". Connect with a deadline against a server that answers
// nothing and ignores SIGTERM returned only after the whole shutdown
// sequence (2 s past the deadline, 4 s when SIGTERM is ignored). The
// deadline is now kept: the process group is killed at once, and no
// process is left.
func TestConnectDeadlineKeptAgainstSilentStubbornServer(t *testing.T) {
	c := startServer(t, "silentstubborn", stdio.Options{StdinGrace: 2 * time.Second, TermGrace: 2 * time.Second})
	const deadline = 500 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	_, err := transport.Connect(ctx, c, nil)
	elapsed := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Connect: %v, want a deadline error", err)
	}
	if elapsed > deadline+500*time.Millisecond {
		t.Fatalf("Connect returned %v after its %v deadline", elapsed-deadline, deadline)
	}
	c.Close() // waits for the shutdown the failed Connect began
	if err := syscall.Kill(c.Pid(), 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("server still there after the failed Connect: %v", err)
	}
}

// TestCloseContextKillsAtTheDeadline: a Session closed with a context
// that ends before a stubborn server's graceful shutdown kills its group
// then and returns, instead of running the graces out.
func TestCloseContextKillsAtTheDeadline(t *testing.T) {
	c := startServer(t, "stubbornreference", stdio.Options{StdinGrace: 2 * time.Second, TermGrace: 2 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := transport.Connect(ctx, c, &transport.Options{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	cctx, ccancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer ccancel()
	start := time.Now()
	err = s.CloseContext(cctx)
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Fatalf("CloseContext took %v with a 200ms context", elapsed)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("CloseContext: %v, want the context's error", err)
	}
	c.Close()
	if err := syscall.Kill(c.Pid(), 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("server still there: %v", err)
	}
}
