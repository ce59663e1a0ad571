package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tako-mcp/tako/internal/testserve"
)

// demoServer is the path of the demo server built by TestMain, or empty
// with demoBuildErr saying why not.
var (
	demoServer   string
	demoBuildErr error
	// testDir is removed when the tests end: for what they build.
	testDir string
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helperMain(mode))
	}
	dir, err := os.MkdirTemp("", "tako-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testDir = dir
	demoServer, demoBuildErr = testserve.BuildDemoServer(dir)
	// Every session and every child process must be gone once run returns:
	// a goroutine left when the tests pass is a leak in tako or in this
	// command.
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		os.RemoveAll(dir)
		os.Exit(code)
	}))
}

// demoCommand returns the --stdio value that runs the demo server.
func demoCommand(t *testing.T) string {
	t.Helper()
	if demoBuildErr != nil {
		t.Fatalf("no demo server: %v", demoBuildErr)
	}
	return shellQuote(demoServer)
}

// result is what one run of tako left behind.
type result struct {
	code           int
	stdout, stderr string
}

// tako runs the command in-process, as main would, and returns its status
// and output.
func tako(t *testing.T, args ...string) result {
	t.Helper()
	return takoCtx(t, context.Background(), args...)
}

// refused runs a command that must refuse its flags at once, under a
// deadline: one that starts serving instead (a bridge whose flag check
// is gone) ends with the deadline and fails the test, rather than hang it
// until the test binary's timeout.
func refused(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r := takoCtx(t, ctx, args...)
	if ctx.Err() != nil {
		t.Errorf("tako %q ran until the test's deadline instead of refusing its flags", args)
	}
	return r
}

func takoCtx(t *testing.T, ctx context.Context, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, &stdout, &stderr)
	r := result{code: code, stdout: stdout.String(), stderr: stderr.String()}
	t.Logf("tako %q: exit %d\nstdout: %s\nstderr: %s", args, r.code, clip(r.stdout), clip(r.stderr))
	return r
}

// clip shortens s for a log line.
func clip(s string) string {
	if len(s) > 2000 {
		return fmt.Sprintf("%s... (%d bytes)", s[:2000], len(s))
	}
	return s
}

// wantFailure checks the exit status and that stderr is exactly one line
// starting with "tako: " and containing each of the given strings.
func (r result) wantFailure(t *testing.T, code int, contains ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit status %d, want %d", r.code, code)
	}
	if !strings.HasPrefix(r.stderr, "tako: ") || !strings.HasSuffix(r.stderr, "\n") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("stderr is not one line starting with \"tako: \": %q", r.stderr)
	}
	for _, s := range contains {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr %q does not contain %q", r.stderr, s)
		}
	}
}
