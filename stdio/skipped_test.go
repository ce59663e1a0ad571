package stdio_test

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
)

// bannerFirst is the first of bannerLines as the error shows it.
const bannerFirst = "INFO Listening on http://127.0.0.1:8080"

// startBanner starts the test binary in a banner mode, for Connect.
func startBanner(t *testing.T, mode string) *stdio.Conn {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c, err := stdio.Start(context.Background(), &stdio.Options{
		Command: exe,
		Env:     []string{"TAKO_STDIO_TEST_SERVER=" + mode, "GORACE=atexit_sleep_ms=0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// wantSkippedInError checks that err reports the three banner lines, and
// stays one bounded line of printable text.
func wantSkippedInError(t *testing.T, err error) {
	t.Helper()
	var sle *stdio.SkippedLinesError
	if !errors.As(err, &sle) {
		t.Fatalf("err = %v, want it to carry a *stdio.SkippedLinesError", err)
	}
	if sle.Lines != 3 || sle.First != bannerFirst {
		t.Errorf("SkippedLinesError %+v, want 3 lines, the first %q", sle, bannerFirst)
	}
	msg := err.Error()
	if want := `stdout carried 3 lines that are not JSON-RPC, the first: "` + bannerFirst + `"`; !strings.Contains(msg, want) {
		t.Errorf("error %q does not say %q", msg, want)
	}
	if strings.ContainsFunc(msg, unicode.IsControl) || len(msg) > 400 {
		t.Errorf("error is not one short printable line: %q", msg)
	}
}

// TestBannerOnStdoutTimedOutHandshakeSaysSo: a program that writes log
// lines to stdout and never answers held Connect until its deadline, and
// the error said only that: "context deadline exceeded". Without a debug
// log there was no telling it from a slow server. It now says what stdout
// carried. Default options: the probe's own timeout (3 s) and the
// caller's deadline.
func TestBannerOnStdoutTimedOutHandshakeSaysSo(t *testing.T) {
	conn := startBanner(t, "bannerhang")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	s, err := transport.Connect(ctx, conn, nil)
	if err == nil {
		s.Close()
		t.Fatal("Connect succeeded against a server that never answers")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the deadline", err)
	}
	wantSkippedInError(t, err)
}

// TestBannerOnStdoutExitedServerSaysSo: a program that prints its usage on
// stdout and exits: the error names the exit and what stdout carried.
func TestBannerOnStdoutExitedServerSaysSo(t *testing.T) {
	conn := startBanner(t, "bannerexit")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := transport.Connect(ctx, conn, nil)
	if err == nil {
		s.Close()
		t.Fatal("Connect succeeded against a server that exited")
	}
	var ee *stdio.ExitError
	if !errors.As(err, &ee) || ee.ExitCode != 3 {
		t.Errorf("err = %v, want the *ExitError of status 3", err)
	}
	wantSkippedInError(t, err)
}

// TestBannerOnStdoutWorkingServer: a server that logs to stdout and then
// serves is served; the lines are only reported, never an error.
func TestBannerOnStdoutWorkingServer(t *testing.T) {
	conn := startBanner(t, "banner")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer s.Close()
	if tools, err := s.ListTools(ctx); err != nil || len(tools) == 0 {
		t.Fatalf("ListTools: %d tools, %v", len(tools), err)
	}
	var sle *stdio.SkippedLinesError
	if err := conn.Skipped(); !errors.As(err, &sle) || sle.Lines != 3 {
		t.Errorf("Skipped() = %v, want the 3 banner lines", err)
	}
}

// TestSkippedAccount: what NewStreamConn counts as skipped (lines that are
// not JSON, and JSON that is not JSON-RPC, but not blank lines, messages,
// or a broken response, which fails its call), and how the first is shown:
// terminal escapes gone, control characters and invalid UTF-8 replaced,
// cut at about 120 bytes.
func TestSkippedAccount(t *testing.T) {
	r, w := io.Pipe()
	c := stdio.NewStreamConn(r, io.Discard, stdio.StreamOptions{})
	defer c.Close()
	sr, ok := c.(transport.SkipReporter)
	if !ok {
		t.Fatal("NewStreamConn's Conn is not a transport.SkipReporter")
	}
	if err := sr.Skipped(); err != nil {
		t.Fatalf("Skipped() before anything = %v", err)
	}
	first := "\x1b[1;31mERROR\x1b[0m\tbad \xff byte " + strings.Repeat("é", 100) + "\n"
	go io.WriteString(w, first+
		"\n  \n"+
		`{"level":"info","msg":"not JSON-RPC"}`+"\n"+
		`{"jsonrpc":"2.0","id":7,"result":"a bad escape \q"}`+"\n"+
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`+"\n")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		m, err := c.Read(ctx)
		var me *transport.MessageError
		if errors.As(err, &me) {
			continue // the broken response
		}
		if err != nil {
			t.Fatal(err)
		}
		if m.Method == mcp.NotificationMessage {
			break
		}
	}
	var sle *stdio.SkippedLinesError
	if err := sr.Skipped(); !errors.As(err, &sle) {
		t.Fatalf("Skipped() = %v", err)
	}
	if sle.Lines != 2 {
		t.Errorf("%d lines skipped, want 2", sle.Lines)
	}
	if !strings.HasPrefix(sle.First, "ERROR bad \uFFFD byte éé") || !strings.HasSuffix(sle.First, "é…") || len(sle.First) > 124 {
		t.Errorf("first line shown as %q (%d bytes)", sle.First, len(sle.First))
	}
	if strings.ContainsFunc(sle.First, unicode.IsControl) || strings.Contains(sle.First, "[0m") {
		t.Errorf("first line %q keeps control characters or escapes", sle.First)
	}
	if msg := sle.Error(); !strings.HasPrefix(msg, "stdio: stdout carried 2 lines that are not JSON-RPC, the first: ") {
		t.Errorf("message %q", msg)
	}
	one := &stdio.SkippedLinesError{Lines: 1, First: "hello"}
	if got := one.Summary(); got != `stdout carried 1 line that is not JSON-RPC: "hello"` {
		t.Errorf("Summary of one line: %q", got)
	}
}
