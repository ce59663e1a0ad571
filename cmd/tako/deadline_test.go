//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestTimeoutKeptAgainstStubbornServer: "tako call --timeout 3s took 5 s".
// Against a server that answers nothing and ignores SIGTERM, the command
// ends at its --timeout with exit status 3, not after the shutdown's
// graces, and leaves no process.
func TestTimeoutKeptAgainstStubbornServer(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	server := `/bin/sh -c "echo $$ > ` + pidFile + `; trap '' TERM; exec sleep 600"`
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := run(ctx, []string{"tools", "--timeout", "1s", "--stdio", server}, &stdout, &stderr)
	elapsed := time.Since(start)
	if code != exitFailure || !strings.Contains(stderr.String(), "timed out") {
		t.Fatalf("exit %d, stderr %q; want 3 and a timeout", code, stderr.String())
	}
	if elapsed > 1800*time.Millisecond {
		t.Fatalf("tako took %v with --timeout 1s", elapsed)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("the server (pid %d) is still there: %v", pid, err)
	}
}

// TestCallTimeoutKeptAgainstStubbornServer: the same after the handshake:
// a call that times out is followed by a close within the same deadline.
func TestCallTimeoutKeptAgainstStubbornServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := run(ctx, append([]string{"call", "hang", "--timeout", "1s"}, helperArgs(t, "stubborn")...), &stdout, &stderr)
	elapsed := time.Since(start)
	if code != exitFailure || !strings.Contains(stderr.String(), "timed out") {
		t.Fatalf("exit %d, stderr %q; want 3 and a timeout", code, stderr.String())
	}
	if elapsed > 1800*time.Millisecond {
		t.Fatalf("tako took %v with --timeout 1s (the server ignores stdin's end and SIGTERM)", elapsed)
	}
}
