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
// deadline is now kept: the process group is killed at once (Abort), and
// no process is left by the time Connect returns, with the graceful
// shutdown's 4 s still to run. (Checked before Close, which would wait
// those out and hide a deadline path that only returned early.)
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
	requireGone(t, c.Pid(), "Connect returned at its deadline")
	c.Close()
}

// requireGone fails the test unless the process pid and its group are
// gone (and reaped) when what happened.
func requireGone(t *testing.T, pid int, what string) {
	t.Helper()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("%s, and the server (pid %d) is still there: kill(pid, 0) = %v", what, pid, err)
	}
	if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("%s, and the server's process group is still there: kill(-pid, 0) = %v", what, err)
	}
}

// TestCloseContextKillsAtTheDeadline: a Session closed with a context
// that ends before a stubborn server's graceful shutdown kills its group
// then and returns, instead of running the graces out: the server is gone
// when CloseContext returns, not only once Close has waited.
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
	requireGone(t, c.Pid(), "CloseContext returned at its deadline")
	c.Close()
}
