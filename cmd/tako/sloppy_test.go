package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Servers that are not what the URL or the command promised: the one-line
// message must say what was seen, and come at once.

// TestHTTPWebPageFailsAtOnce: an --http URL that serves a web page with
// status 200 (a login portal, a site's front page) held `tako tools` for
// its whole timeout (60 s by default) and then said only "timed out". It
// now exits 3 at once, in one line naming what came back and the page's
// title. Default flags: no --timeout.
func TestHTTPWebPageFailsAtOnce(t *testing.T) {
	t.Parallel()
	var requests atomic.Int32
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><html><head><title>Sign in &middot; Example SSO</title></head><body>"+strings.Repeat("<p>x</p>", 2000)+"</body></html>")
	}))
	defer hs.Close()
	start := time.Now()
	r := tako(t, "tools", "--http", hs.URL+"/mcp")
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("tako tools took %v to fail, want under 2s", d.Round(time.Millisecond))
	}
	r.wantFailure(t, 3, "tako: connect: the server answered text/html (Sign in · Example SSO), not JSON or an event stream: is the URL the server's MCP endpoint (often /mcp)?")
	if n := requests.Load(); n != 1 {
		t.Errorf("the server got %d requests, want 1 (the probe)", n)
	}
}

// TestHTTPSiteFrontPageFailsAtOnce: a web site that refuses the POST (405)
// and serves its page to a GET: the 2024-11-05 fallback's GET gets the
// page, and the message says so rather than only "405".
func TestHTTPSiteFrontPageFailsAtOnce(t *testing.T) {
	t.Parallel()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><head><title>Welcome</title></head></html>")
	}))
	defer hs.Close()
	start := time.Now()
	r := tako(t, "tools", "--http", hs.URL)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("tako tools took %v to fail, want under 2s", d.Round(time.Millisecond))
	}
	r.wantFailure(t, 3, "the server answered text/html (Welcome), not an event stream: is the URL the server's MCP endpoint")
}

// TestStdioUsageOnStdout: a command that prints its usage on stdout and
// exits was reported as having "wrote nothing on stderr (-v shows what it
// wrote on stdout)": the message now shows it.
func TestStdioUsageOnStdout(t *testing.T) {
	t.Parallel()
	r := tako(t, append([]string{"tools"}, helperArgs(t, "usage-on-stdout")...)...)
	r.wantFailure(t, 3, `connect: the server exited with status 2 and wrote nothing on stderr; stdout carried 2 lines that are not JSON-RPC, the first: "Usage: helper [--port N]"`)
	if strings.Contains(r.stderr, "\x1b") {
		t.Errorf("the message keeps the terminal escapes: %q", r.stderr)
	}
}

// TestStdioLogsOnStdoutTimeout: a command that writes log lines on stdout
// and answers nothing: the timeout message says what stdout carried.
func TestStdioLogsOnStdoutTimeout(t *testing.T) {
	t.Parallel()
	r := tako(t, append([]string{"tools", "--timeout", "4s"}, helperArgs(t, "logs-on-stdout")...)...)
	r.wantFailure(t, 3, `connect: timed out after 4s (see --timeout); stdout carried 2 lines that are not JSON-RPC, the first: "Usage: helper [--port N]"`)
}
