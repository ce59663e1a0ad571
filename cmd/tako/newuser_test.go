package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tako-mcp/tako/internal/testserve"
	"github.com/tako-mcp/tako/mcptest"
)

// The rough edges a new user met on a first afternoon (issue 22), each
// pinned by the binary's own output.

// TestConnectionRefusedSaidOnce: a server that is not running is one
// clause with the URL once, not "connect: mcp handshake: initialize:
// write: mcp http: initialize: Post ...: dial tcp ...: connect: connection
// refused (mcp connection lost)".
func TestConnectionRefusedSaidOnce(t *testing.T) {
	t.Parallel()
	addr := testserve.ClosedAddr(t)
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

// watchTako runs tako watch in-process until stdout shows want, then
// interrupts it as Ctrl-C would.
func watchTako(t *testing.T, want string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stdout := &watchWriter{needle: want, fire: cancel}
	var stderr bytes.Buffer
	code := run(ctx, args, stdout, &stderr)
	r := result{code: code, stdout: stdout.String(), stderr: stderr.String()}
	t.Logf("tako %q: exit %d\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
	if !strings.Contains(r.stdout, want) {
		t.Fatalf("the watch did not show %q within 30s", want)
	}
	return r
}

// TestWatch: tako watch subscribes to the resources given and prints each
// update, each list change with the names added and removed, and the log
// messages, each with the time; Ctrl-C ends it with status 0.
func TestWatch(t *testing.T) {
	t.Parallel()
	r := watchTako(t, "the tools changed", append([]string{"watch", "mem://a", "--log-level", "info"}, helperArgs(t, "notifier")...)...)
	if r.code != 0 {
		t.Errorf("exit %d after Ctrl-C, want 0", r.code)
	}
	for _, re := range []string{
		`(?m)^\d\d:\d\d:\d\d \[info\] helper: hello from the helper$`,
		`(?m)^\d\d:\d\d:\d\d resource updated: mem://a$`,
		`(?m)^\d\d:\d\d:\d\d the tools changed: \+ added, - content, - hang, - die, - rpcerror$`,
	} {
		if !regexp.MustCompile(re).MatchString(r.stdout) {
			t.Errorf("stdout does not match %s", re)
		}
	}
	if !strings.Contains(r.stderr, "tako: watching helper 1.0.0 for updates of 1 resource(s), list changes and log messages (Ctrl-C stops)") {
		t.Errorf("stderr %q", r.stderr)
	}
	// --json: each notification as the protocol has it.
	r = watchTako(t, `"method":"notifications/tools/list_changed"`, append([]string{"watch", "mem://a", "--json"}, helperArgs(t, "notifier")...)...)
	for _, want := range []string{`{"method":"notifications/resources/updated","params":{"uri":"mem://a"}}` + "\n", `{"method":"notifications/tools/list_changed"}` + "\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--json: stdout lacks %q", want)
		}
	}
	// A server without subscriptions says so.
	r = tako(t, append([]string{"watch", "mem://a"}, helperArgs(t, "server")...)...)
	r.wantFailure(t, exitUsage, "helper 1.0.0 does not offer resource subscriptions")
}

// TestWatchTimeout: --timeout bounds a watch, which then ends with status
// 0, not as a command that timed out.
func TestWatchTimeout(t *testing.T) {
	t.Parallel()
	r := tako(t, append([]string{"watch", "--timeout", "2s"}, helperArgs(t, "notifier")...)...)
	if r.code != 0 || !strings.Contains(r.stderr, "tako: watching helper") {
		t.Errorf("exit %d, stderr %q; want 0", r.code, r.stderr)
	}
}

// TestRootsGiven: --root DIR (repeatable) answers a server's roots/list
// with those directories, as file:// URIs; without it a server that
// requires roots says how to give them, not -32021 alone.
func TestRootsGiven(t *testing.T) {
	t.Parallel()
	demo := demoCommand(t)
	a, b := t.TempDir(), t.TempDir()
	r := tako(t, "call", "roots", "--root", a, "--stdio", demo, "--root", b)
	want := fmt.Sprintf(`[{"uri":"file://%s","name":%q},{"uri":"file://%s","name":%q}]`, a, filepath.Base(a), b, filepath.Base(b))
	if r.code != 0 || strings.TrimSpace(r.stdout) != want {
		t.Errorf("exit %d, stdout %q, want %s", r.code, r.stdout, want)
	}
	r = tako(t, "call", "roots", "--stdio", demo)
	r.wantFailure(t, exitFailure, "error -32021", "it asks for roots: give --root DIR")
	r = tako(t, "tools", "--root", filepath.Join(a, "nope"), "--stdio", demo)
	r.wantFailure(t, exitUsage, "no such file or directory")
	// The shell gives them to every server.
	var stdout, stderr bytes.Buffer
	err := runShell(context.Background(), []string{"--root", a, "--stdio", demo, "--stdio", demo + " -name second", "--no-history"},
		strings.NewReader("call roots\nuse demo-server2\ncall roots\n"), &stdout, &stderr)
	if one := fmt.Sprintf(`[{"uri":"file://%s","name":%q}]`, a, filepath.Base(a)); err != nil || strings.Count(stdout.String(), one) != 2 {
		t.Errorf("shell: %v, stdout %q", err, stdout.String())
	}
}

