package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tako-mcp/tako/internal/syncbuf"
)

// TestInspectCommand: `tako inspect` reads its command line as tako shell
// does, refuses what it cannot do with a usage error (2) or a failure (3)
// before it serves anything, and otherwise serves the page until
// interrupted, then exits 0; `tako help inspect` shows its flags.
func TestInspectCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"inspect", "extra"}, exitUsage, "takes no arguments"},
		{[]string{"inspect", "--ca", "x.pem"}, exitUsage, "--ca applies to the --grpc before it"},
		{[]string{"inspect", "--listen", "0.0.0.0:0"}, exitFailure, "not a loopback address"},
		{[]string{"inspect", "--bogus"}, exitUsage, "unknown flag"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), tc.args, &stdout, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.says) {
			t.Errorf("tako %q: exit %d, %q; want %d saying %q", tc.args, code, stderr.String(), tc.code, tc.says)
		}
	}
	var help bytes.Buffer
	run(context.Background(), []string{"help", "inspect"}, &help, io.Discard)
	for _, flag := range []string{"--listen ADDR", "--no-browser", "--config FILE", "--grpc", "token"} {
		if !strings.Contains(help.String(), flag) {
			t.Errorf("tako help inspect lacks %q:\n%s", flag, help.String())
		}
	}

	// Served, with the demo server, until the context ends.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	var stderr syncbuf.Buffer
	go func() {
		code := run(ctx, []string{"inspect", "--no-browser", "--stdio", demoCommand(t)}, pw, &stderr)
		pw.Close()
		done <- code
	}()
	line := make([]byte, 256)
	n, err := pr.Read(line)
	if err != nil {
		t.Fatalf("no URL: %v (%s)", err, stderr.String())
	}
	go io.Copy(io.Discard, pr)
	url, ok := strings.CutPrefix(strings.TrimSpace(string(line[:n])), "tako inspect: ")
	if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.Contains(url, "/?token=") {
		t.Fatalf("tako inspect printed %q", line[:n])
	}
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the page: HTTP %d", resp.StatusCode)
	}
	base, _, _ := strings.Cut(url, "/?")
	resp, err = c.Get(base + "/api/state")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the API without the token: HTTP %d", resp.StatusCode)
	}
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("interrupted, tako inspect exited %d: %s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("tako inspect did not end within 20 s of the interrupt")
	}
}
