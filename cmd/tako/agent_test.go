package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	mcpgrpc "github.com/tako-mcp/tako/grpc"
	"github.com/tako-mcp/tako/internal/testpki"
	"github.com/tako-mcp/tako/internal/testserve"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/orchestrator"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/websocket"
)

// modelServer plays an OpenAI-compatible model: on the first request it
// calls every tool whose name ends in "echo" at once, then it answers with
// the tool messages it got back.
type modelServer struct {
	mu       sync.Mutex
	requests int
	tools    []string
}

func (m *modelServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Messages []struct {
			Role       string `json:"role"`
			Content    any    `json:"content"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	m.requests++
	n := m.requests
	m.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if n == 1 {
		var calls []string
		for i, t := range req.Tools {
			m.mu.Lock()
			m.tools = append(m.tools, t.Function.Name)
			m.mu.Unlock()
			if strings.HasSuffix(t.Function.Name, "echo") {
				calls = append(calls, fmt.Sprintf(`{"id":"call_%d","type":"function","function":{"name":%q,"arguments":"{\"message\":\"hi from %s\"}"}}`, i, t.Function.Name, t.Function.Name))
			}
		}
		fmt.Fprintf(w, `{"model":"m","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[%s]}}]}`, strings.Join(calls, ","))
		return
	}
	var got []string
	for _, msg := range req.Messages {
		if msg.Role == "tool" {
			got = append(got, fmt.Sprint(msg.Content))
		}
	}
	answer, _ := json.Marshal("the servers said: " + strings.Join(got, " | "))
	fmt.Fprintf(w, `{"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":%s}}]}`, answer)
}

func TestAgentTwoServersOpenAI(t *testing.T) {
	model := &modelServer{}
	srv := httptest.NewServer(model)
	defer srv.Close()
	demo := demoCommand(t)
	r := tako(t, "agent", "--provider", "openai", "--base-url", srv.URL+"/v1", "--model", "m", "--prefix",
		"--stdio", demo, "--stdio", demo+" -name second",
		"say hi")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	want := "the servers said: hi from demo-server-2__echo | hi from demo-server__echo\n" // tools are offered sorted by name
	if r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
	for _, s := range []string{"→ demo-server__echo {\"message\":\"hi from demo-server__echo\"}", "← demo-server-2__echo ok"} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr lacks %q: %s", s, r.stderr)
		}
	}
}

func TestAgentClashWithoutPrefix(t *testing.T) {
	model := &modelServer{}
	srv := httptest.NewServer(model)
	defer srv.Close()
	demo := demoCommand(t)
	r := tako(t, "agent", "--provider", "openai", "--base-url", srv.URL+"/v1", "--model", "m",
		"--stdio", demo, "--stdio", demo, "say hi")
	// One short line that says how to have both (issue 22), not one
	// paragraph per tool.
	r.wantFailure(t, exitFailure, "servers demo-server and demo-server-2 have tools of the same names (", "give --prefix")
	if len(r.stderr) > 300 {
		t.Errorf("the message has %d bytes", len(r.stderr))
	}
}

func TestAgentUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"agent", "--model", "m", "--stdio", "x", "p"}, "--provider"},
		{[]string{"agent", "--provider", "gemini", "--model", "m", "p"}, "openai or anthropic"},
		{[]string{"agent", "--provider", "openai", "--stdio", "x", "p"}, "--model"},
		{[]string{"agent", "--provider", "openai", "--model", "m", "--stdio", "x"}, "prompt"},
		{[]string{"agent", "--provider", "openai", "--model", "m", "--env", "A=1", "--stdio", "x", "p"}, "server flag before"},
		{[]string{"agent", "--provider", "openai", "--model", "m", "--max-turns", "0", "p"}, "--max-turns"},
		{[]string{"agent", "--provider", "openai", "--model", "m", "--json", "p"}, "not a flag of tako agent"},
		{[]string{"agent", "--provider", "openai", "--model", "m", "--bogus", "p"}, "unknown flag --bogus"},
		{[]string{"agent", "--provider", "openai", "--model", "m", "a", "b"}, "one prompt"},
	} {
		r := tako(t, c.args...)
		r.wantFailure(t, exitUsage, c.want)
		if strings.Contains(r.stderr, "tako: tako") {
			t.Errorf("tako is named twice: %q", r.stderr)
		}
	}
}

