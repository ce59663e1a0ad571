package main

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
)

// The shell's commands and completion, without a terminal: lines from a
// reader, or the shell type driven directly. The terminal itself is tested
// through a pseudo-terminal in the interop module (shell_pty_test.go).

// watchedOutput is the shell's output in a test: each write wakes the
// test that waits for a line (waitForOutput).
type watchedOutput struct {
	mu    sync.Mutex
	b     bytes.Buffer
	wrote chan struct{}
}

func newWatchedOutput() *watchedOutput { return &watchedOutput{wrote: make(chan struct{}, 1)} }

func (w *watchedOutput) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return w.b.Write(p)
}

func (w *watchedOutput) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestShellScript feeds the shell a script on two demo servers: every
// command answers, a failing one prints one line and the shell goes on,
// use switches the server, and quit ends it. (No line follows quit: the
// line editor's reader would be left holding it, a goroutine that outlives
// the test; the pseudo-terminal test checks quit in a process of its own.)
func TestShellScript(t *testing.T) {
	demo := demoCommand(t)
	script := strings.Join([]string{
		"tools",
		"call echo message=hi",
		"call add a=two",
		"nonsense",
		"bridge --listen-ws 127.0.0.1:0",
		"tools --stdio other",
		`call echo '{"message": "quoted json"}'`,
		"use nope",
		"use demo-server2",
		"servers",
		"ping --format json",
	}, "\n") + "\n"
	var stdout, stderr bytes.Buffer
	err := runShell(context.Background(), []string{"--stdio", demo, "--stdio", demo + " -name second", "--no-history"},
		strings.NewReader(script), &stdout, &stderr)
	// Lines piped in are a script: the shell fails as its first failed
	// line did (call add a=two: a usage error).
	if exitCode(err) != exitUsage || err.Error() != "shell: 5 of 11 commands failed (the first with status 2)" {
		t.Errorf("runShell: %v (exit status %d), want 5 of 11 failed, status 2\nstderr: %s", err, exitCode(err), stderr.String())
	}
	out := stdout.String()
	t.Logf("stdout:\n%s", out)
	for _, want := range []string{
		"Connected to demo-server and demo-server2.",
		"echo(message)",
		"\nhi\n",
		`error: argument a of tool "add": want a number, not "two"`,
		`error: unknown command "nonsense" (help lists them)`,
		"error: bridge is not a shell command; run tako bridge outside the shell",
		"error: the servers are given when the shell starts; use NAME picks one of them",
		"\nquoted json\n",
		`error: no server "nope"; the servers are demo-server, demo-server2`,
		"  demo-server  ",
		"* demo-server2  ",
		`{"ok":true,"ms":`, // ping --format json
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
}

// TestShellArgs: the shell's own command line.
func TestShellArgs(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"shell"}, "needs a server"},
		{[]string{"shell", "--stdio", "x", "tools"}, "takes no arguments"},
		{[]string{"shell", "--server", "a"}, "give the file too"},
		{[]string{"shell", "--json", "--stdio", "x"}, "not a flag of tako shell"},
	} {
		tako(t, c.args...).wantFailure(t, exitUsage, c.want)
	}
	if r := tako(t, "shell", "--help"); r.code != 0 || !strings.Contains(r.stdout, "use NAME") {
		t.Errorf("shell --help: exit %d, %q", r.code, r.stdout)
	}
}

