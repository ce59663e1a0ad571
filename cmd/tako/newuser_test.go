package main

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The rough edges a new user met on a first afternoon (issue 22), each
// pinned by the binary's own output.

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestConnectionRefusedSaidOnce: a server that is not running is one
// clause with the URL once, not "connect: mcp handshake: initialize:
// write: mcp http: initialize: Post ...: dial tcp ...: connect: connection
// refused (mcp connection lost)".
func TestConnectionRefusedSaidOnce(t *testing.T) {
	t.Parallel()
	addr := closedPort(t)
	for _, c := range []struct{ flag, url string }{
		{"--http", "http://" + addr + "/mcp"},
		{"--ws", "ws://" + addr + "/mcp"},
	} {
		r := tako(t, "tools", c.flag, c.url)
		r.wantFailure(t, exitFailure, "cannot reach "+c.url+": connection refused (is the server running")
		for _, noise := range []string{"handshake", "mcp http", "Post", "dial tcp", "connection lost", "websocket:", "connect: connect"} {
			if strings.Contains(r.stderr, noise) {
				t.Errorf("%s: the message repeats the layers (%q): %q", c.flag, noise, r.stderr)
			}
		}
		if n := strings.Count(r.stderr, addr); n != 1 {
			t.Errorf("%s: the address is named %d times: %q", c.flag, n, r.stderr)
		}
	}
}

// errorPage is the page Python's http.server answers a wrong path with: a
// title that says nothing and a body that says a little.
const errorPage = `<!DOCTYPE HTML>
<html lang="en">
    <head>
        <meta charset="utf-8">
        <title>Error response</title>
    </head>
    <body>
        <h1>Error response</h1>
        <p>Error code: 404</p>
        <p>Message: File not found.</p>
    </body>
</html>
`

// pageServer answers every request with status and page.
func pageServer(t *testing.T, status int, page string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(status)
		io.WriteString(w, page)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// wantNoPage checks that no HTML reached the message.
func wantNoPage(t *testing.T, r result) {
	t.Helper()
	for _, s := range []string{"<", "DOCTYPE", "Error code"} {
		if strings.Contains(r.stderr, s) {
			t.Errorf("the page was dumped (%q): %q", s, r.stderr)
		}
	}
}

// TestWSPageNotDumped: a WebSocket URL that answers the handshake with a
// web page gets the --http message: the status and what to check.
func TestWSPageNotDumped(t *testing.T) {
	t.Parallel()
	u := pageServer(t, http.StatusNotFound, errorPage)
	r := tako(t, "tools", "--ws", "ws"+strings.TrimPrefix(u, "http")+"/nope")
	r.wantFailure(t, exitFailure, "connect: the server answered the WebSocket handshake with HTTP 404 Not Found: is the URL the server's MCP endpoint (often /mcp)?")
	wantNoPage(t, r)
}

// TestHostCheck403IsNotAuth: the TypeScript SDK's DNS-rebinding check
// answers 403 with a JSON-RPC error and no OAuth challenge; no login would
// change that, so the message says what the server said.
func TestHostCheck403IsNotAuth(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Invalid Host: 127.0.0.1"},"id":null}`)
	}))
	defer srv.Close()
	r := tako(t, "tools", "--http", srv.URL+"/mcp")
	r.wantFailure(t, exitFailure, "HTTP 403 Forbidden (Invalid Host: 127.0.0.1)", "Host check")
	for _, s := range []string{"auth", "login", "refuses the request"} {
		if strings.Contains(r.stderr, s) {
			t.Errorf("a Host check is reported as an authorization problem (%q): %q", s, r.stderr)
		}
	}
}

