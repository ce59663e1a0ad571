package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/stdio"
)

// helperArgs are the flags that start the helper server in mode. GORACE
// spares the helper the race detector's one-second pause at exit, when
// the tests run with -race.
func helperArgs(t *testing.T, mode string) []string {
	return []string{"--stdio", helperCommand(t), "--env", helperEnv + "=" + mode, "--env", "GORACE=atexit_sleep_ms=0"}
}

func TestDemoToolsTable(t *testing.T) {
	t.Parallel()
	r := tako(t, "tools", "--stdio", demoCommand(t))
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "NAME ") {
		t.Errorf("no header: %q", lines[0])
	}
	found := false
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "echo(message) ") {
			found = true
		}
		if strings.HasSuffix(l, "…") {
			t.Errorf("not a terminal, yet the line is cut: %q", l)
		}
	}
	if !found {
		t.Errorf("no row for echo in:\n%s", r.stdout)
	}
}

// TestDemoToolsJSONByteExact checks that --json shows every tool exactly as
// the server sent it, against a tools/list made by hand over a stdio.Conn,
// with the tools in one page and spread over several.
func TestDemoToolsJSONByteExact(t *testing.T) {
	t.Parallel()
	for _, flags := range [][]string{nil, {"-page-size", "3"}} {
		cmd := strings.Join(append([]string{demoCommand(t)}, flags...), " ")
		r := tako(t, "tools", "--json", "--stdio", cmd)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal([]byte(r.stdout), &top); err != nil {
			t.Fatalf("output is not JSON: %v", err)
		}
		// The protocol's result, every page merged: no cursor to follow.
		if _, ok := top["nextCursor"]; ok || top["tools"] == nil {
			t.Errorf("output is not one merged tools/list result: %s", r.stdout)
		}
		var got []json.RawMessage
		if err := json.Unmarshal(top["tools"], &got); err != nil {
			t.Fatal(err)
		}

		want := rawToolsList(t, demoServer, flags...)
		if len(got) != len(want) || len(want) == 0 {
			t.Fatalf("%s: tako printed %d tools, the server lists %d", cmd, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Errorf("%s: tool %d differs from what the server sent:\n got %s\nwant %s", cmd, i, got[i], want[i])
			}
			var g, w struct{ InputSchema json.RawMessage }
			if err := json.Unmarshal(got[i], &g); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(want[i], &w); err != nil {
				t.Fatal(err)
			}
			if len(w.InputSchema) == 0 || !bytes.Equal(g.InputSchema, w.InputSchema) {
				t.Errorf("%s: tool %d: inputSchema %s, want %s", cmd, i, g.InputSchema, w.InputSchema)
			}
		}
	}
}

// rawToolsList speaks to the server over a stdio.Conn without tako's
// engine: initialize, initialized, then tools/list until the last page.
func rawToolsList(t *testing.T, server string, args ...string) []json.RawMessage {
	t.Helper()
	call := rawClient(t, server, args...)
	var tools []json.RawMessage
	var params mcp.ListToolsParams
	for {
		var page struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor *string           `json:"nextCursor"`
		}
		if err := json.Unmarshal(call(mcp.MethodToolsList, &params), &page); err != nil {
			t.Fatal(err)
		}
		tools = append(tools, page.Tools...)
		if page.NextCursor == nil {
			return tools
		}
		params.Cursor = page.NextCursor
	}
}

// rawClient starts server with args over a stdio.Conn, runs the
// 2025-11-25 handshake without tako's engine, and returns a function that
// sends one request and returns its result as the server wrote it. The
// server ends with the test.
func rawClient(t *testing.T, server string, args ...string) func(method string, params any) json.RawMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	conn, err := stdio.Start(ctx, &stdio.Options{Command: server, Args: args})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	id := int64(0)
	call := func(method string, params any) json.RawMessage {
		id++
		req, err := mcp.NewRequest(mcp.Int64ID(id), method, params)
		if err != nil {
			t.Fatal(err)
		}
		if err := conn.Write(ctx, req); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		for {
			m, err := conn.Read(ctx)
			if err != nil {
				t.Fatalf("%s: %v", method, err)
			}
			if n, ok := m.ID.Int64(); !m.IsResponse() || !ok || n != id {
				continue // a notification or a log line
			}
			if m.Error != nil {
				t.Fatalf("%s: %v", method, m.Error)
			}
			return m.Result
		}
	}
	call(mcp.MethodInitialize, mcp.InitializeParams{
		ProtocolVersion: "2025-11-25",
		ClientInfo:      mcp.Implementation{Name: "tako-cli-test", Version: "0"},
	})
	note, err := mcp.NewNotification(mcp.NotificationInitialized, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Write(ctx, note); err != nil {
		t.Fatal(err)
	}
	return call
}