// memoryShell is a shell on an in-memory server with two tools and a
// prompt, on the 2025-11-25 revision (whose list_changed is a plain
// notification the server can send at any moment).
func memoryShell(t *testing.T) (*shell, *mcptest.Server, *watchedOutput) {
	t.Helper()
	srv := mcptest.New(mcptest.Options{ServerInfo: mcp.Implementation{Name: "mem", Version: "1"}})
	schema := json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"},"loud":{"type":"boolean"}}}`)
	for _, name := range []string{"echo", "env"} {
		srv.AddTool(mcp.Tool{Name: name, InputSchema: schema}, func(ctx context.Context, req *mcptest.CallRequest) (*mcp.CallToolResult, error) {
			req.Log(ctx, mcp.LevelInfo, "called "+name)
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("ran " + name)}}, nil
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	conn, wait := srv.Pipe(ctx)
	s, err := transport.Connect(ctx, conn, &transport.Options{ProtocolVersion: mcp.Version20251125, LogLevel: mcp.LevelDebug})
	if err != nil {
		cancel()
		wait()
		t.Fatal(err)
	}
	out := newWatchedOutput()
	sh := newShell([]*shellServer{{name: "mem", t: s}, {name: "other", t: s}}, out, 10*time.Second)
	t.Cleanup(func() {
		sh.unsubs = sh.unsubs[:1] // one session, shared by both names
		sh.servers = sh.servers[:1]
		sh.close()
		cancel()
		wait()
	})
	return sh, srv, out
}

func TestShellCompletion(t *testing.T) {
	sh, srv, out := memoryShell(t)
	ctx := context.Background()
	for _, c := range []struct {
		line string
		want []string
		n    int
	}{
		{"", nil, 0}, // every command: checked below
		{"to", []string{"ols "}, 2},
		{"call e", []string{"cho ", "nv "}, 1},
		{"call ec", []string{"ho "}, 2},
		{"call echo", []string{" "}, 4},
		{"call echo ", []string{"loud=", "message="}, 0},
		{"call echo m", []string{"essage="}, 1},
		{"call echo message=hi ", []string{"loud="}, 0},
		{"call nope ", nil, 0},
		{"use ", []string{"mem ", "other "}, 0},
		{"use o", []string{"ther "}, 1},
		{"help q", []string{"uit "}, 1},
		{"ping x", nil, 1},
	} {
		got, n := sh.complete(ctx, c.line, len([]rune(c.line)))
		if c.line == "" {
			if !slices.Contains(got, "call ") || !slices.Contains(got, "quit ") || !slices.Contains(got, "use ") {
				t.Errorf("complete %q = %q", c.line, got)
			}
			continue
		}
		if !slices.Equal(got, c.want) || n != c.n {
			t.Errorf("complete %q = %q, %d; want %q, %d", c.line, got, n, c.want, c.n)
		}
	}
	// The cursor inside the line completes the word before it.
	if got, n := sh.complete(ctx, "call ec message=x", 7); !slices.Equal(got, []string{"ho "}) || n != 2 {
		t.Errorf("completion inside the line: %q, %d", got, n)
	}

	// A changed list is listed again for the next completion.
	srv.AddTool(mcp.Tool{Name: "extra"}, func(ctx context.Context, req *mcptest.CallRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	if err := srv.NotifyToolsListChanged(ctx); err != nil {
		t.Fatal(err)
	}
	waitForOutput(t, out, "mem: the tools changed")
	if got, _ := sh.complete(ctx, "call ex", 7); !slices.Equal(got, []string{"tra "}) {
		t.Errorf("after list_changed, complete \"call ex\" = %q", got)
	}
}

// waitForOutput waits until out holds want, woken by each write.
func waitForOutput(t *testing.T, out *watchedOutput, want string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for !strings.Contains(out.String(), want) {
		select {
		case <-out.wrote:
		case <-timeout:
			t.Fatalf("output lacks %q: %s", want, out.String())
		}
	}
}

// TestShellNotifications: a log message the server sends during a call is
// printed on its own line, named after its server.
func TestShellNotifications(t *testing.T) {
	sh, _, out := memoryShell(t)
	if err := sh.exec(context.Background(), "call env message=x"); err != nil {
		t.Fatal(err)
	}
	waitForOutput(t, out, "mem: [info] mem: called env\n")
	if !strings.Contains(out.String(), "ran env\n") {
		t.Errorf("output: %q", out.String())
	}
	if err := sh.exec(context.Background(), "exit"); err != errQuit {
		t.Errorf("exit returned %v", err)
	}
}

// TestShellPipedExitStatus: a script piped into the shell exits 0 when
// every line worked, and with the status of the first that failed
// otherwise (issue 22: it exited 0 whatever happened).
func TestShellPipedExitStatus(t *testing.T) {
	demo := demoCommand(t)
	for script, want := range map[string]int{
		"call echo message=ok\nping\n":      exitOK,
		"call fail\ncall echo message=ok\n": exitToolError,
		"call nope\nping\n":                 exitUsage,
		"prompt nope\nping\n":               exitFailure,
	} {
		var stdout, stderr bytes.Buffer
		err := runShell(context.Background(), []string{"--stdio", demo, "--no-history"}, strings.NewReader(script), &stdout, &stderr)
		if got := exitCode(err); got != want {
			t.Errorf("%q: exit status %d (%v), want %d\n%s", script, got, err, want, stdout.String())
		}
	}
}

// TestShellJSONNeedsNoQuotes: a JSON object typed at the prompt is one
// argument, however many blanks and quotes it holds.
func TestShellJSONNeedsNoQuotes(t *testing.T) {
	sh, _, out := memoryShell(t)
	if err := sh.exec(context.Background(), `call echo {"message": "hi there", "loud": true}`); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "ran echo\n") || strings.Contains(out.String(), "error") {
		t.Errorf("output: %q", out.String())
	}
}

// TestShellListChangeToldOnce: the notifications that change nothing
// (servers send several at start) print nothing; a change is told once,
// with what it added.
func TestShellListChangeToldOnce(t *testing.T) {
	sh, srv, out := memoryShell(t)
	ctx := context.Background()
	sh.complete(ctx, "call ", 5) // the lists as they were, listed at start
	for range 3 {
		if err := srv.NotifyToolsListChanged(ctx); err != nil {
			t.Fatal(err)
		}
	}
	srv.AddTool(mcp.Tool{Name: "extra"}, func(ctx context.Context, req *mcptest.CallRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	if err := srv.NotifyToolsListChanged(ctx); err != nil {
		t.Fatal(err)
	}
	waitForOutput(t, out, "mem: the tools changed: + extra\n")
	if err := sh.exec(ctx, "tools"); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "mem: the tools changed"); n != 1 {
		t.Errorf("the change is told %d times:\n%s", n, out.String())
	}
}

// TestShellCompletesValues: after key= TAB offers the values the tool's
// schema allows (here a boolean's).
func TestShellCompletesValues(t *testing.T) {
	sh, _, _ := memoryShell(t)
	got, n := sh.complete(context.Background(), "call echo loud=", len("call echo loud="))
	if !slices.Equal(got, []string{"false ", "true "}) || n != len("loud=") {
		t.Errorf("complete loud= = %q, %d", got, n)
	}
	if got, _ := sh.complete(context.Background(), "call echo loud=t", len("call echo loud=t")); !slices.Equal(got, []string{"rue "}) {
		t.Errorf("complete loud=t = %q", got)
	}
}