// TestUnknownToolOneRule: an unknown tool is a usage error (exit 2) with
// or without arguments, and a near name is suggested; the server is not
// called with it.
func TestUnknownToolOneRule(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"nope"}, {"nope", "a=1"}, {"nope", "{}"}} {
		r := tako(t, append(append([]string{"call"}, args...), helperArgs(t, "server")...)...)
		r.wantFailure(t, exitUsage, `the server has no tool "nope" (tako tools lists its 5 tools)`)
		if r.stdout != "" {
			t.Errorf("%q: stdout %q", args, r.stdout)
		}
	}
	r := tako(t, append([]string{"call", "evn"}, helperArgs(t, "server")...)...)
	r.wantFailure(t, exitUsage, `the server has no tool "evn"; did you mean env?`)
}

// TestMissingArgumentsOneRule: required arguments are checked whether
// pairs, a JSON object or nothing was given, and every missing one is
// named at once.
func TestMissingArgumentsOneRule(t *testing.T) {
	t.Parallel()
	demo := demoCommand(t)
	for _, args := range [][]string{{"add"}, {"add", "{}"}} {
		r := tako(t, append(append([]string{"call"}, args...), "--stdio", demo)...)
		r.wantFailure(t, exitUsage, `tool "add" needs the arguments a=... b=...; it takes (a, b)`)
	}
	for _, arg := range []string{`{"a":1}`, "a=1"} {
		r := tako(t, "call", "add", arg, "--stdio", demo)
		r.wantFailure(t, exitUsage, `tool "add" needs the argument b=...`)
	}
}

// TestCallBareWordSuggestsPair: "call echo hi" says what was meant.
func TestCallBareWordSuggestsPair(t *testing.T) {
	t.Parallel()
	demo := demoCommand(t)
	r := tako(t, "call", "echo", "hi", "--stdio", demo)
	r.wantFailure(t, exitUsage, `not "hi": did you mean message=hi?`)
	r = tako(t, "call", "echo", "hi there", "--stdio", demo)
	r.wantFailure(t, exitUsage, `did you mean message='hi there'?`)
	r = tako(t, "call", "add", "3", "--stdio", demo)
	r.wantFailure(t, exitUsage, `not "3"; tool "add" takes (a, b)`)
}

// TestRequiredArgumentWithDefault: a required argument whose schema has a
// default (as Playwright MCP's browser_take_screenshot has scale) is
// filled in, with pairs as without: the call goes through.
func TestRequiredArgumentWithDefault(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"message=boom"}, {`{"message":"boom"}`}} {
		r := tako(t, append(append([]string{"call", "rpcerror"}, args...), helperArgs(t, "server")...)...)
		// The helper answers the error it was asked for: the call reached it.
		r.wantFailure(t, exitFailure, "error -32602 (invalid params): boom")
	}
	r := tako(t, append([]string{"call", "rpcerror", "message=boom", "code=-32603"}, helperArgs(t, "server")...)...)
	r.wantFailure(t, exitFailure, "error -32603 (internal error): boom")
	r = tako(t, append([]string{"call", "rpcerror"}, helperArgs(t, "server")...)...)
	r.wantFailure(t, exitUsage, `tool "rpcerror" needs the argument message=...`)
}

// TestLongServerErrorWholeUnderJSONAndVerbose: a long error is cut for a
// person's terminal, but never with --json, and -v shows it whole.
func TestLongServerErrorWholeUnderJSONAndVerbose(t *testing.T) {
	t.Parallel()
	call := []string{"call", "rpcerror", "message=0123456789", "repeat=100"}
	whole := strings.Repeat("0123456789", 100)
	r := tako(t, append(call, helperArgs(t, "server")...)...)
	r.wantFailure(t, exitFailure)
	if strings.Contains(r.stderr, whole) || len(r.stderr) > 450 {
		t.Errorf("the message is not cut for the terminal (%d bytes)", len(r.stderr))
	}
	for _, flag := range []string{"--json", "-v"} {
		r := tako(t, append(append(call, flag), helperArgs(t, "server")...)...)
		if r.code != exitFailure || !strings.Contains(r.stderr, "tako: tools/call rpcerror: the server answered error -32602 (invalid params): "+whole+"\n") {
			t.Errorf("%s: the error is cut: exit %d, stderr %q", flag, r.code, r.stderr)
		}
	}
}