func TestDemoCallEcho(t *testing.T) {
	t.Parallel()
	r := tako(t, "call", "echo", `{"message":"hello from tako"}`, "--stdio", demoCommand(t))
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "hello from tako") {
		t.Errorf("stdout %q does not carry the message", r.stdout)
	}
}

func TestDemoCallBig(t *testing.T) {
	t.Parallel()
	const n = 4 << 20 // past any default line buffer of 64 KiB or 1 MiB
	r := tako(t, "call", "big", fmt.Sprintf(`{"bytes":%d}`, n), "--stdio", demoCommand(t))
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if r.stdout != strings.Repeat("x", n)+"\n" {
		t.Errorf("stdout has %d bytes, want %d x and a newline", len(r.stdout), n)
	}
}

// TestFlagsAfterPositionals puts every flag after the tool name and the
// arguments, and mixes both spellings.
func TestFlagsAfterPositionals(t *testing.T) {
	t.Parallel()
	r := tako(t, "call", "echo", `{"message":"late flags"}`, "-stdio="+demoCommand(t), "--timeout", "1m", "-json")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("--json output is not a call result: %v", err)
	}
	if !strings.Contains(res.Text(), "late flags") {
		t.Errorf("result %s does not carry the message", r.stdout)
	}
}

func TestDemoCallFailExitsOne(t *testing.T) {
	t.Parallel()
	r := tako(t, "call", "fail", "--stdio", demoCommand(t))
	r.wantFailure(t, 1, `tool "fail" reported an error`)
	if r.stdout == "" {
		t.Error("the tool's error content was not printed")
	}
	rj := tako(t, "call", "fail", "{}", "--json", "--stdio", demoCommand(t))
	rj.wantFailure(t, 1, `tool "fail" reported an error`)
	if !strings.Contains(rj.stdout, `"isError":true`) {
		t.Errorf("--json output lacks isError: %q", rj.stdout)
	}
}

func TestCommandNotFoundExitsThree(t *testing.T) {
	t.Parallel()
	r := tako(t, "tools", "--stdio", "/nonexistent/tako-test/no-such-server --x")
	r.wantFailure(t, 3, "no-such-server")
	if r.stdout != "" {
		t.Errorf("stdout: %q", r.stdout)
	}
}