func TestAgentModelDown(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"bad key","type":"invalid_request_error"}}`)
	}))
	defer srv.Close()
	r := tako(t, "agent", "--provider", "openai", "--base-url", srv.URL+"/v1", "--model", "m", "--stdio", demoCommand(t), "hi")
	r.wantFailure(t, exitFailure, "401", "bad key")
}

// TestAgentConfig: the agent takes every server of a --config file, named
// as the file names them, or only the --server ones.
func TestAgentConfig(t *testing.T) {
	model := &modelServer{}
	srv := httptest.NewServer(model)
	defer srv.Close()
	demo, err := json.Marshal(demoServer)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "mcp.json")
	cfg := `{"mcpServers":{"alpha":{"command":` + string(demo) + `},"beta":{"command":` + string(demo) + `,"args":["-name","b"]}}}`
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	r := tako(t, "agent", "--provider", "openai", "--base-url", srv.URL+"/v1", "--model", "m", "--prefix", "--config", file, "say hi")
	if want := "the servers said: hi from alpha__echo | hi from beta__echo\n"; r.code != 0 || r.stdout != want {
		t.Errorf("all servers: exit %d, stdout %q, want %q", r.code, r.stdout, want)
	}
	srv2 := httptest.NewServer(&modelServer{}) // a fresh conversation
	defer srv2.Close()
	r = tako(t, "agent", "--provider", "openai", "--base-url", srv2.URL+"/v1", "--model", "m", "--prefix", "--config", file, "--server", "beta", "say hi")
	if want := "the servers said: hi from beta__echo\n"; r.code != 0 || r.stdout != want {
		t.Errorf("--server beta: exit %d, stdout %q, want %q", r.code, r.stdout, want)
	}
}

// TestAgentPrinter: streamed text goes to stdout as it comes, a turn's
// text ends its line before the tool calls after it, and every other
// event is one line on stderr.
func TestAgentPrinter(t *testing.T) {
	var stdout, stderr strings.Builder
	p := &agentPrinter{stdout: &stdout, stderr: &stderr}
	call := &orchestrator.ToolCall{ID: "1", Name: "slow", Arguments: json.RawMessage(`{"n": 1}`)}
	total := 2.0
	p.event(orchestrator.Event{Kind: orchestrator.EventTurnStart, Turn: 1})
	p.event(orchestrator.Event{Kind: orchestrator.EventText, Text: "Let me "})
	if stdout.String() != "Let me " {
		t.Fatalf("a streamed piece was not printed at once: %q", stdout.String())
	}
	p.event(orchestrator.Event{Kind: orchestrator.EventText, Text: "look."})
	p.event(orchestrator.Event{Kind: orchestrator.EventTurnEnd, Response: &orchestrator.Response{Text: "Let me look.", ToolCalls: []orchestrator.ToolCall{*call}}})
	p.event(orchestrator.Event{Kind: orchestrator.EventToolStart, Call: call, Server: "s"})
	p.event(orchestrator.Event{Kind: orchestrator.EventToolProgress, Call: call, Server: "s", Progress: &mcp.ProgressParams{Progress: 1, Total: &total, Message: "half"}})
	p.event(orchestrator.Event{Kind: orchestrator.EventToolLog, Call: call, Server: "s", Log: &mcp.LoggingMessageParams{Level: mcp.LevelInfo, Logger: "db", Data: json.RawMessage(`"query ran"`)}})
	p.event(orchestrator.Event{Kind: orchestrator.EventSampling, Server: "s",
		Sampling: &mcp.CreateMessageParams{Messages: make([]mcp.SamplingMessage, 1), Tools: []mcp.Tool{{Name: "lookup"}}},
		Response: &orchestrator.Response{ToolCalls: []orchestrator.ToolCall{{Name: "lookup"}}}})
	p.event(orchestrator.Event{Kind: orchestrator.EventToolEnd, Call: call, Server: "s", Result: &orchestrator.ToolResult{Content: []mcp.Content{mcp.TextContent("done")}}})
	// A provider that does not stream: the turn's text is shown at its end.
	p.event(orchestrator.Event{Kind: orchestrator.EventTurnStart, Turn: 2})
	p.event(orchestrator.Event{Kind: orchestrator.EventTurnEnd, Response: &orchestrator.Response{Text: "It is done."}})
	if err := p.finish(); err != nil {
		t.Fatal(err)
	}
	if want := "Let me look.\nIt is done.\n"; stdout.String() != want {
		t.Errorf("stdout %q, want %q", stdout.String(), want)
	}
	want := `→ slow {"n":1}