// modelAnswers is an OpenAI-compatible model that answers every request
// with text, and records the requests' messages.
func modelAnswers(t *testing.T, text string) (url string, asked func() []string) {
	t.Helper()
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, string(body))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		answer, _ := json.Marshal(text)
		fmt.Fprintf(w, `{"model":"m-1","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":%s}}]}`, answer)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}

// TestCallSamplingWithProvider: with --provider, a server's sampling
// request during a call is answered by that model, and from a script the
// answer is sent as it came, with a line on stderr.
func TestCallSamplingWithProvider(t *testing.T) {
	t.Parallel()
	url, asked := modelAnswers(t, "Paris.")
	r := tako(t, "call", "sample", "prompt=The capital of France?", "--provider", "openai", "--base-url", url, "--model", "m", "--stdio", demoCommand(t))
	if r.code != 0 || !strings.Contains(r.stdout, "Paris.") {
		t.Errorf("exit %d, stdout %q", r.code, r.stdout)
	}
	if !strings.Contains(r.stderr, "⇄ sampling: 1 message(s) → Paris.") {
		t.Errorf("stderr %q", r.stderr)
	}
	if got := asked(); len(got) != 1 || !strings.Contains(got[0], "The capital of France?") {
		t.Errorf("the model was asked %q", got)
	}
	// Without a provider or a person, the server is told no sampling,
	// and the message says how to give it.
	r = tako(t, "call", "sample", "prompt=hi", "--stdio", demoCommand(t))
	r.wantFailure(t, exitFailure, "give --provider and --model, or run the command at a terminal")
	r = tako(t, "call", "sample", "prompt=hi", "--model", "m", "--stdio", demoCommand(t))
	r.wantFailure(t, exitUsage, "--model, --base-url and --api-key-env go with --provider")
	r = tako(t, "bridge", "--listen-ws", "127.0.0.1:0", "--root", ".", "--stdio", demoCommand(t))
	r.wantFailure(t, exitUsage, "--root and --provider are for the commands that talk to a server")
}

// TestVersion: tako version and tako --version print the same line, with
// the module's version and the Go release.
func TestVersion(t *testing.T) {
	t.Parallel()
	a, b := tako(t, "version"), tako(t, "--version")
	if a.code != 0 || a.stdout != b.stdout || !strings.HasPrefix(a.stdout, "tako ") || !strings.Contains(a.stdout, runtime.Version()) {
		t.Errorf("version %q, --version %q", a.stdout, b.stdout)
	}
	for _, c := range []struct {
		bi   debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "tako v1.2.3 ("},
		{debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201213000-e26cac4abcde+dirty"}}, "tako v0.0.0-20261201213000-e26cac4abcde+dirty ("},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "e26cac4abcdef0123"}, {Key: "vcs.modified", Value: "true"}}},
			"tako (devel) commit e26cac4abcde (modified) ("},
	} {
		if got := versionLine(&c.bi, true); !strings.HasPrefix(got, c.want) {
			t.Errorf("versionLine(%+v) = %q, want %q...", c.bi.Main, got, c.want)
		}
	}
	tako(t, "version", "extra").wantFailure(t, exitUsage, "version takes no arguments")
}