// TestNpxMisspelledPackageShowsThe404: of npm's lines, the one that says
// what went wrong, not the last one, which only names its log file.
func TestNpxMisspelledPackageShowsThe404(t *testing.T) {
	t.Parallel()
	r := tako(t, append([]string{"tools"}, helperArgs(t, "npm-404")...)...)
	r.wantFailure(t, exitFailure, "connect: the server exited with status 1: npm error 404 Not Found - GET https://registry.example/@modelcontextprotocol%2fserver-everythin")
	if strings.Contains(r.stderr, "complete log") {
		t.Errorf("the log file's line was shown: %q", r.stderr)
	}
}

// TestToolsNameDescribesOne: tako tools NAME shows one tool whole: its
// full description, its arguments and its input schema; --json the tool
// as the server listed it.
func TestToolsNameDescribesOne(t *testing.T) {
	t.Parallel()
	r := tako(t, append([]string{"tools", "env"}, helperArgs(t, "server")...)...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	for _, want := range []string{
		"env(name)\n",
		"\nReturns an environment variable.\nSecond line.\n",
		"\nArguments:\n  name  (string; required)\n",
		"\nInput schema:\n  {\n    \"type\": \"object\",",
		`"x-vendor": {`,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	r = tako(t, append([]string{"tools", "rpcerror"}, helperArgs(t, "server")...)...)
	if !strings.Contains(r.stdout, "  code     (integer; required; default -32602)\n") {
		t.Errorf("the default is not shown:\n%s", r.stdout)
	}
	r = tako(t, append([]string{"tools", "env", "--json"}, helperArgs(t, "server")...)...)
	if r.code != 0 || r.stdout != helperTool1+"\n" {
		t.Errorf("--json: exit %d, stdout %q, want the tool as listed", r.code, r.stdout)
	}
	r = tako(t, append([]string{"tools", "nope"}, helperArgs(t, "server")...)...)
	r.wantFailure(t, exitUsage, `the server has no tool "nope"`)
}

// TestTemplatesNotOffered: a server that declares resources but answers
// resources/templates/list with -32601 has no templates; that is not a
// failure.
func TestTemplatesNotOffered(t *testing.T) {
	t.Parallel()
	r := tako(t, append([]string{"templates"}, helperArgs(t, "resources")...)...)
	if r.code != 0 || r.stdout != "(the server has no resource templates)\n" || r.stderr != "" {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = tako(t, append([]string{"templates", "--json"}, helperArgs(t, "resources")...)...)
	if r.code != 0 || r.stdout != "{\"resourceTemplates\":[]}\n" {
		t.Errorf("--json: exit %d, stdout %q", r.code, r.stdout)
	}
}

// TestResultTextShownSafely: a result's text reaches the terminal without
// its escape sequences, and other control characters are shown, not
// obeyed; --json keeps the server's bytes.
func TestResultTextShownSafely(t *testing.T) {
	t.Parallel()
	want := "dim plain bell^Mback\nnext^H\n"
	r := tako(t, append([]string{"read", "mem://escapes"}, helperArgs(t, "resources")...)...)
	if r.code != 0 || r.stdout != want {
		t.Errorf("read: exit %d, stdout %q, want %q", r.code, r.stdout, want)
	}
	r = tako(t, append([]string{"read", "mem://escapes", "--json"}, helperArgs(t, "resources")...)...)
	if !strings.Contains(r.stdout, helperEscapes) {
		t.Errorf("read --json: the server's bytes were changed: %q", r.stdout)
	}
	r = tako(t, append([]string{"call", "env", "name=TAKO_ESCAPES"}, append(helperArgs(t, "server"), "--env", "TAKO_ESCAPES=\x1b[31mred\x1b[0m \x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\ \x07")...)...)
	if r.code != 0 || r.stdout != "red link ^G\n" {
		t.Errorf("call: exit %d, stdout %q", r.code, r.stdout)
	}
}