… slow 1/2: half
s [info] db: query ran
⇄ sampling for s: 1 message(s), 1 tool(s) offered → tool_use lookup
← slow ok (0s): done
`
	if stderr.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr.String(), want)
	}
}

// wsDemo serves the demo server over WebSocket (the websocket package's
// bridge Handler over httptest, one demo-server process per client) and
// returns its ws:// URL.
func wsDemo(t *testing.T, name string) string {
	t.Helper()
	if demoBuildErr != nil {
		t.Fatalf("no demo server: %v", demoBuildErr)
	}
	h := &websocket.Handler{Backend: func(ctx context.Context) (transport.Conn, error) {
		return stdio.Start(ctx, &stdio.Options{Command: demoServer, Args: []string{"-name", name}})
	}}
	hs := httptest.NewServer(h)
	t.Cleanup(func() { hs.Close(); h.Close() })
	return "ws" + strings.TrimPrefix(hs.URL, "http") + "/mcp"
}

// grpcDemo serves the demo server over gRPC with mutual TLS (p's server
// certificate, p's CA for the clients) and returns its address.
func grpcDemo(t *testing.T, p *testpki.PKI) string {
	t.Helper()
	if demoBuildErr != nil {
		t.Fatalf("no demo server: %v", demoBuildErr)
	}
	ctx := context.Background()
	conn, err := stdio.Start(ctx, &stdio.Options{Command: demoServer, Args: []string{"-name", "grpc-demo"}})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	tlsCfg, err := mcpgrpc.ServerTLSConfig(mcpgrpc.TLSOptions{CertFile: p.Server.CertFile, KeyFile: p.Server.KeyFile, CAFile: p.CA.File})
	if err != nil {
		t.Fatal(err)
	}
	return testserve.GRPC(t, nil, sess, &mcpgrpc.ServerOptions{TLS: tlsCfg})
}

func portOf(t *testing.T, hostport string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(hostport)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// Issue 21: tako agent's servers were named with strings.Replace(value,
// "ws", "http", 1), so a --ws server on this machine was 127_0_0_1 and
// every --grpc server "server"; and the agent's gRPC servers did not get
// its session handlers. Now --ws and --grpc (with its TLS flags) reach the
// orchestrator as dial.Servers, named by dial.
func TestAgentWebSocketAndGRPC(t *testing.T) {
	model := &modelServer{}
	srv := httptest.NewServer(model)
	defer srv.Close()
	p := testpki.New(t)
	wsURL := wsDemo(t, "ws-demo")
	addr := grpcDemo(t, p)
	ws := "localhost-" + portOf(t, strings.TrimSuffix(strings.TrimPrefix(wsURL, "ws://"), "/mcp"))
	grpc := "localhost-" + portOf(t, addr)
	r := tako(t, "agent", "--provider", "openai", "--base-url", srv.URL+"/v1", "--model", "m", "--prefix",
		"--ws", wsURL, "--header", "X-Team: blue",
		"--grpc", addr, "--ca", p.CA.File, "--cert", p.Client.CertFile, "--key", p.Client.KeyFile, "--server-name", "mcp.test",
		"say hi")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	calls := []string{"hi from " + grpc + "__echo", "hi from " + ws + "__echo"}
	slices.Sort(calls) // tools are offered sorted by name
	if want := "the servers said: " + strings.Join(calls, " | ") + "\n"; r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
	for _, s := range []string{"← " + ws + "__echo ok", "← " + grpc + "__echo ok"} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr lacks %q: %s", s, r.stderr)
		}
	}
}

// TestAgentGRPCFlags: the TLS flags go with the --grpc before them; where
// they do not apply, or a server is wrong, the agent says so before it
// starts anything.
func TestAgentGRPCFlags(t *testing.T) {
	p := testpki.New(t)
	addr := grpcDemo(t, p)
	base := []string{"agent", "--provider", "openai", "--base-url", "http://127.0.0.1:1/v1", "--model", "m"}
	for _, c := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"--ca", p.CA.File, "--grpc", addr, "hi"}, exitUsage, []string{"--ca applies to the --grpc flag before it"}},
		{[]string{"--plaintext", "--grpc", addr, "hi"}, exitUsage, []string{"--plaintext applies to the --grpc flag before it"}},
		{[]string{"--ws", "ws://127.0.0.1:1/mcp", "--ca", p.CA.File, "hi"}, exitUsage, []string{"are for a --grpc server"}},
		{[]string{"--grpc", addr, "hi"}, exitUsage, []string{"--grpc needs --ca FILE"}},
		{[]string{"--grpc", addr, "--ca", p.CA.File, "--cert", p.Client.CertFile, "hi"}, exitUsage, []string{"--cert and --key go together"}},
		// No client certificate: the server refuses, and the error names
		// the server once.
		{[]string{"--grpc", addr, "--ca", p.CA.File, "--server-name", "mcp.test", "hi"}, exitFailure,
			[]string{`agent: server localhost-` + portOf(t, addr) + `: connect:`, "certificate required"}},
	} {
		r := tako(t, append(base, c.args...)...)
		r.wantFailure(t, c.code, c.want...)
	}
}

// TestAgentWebSocketNames: two --ws servers on this machine are
// localhost-PORT and localhost-PORT-2, not 127_0_0_1 and 127_0_0_12.
func TestAgentWebSocketNames(t *testing.T) {
	model := &modelServer{}
	srv := httptest.NewServer(model)
	defer srv.Close()
	wsURL := wsDemo(t, "ws-demo")
	name := "localhost-" + portOf(t, strings.TrimSuffix(strings.TrimPrefix(wsURL, "ws://"), "/mcp"))
	r := tako(t, "agent", "--provider", "openai", "--base-url", srv.URL+"/v1", "--model", "m", "--prefix", "--ws", wsURL, "--ws", wsURL, "say hi")
	if want := "the servers said: hi from " + name + "-2__echo | hi from " + name + "__echo\n"; r.code != 0 || r.stdout != want {
		t.Errorf("exit %d, stdout %q, want %q", r.code, r.stdout, want)
	}
}

// Issue 21: strings.Replace(value, "ws", "http", 1) named an --http
// server after a mangled URL: https://news.example.com became nehttp, and
// so did this machine's /news/mcp.
func TestAgentHTTPNameNotMangled(t *testing.T) {
	model := &modelServer{}
	srv := httptest.NewServer(model)
	defer srv.Close()
	url := referenceHTTP(t, mcptest.NewReference(mcptest.Options{})) + "/news/mcp"
	r := tako(t, "agent", "--provider", "openai", "--base-url", srv.URL+"/v1", "--model", "m", "--prefix", "--http", url, "say hi")
	if want := "the servers said: hi from news__echo\n"; r.code != 0 || r.stdout != want {
		t.Errorf("exit %d, stdout %q, want %q", r.code, r.stdout, want)
	}
}