// TestFlagsBeforeTheCommand: every command takes its flags anywhere,
// before its name too, and --help anywhere.
func TestFlagsBeforeTheCommand(t *testing.T) {
	t.Parallel()
	demo := demoCommand(t)
	r := tako(t, "--timeout", "30s", "--stdio", demo, "call", "echo", "message=early")
	if r.code != 0 || !strings.Contains(r.stdout, "early") {
		t.Errorf("call: exit %d, stdout %q", r.code, r.stdout)
	}
	url, _ := modelAnswers(t, "done")
	r = tako(t, "--timeout", "30s", "--provider", "openai", "agent", "--model", "m", "--base-url", url, "--stdio", demo, "hi")
	if r.code != 0 || r.stdout != "done\n" {
		t.Errorf("agent: exit %d, stdout %q", r.code, r.stdout)
	}
	for _, args := range [][]string{
		{"-v", "agent", "--help"}, {"--timeout", "5s", "shell", "--help"}, {"login", "https://x.example/mcp", "--help"},
		{"help", "--help"}, {"completion", "--help"}, {"version", "--help"}, {"watch", "--stdio", demo, "--help"},
		{"--help", "tools"}, {"tools", "--stdio", demo, "-h"},
	} {
		r := tako(t, args...)
		if r.code != 0 || !(strings.HasPrefix(r.stdout, "Usage:") || strings.HasPrefix(r.stdout, "tako: a command-line client")) {
			t.Errorf("%q: exit %d, stdout %.60q", args, r.code, r.stdout)
		}
	}
}

// TestCompletionScripts: each script parses in its shell, and bash's and
// fish's complete commands, flags anywhere, and flag values.
func TestCompletionScripts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, sh := range completionShells {
		r := tako(t, "completion", sh)
		if r.code != 0 || r.stdout == "" {
			t.Fatalf("completion %s: exit %d", sh, r.code)
		}
		if err := os.WriteFile(filepath.Join(dir, sh), []byte(r.stdout), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	shellRun := func(sh string, args ...string) string {
		t.Helper()
		bin, err := exec.LookPath(sh)
		if err != nil {
			mcptest.SkipOrFail(t, sh+" is not installed")
		}
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %q: %v\n%s", sh, args, err, out)
		}
		return string(out)
	}
	shellRun("bash", "-n", filepath.Join(dir, "bash"))
	got := shellRun("bash", "-c", `source "$1"
comp() { COMP_WORDS=("$@"); COMP_CWORD=$(($#-1)); COMPREPLY=(); _tako; echo "${COMPREPLY[*]}"; }
comp tako to; comp tako --stdio "x y" wa; comp tako tools --for; comp tako tools --format ""; comp tako agent --pre; comp tako completion ""`, "bash", filepath.Join(dir, "bash"))
	if want := "tools\nwatch\n--format\ntable json pretty\n--prefix\nbash zsh fish\n"; got != want {
		t.Errorf("bash completes\n%s\nwant\n%s", got, want)
	}
	shellRun("zsh", "-n", filepath.Join(dir, "zsh"))
	got = shellRun("zsh", "-c", `compdef() { print compdef $*; }; compadd() { print -r -- "$*"; }; _describe() { print -r -- "${(P)2}"; }
source "$1"; words=(tako tools --format ""); CURRENT=4; _tako; words=(tako --stdio x agent --pre); CURRENT=5; _tako`, "zsh", filepath.Join(dir, "zsh"))
	if !strings.HasPrefix(got, "compdef _tako tako\n-- table json pretty\n") || !strings.Contains(got, "--prefix") {
		t.Errorf("zsh completes\n%s", got)
	}
	shellRun("fish", "--no-execute", filepath.Join(dir, "fish"))
	got = shellRun("fish", "-c", `source $argv[1]; complete -C "tako to"; complete -C "tako tools --format "; complete -C "tako agent --pre"`, filepath.Join(dir, "fish"))
	for _, want := range []string{"tools\tlist the server's tools, or describe one\n", "json\n", "--prefix\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("fish completes\n%s\nwithout %q", got, want)
		}
	}
}

// TestAuthFailureSaidOnce: a server that wants OAuth, whose metadata is a
// web page, is one clause on what the authorization found, not the
// handshake's layers around it.
func TestAuthFailureSaidOnce(t *testing.T) {
	t.Setenv(authDirEnv, t.TempDir())
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/mcp" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, errorPage)
	}))
	defer srv.Close()
	r := tako(t, "tools", "--http", srv.URL+"/mcp")
	r.wantFailure(t, exitFailure, "connect: the server answered HTTP 401 Unauthorized and tako could not authorize: "+srv.URL+"/.well-known/oauth-protected-resource is not a JSON metadata document")
	for _, s := range []string{"handshake", "write:", "mcp http", "auth:"} {
		if strings.Contains(r.stderr, s) {
			t.Errorf("the layers show (%q): %q", s, r.stderr)
		}
	}
}