func TestEnvReachesServer(t *testing.T) {
	t.Parallel()
	args := append(helperArgs(t, "server"),
		"--env", "TAKO_CLI_TEST_VALUE=first", "--env", "TAKO_CLI_TEST_VALUE=with spaces = and equals")
	r := tako(t, append([]string{"call", "env", `{"name":"TAKO_CLI_TEST_VALUE"}`}, args...)...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if r.stdout != "with spaces = and equals\n" {
		t.Errorf("stdout %q, want the last --env value", r.stdout)
	}
	// The rest of tako's environment is inherited.
	r = tako(t, append([]string{"call", "env", `{"name":"PATH"}`}, args...)...)
	if r.code != 0 || strings.TrimSpace(r.stdout) == "(unset)" || r.stdout == "" {
		t.Errorf("PATH did not reach the server: exit %d, %q", r.code, r.stdout)
	}
}

// TestToolsJSONMergesPagesByteExact runs against the helper, whose two
// pages of tools/list are known byte for byte.
func TestToolsJSONMergesPagesByteExact(t *testing.T) {
	t.Parallel()
	r := tako(t, append([]string{"tools", "--json"}, helperArgs(t, "server")...)...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	want := `{"tools":[` + helperTool1 + "," + helperTool2 + "," + helperTool3 + "," + helperTool4 + "," + helperTool5 + "]}\n"
	if r.stdout != want {
		t.Errorf("got  %s\nwant %s", r.stdout, want)
	}
}

func TestToolsTableMergesPages(t *testing.T) {
	t.Parallel()
	r := tako(t, append([]string{"tools"}, helperArgs(t, "server")...)...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	want := "NAME                               HINTS  DESCRIPTION\n" +
		"env(name)                                 Returns an environment variable.\n" +
		"content                            r---   All content types é\n" +
		"hang                               --io   Never answers.\n" +
		"die                                       Exits with status 7.\n" +
		"rpcerror(message, code, [repeat])         Answers a JSON-RPC error.\n"
	if r.stdout != want {
		t.Errorf("got\n%s\nwant\n%s", r.stdout, want)
	}
}

func TestCallPrintsEveryContentType(t *testing.T) {
	t.Parallel()
	r := tako(t, append([]string{"call", "content"}, helperArgs(t, "server")...)...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	want := "first\n" +
		"[image image/png, 8 bytes]\n" +
		"[audio audio/wav, 4 bytes]\n" +
		"file:///tmp/report.txt\n" +
		"embedded note\n" +
		"[resource mem://bin (no MIME type), 3 bytes]\n"
	if r.stdout != want {
		t.Errorf("got\n%s\nwant\n%s", r.stdout, want)
	}
}

func TestCallJSONIsRaw(t *testing.T) {
	t.Parallel()
	r := tako(t, append([]string{"call", "content", "--json"}, helperArgs(t, "server")...)...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if r.stdout != helperContent+"\n" {
		t.Errorf("got  %s\nwant %s", r.stdout, helperContent)
	}
}

// TestServerErrorExitsThree: a JSON-RPC error answer exits 3, and says
// its code once, though the server (as the TypeScript SDK does) put it in
// the message too.
func TestServerErrorExitsThree(t *testing.T) {
	t.Parallel()
	r := tako(t, append([]string{"call", "rpcerror", "message=no such thing"}, helperArgs(t, "server")...)...)
	r.wantFailure(t, 3, "tools/call rpcerror: the server answered error -32602 (invalid params): no such thing")
	if strings.Count(r.stderr, "32602") != 1 || strings.Contains(r.stderr, "MCP error") {
		t.Errorf("the error code is said more than once: %q", r.stderr)
	}
}

func TestServerDiesAtStart(t *testing.T) {
	t.Parallel()
	r := tako(t, append([]string{"tools"}, helperArgs(t, "die-at-start")...)...)
	r.wantFailure(t, 3, "connect", "status 4", "cannot open /etc/helper.conf")
}

func TestServerDiesDuringCall(t *testing.T) {
	t.Parallel()
	r := tako(t, append([]string{"call", "die"}, helperArgs(t, "server")...)...)
	r.wantFailure(t, 3, "tools/call die", "status 7", "dying on purpose")
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	// Long enough for a -race server's start on a loaded machine, so the
	// timeout ends the call, not the connect.
	r := tako(t, append([]string{"call", "hang", "--timeout", "3s"}, helperArgs(t, "server")...)...)
	r.wantFailure(t, 3, "tools/call hang", "timed out after 3s")
}

func TestInterrupted(t *testing.T) {
	t.Parallel()
	t.Run("before start", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var stdout, stderr bytes.Buffer
		code := run(ctx, append([]string{"call", "hang"}, helperArgs(t, "server")...), &stdout, &stderr)
		r := result{code: code, stdout: stdout.String(), stderr: stderr.String()}
		r.wantFailure(t, 3, "interrupted")
	})
	t.Run("during the call", func(t *testing.T) {
		// The helper says on stderr when the call has arrived; -v brings
		// that line to tako's stderr, where the test cancels, as a
		// Ctrl-C would.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		stderr := &watchWriter{needle: helperHangStderr, fire: cancel}
		var stdout bytes.Buffer
		code := run(ctx, append([]string{"call", "hang", "-v"}, helperArgs(t, "server")...), &stdout, stderr)
		out := stderr.String()
		t.Logf("stderr:\n%s", out)
		if code != 3 {
			t.Errorf("exit %d, want 3", code)
		}
		if !strings.HasSuffix(out, "\ntako: tools/call hang: interrupted\n") {
			t.Errorf("stderr does not end with the interruption")
		}
	})
}

// watchWriter collects what is written to it and calls fire once, when
// needle first appears.
type watchWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	needle string
	fire   func()
	fired  bool
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if !w.fired && strings.Contains(w.buf.String(), w.needle) {
		w.fired = true
		w.fire()
	}
	return n, err
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestVerbose checks that --verbose shows the engine's diagnostics and
// the connection, and that nothing of it reaches stdout.
func TestVerbose(t *testing.T) {
	t.Parallel()
	r := tako(t, append([]string{"call", "env", `{"name":"HOME"}`, "-v"}, helperArgs(t, "server")...)...)
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	if !strings.Contains(r.stderr, "connected") || !strings.Contains(r.stderr, "helper") {
		t.Errorf("stderr has no connection line: %q", r.stderr)
	}
	if strings.Contains(r.stdout, "level=") {
		t.Errorf("log lines on stdout: %q", r.stdout)
	}
}
