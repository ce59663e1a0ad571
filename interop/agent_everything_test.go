package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tako-mcp/tako/orchestrator"
	"github.com/tako-mcp/tako/orchestrator/openai"
	"github.com/tako-mcp/tako/registry"
)

// End-to-end runs of the agent loop against real servers: the model's tool
// call must reach the server, and the server's result must be in the
// model's next request.

// agentScript is a scripted model: turn 1 calls one tool, turn 2 checks
// that the tool's result came back and answers with it.
type agentScript struct {
	tool, args string

	mu   sync.Mutex
	reqs []*orchestrator.Request
}

func (s *agentScript) Complete(ctx context.Context, req *orchestrator.Request, _ func(orchestrator.Delta)) (*orchestrator.Response, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	n := len(s.reqs)
	s.mu.Unlock()
	if n == 1 {
		return &orchestrator.Response{
			ToolCalls:  []orchestrator.ToolCall{{ID: "call-1", Name: s.tool, Arguments: json.RawMessage(s.args)}},
			StopReason: orchestrator.StopToolUse,
		}, nil
	}
	last := req.Messages[len(req.Messages)-1]
	if len(last.ToolResults) != 1 || last.ToolResults[0].ID != "call-1" {
		return nil, fmt.Errorf("turn %d: the last message has no result for call-1: %+v", n, last)
	}
	r := last.ToolResults[0]
	if r.IsError {
		return nil, fmt.Errorf("the tool failed: %s", r.Text())
	}
	return &orchestrator.Response{Text: "the tool said: " + r.Text(), StopReason: orchestrator.StopEndTurn}, nil
}

func (s *agentScript) offered(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.reqs[0].Tools {
		if d.Name == name {
			return true
		}
	}
	return false
}

func TestAgentEverythingStdio(t *testing.T) {
	command, args := everything(t)
	model := &agentScript{tool: "echo", args: `{"message":"hello from the model"}`}
	agent, err := orchestrator.New(testContext(t), orchestrator.Config{
		Provider:            model,
		IncludeInstructions: true,
		MCPServers:          []orchestrator.MCPServer{{Command: command, Args: args}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := agent.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	if got := agent.Registry().Servers(); len(got) != 1 || got[0] != "server-everything" {
		t.Errorf("server names %v, want [server-everything] (dial.Server.DefaultName)", got)
	}
	res, err := agent.Run(testContext(t), "say hello")
	if err != nil {
		t.Fatal(err)
	}
	if want := "the tool said: Echo: hello from the model"; res.Text != want {
		t.Errorf("final answer %q, want %q", res.Text, want)
	}
	if !model.offered("get-sum") {
		t.Error("the model was not offered the server's tools")
	}
	if !strings.Contains(model.reqs[0].System, "everything") {
		t.Errorf("the server's instructions are not in the system prompt: %q", model.reqs[0].System)
	}
}

// agentGoPeerHTTP starts the go-sdk peer with -http on a loopback port, in
// its stateless mode (protocol 2026-07-28, reached through
// server/discover), and returns its URL. The process is killed when the
// test ends.
func agentGoPeerHTTP(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(peerBin, "gosdk"), "-http", "127.0.0.1:0", "-stateless")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			lines <- strings.TrimSpace(sc.Text())
		}
		close(lines)
		io.Copy(io.Discard, out)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-drained
		cmd.Wait()
	})
	select {
	case u, ok := <-lines:
		if !ok || !strings.HasPrefix(u, "http://127.0.0.1:") {
			t.Fatalf("the go-sdk peer printed %q, not its URL", u)
		}
		return u
	case <-time.After(30 * time.Second):
		t.Fatal("the go-sdk peer did not print its URL within 30s")
	}
	return ""
}

func TestAgentGoSDKHTTP(t *testing.T) {
	url := agentGoPeerHTTP(t)
	command, args := everything(t)
	model := &agentScript{tool: "gosdk__add", args: `{"a":2,"b":40}`}
	agent, err := orchestrator.New(testContext(t), orchestrator.Config{
		Provider: model,
		Naming:   registry.Prefix("__"),
		MCPServers: []orchestrator.MCPServer{
			{Name: "gosdk", URL: url},
			{Name: "everything", Command: command, Args: args},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	res, err := agent.Run(testContext(t), "add 2 and 40")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, "42") {
		t.Errorf("final answer %q, want the sum 42 from the go-sdk server", res.Text)
	}
	if !model.offered("everything__echo") || !model.offered("gosdk__echo") {
		t.Error("both servers' tools should be offered under prefixed names")
	}
}

// fakeOpenAI plays the model behind the Chat Completions API: it asks for
// echo, then answers with what the tool message said.
type fakeOpenAI struct {
	t      *testing.T
	mu     sync.Mutex
	bodies []map[string]any
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	n := len(f.bodies)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	msgs, _ := body["messages"].([]any)
	last, _ := msgs[len(msgs)-1].(map[string]any)
	if n == 1 {
		io.WriteString(w, `{"id":"c1","object":"chat.completion","model":"fake","choices":[{"index":0,"finish_reason":"tool_calls",
		  "message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_e","type":"function","function":{"name":"echo","arguments":"{\"message\":\"via openai\"}"}}]}}],
		  "usage":{"prompt_tokens":3,"completion_tokens":4}}`)
		return
	}
	if last["role"] != "tool" || last["tool_call_id"] != "call_e" {
		http.Error(w, fmt.Sprintf(`{"error":{"message":"expected a tool message, got %v","type":"test"}}`, last), http.StatusBadRequest)
		return
	}
	answer, _ := json.Marshal("final: " + fmt.Sprint(last["content"]))
	fmt.Fprintf(w, `{"id":"c2","object":"chat.completion","model":"fake","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":%s}}],"usage":{"prompt_tokens":5,"completion_tokens":6}}`, answer)
}

// TestAgentOpenAIProvider is the same run through the real openai
// provider, with an httptest server playing the model, against the
// reference server over stdio and the go-sdk server over HTTP.
func TestAgentOpenAIProvider(t *testing.T) {
	for _, peer := range []string{"everything-stdio", "gosdk-http"} {
		t.Run(peer, func(t *testing.T) {
			var server orchestrator.MCPServer
			if peer == "gosdk-http" {
				server = orchestrator.MCPServer{URL: agentGoPeerHTTP(t)}
			} else {
				command, args := everything(t)
				server = orchestrator.MCPServer{Command: command, Args: args}
			}
			fake := &fakeOpenAI{t: t}
			srv := httptest.NewServer(fake)
			defer srv.Close()
			provider, err := openai.New(openai.Options{Model: "fake", BaseURL: srv.URL + "/v1", APIKey: "none"})
			if err != nil {
				t.Fatal(err)
			}
			agent, err := orchestrator.New(testContext(t), orchestrator.Config{
				Provider:   provider,
				MCPServers: []orchestrator.MCPServer{server},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer agent.Close()
			res, err := agent.Run(testContext(t), "echo something")
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != "final: Echo: via openai" {
				t.Errorf("final answer %q", res.Text)
			}
			if res.Usage != (orchestrator.Usage{InputTokens: 8, OutputTokens: 10}) {
				t.Errorf("usage %+v", res.Usage)
			}
			fake.mu.Lock()
			tools, _ := fake.bodies[0]["tools"].([]any)
			fake.mu.Unlock()
			if len(tools) < 2 {
				t.Errorf("the model was offered %d tools", len(tools))
			}
		})
	}
}

// TestAgentNewFailedHandshakeLeavesNothing starts a good server and one
// that exits before its handshake: New must fail naming the bad one, and no
// child process may remain.
func TestAgentNewFailedHandshakeLeavesNothing(t *testing.T) {
	_, err := orchestrator.New(testContext(t), orchestrator.Config{
		Provider: orchestrator.ProviderFunc(func(context.Context, *orchestrator.Request, func(orchestrator.Delta)) (*orchestrator.Response, error) {
			return nil, errors.New("unused")
		}),
		MCPServers: []orchestrator.MCPServer{
			{Name: "good", Command: filepath.Join(peerBin, "gosdk")},
			{Name: "broken", Command: filepath.Join(peerBin, "gosdk"), Args: []string{"-no-such-flag"}},
		},
	})
	if err == nil || !strings.Contains(err.Error(), `server "broken"`) || strings.Contains(err.Error(), `server "good"`) {
		t.Fatalf("err = %v, want an error naming only the broken server", err)
	}
	if kids := childProcesses(t); len(kids) > 0 {
		t.Errorf("child processes left behind: %v", kids)
	}
}

// childProcesses lists the go-sdk peer processes whose parent is this test
// process, zombies included (Linux only; elsewhere the test skips the check).
func childProcesses(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc: cannot list child processes")
	}
	self := fmt.Sprint(os.Getpid())
	var kids []string
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after
		// the last ')'.
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		// Only the Go peer's processes: other tests' servers are not
		// this test's business.
		if len(f) > 1 && f[1] == self && strings.Contains(s[:i+1], "(gosdk)") {
			kids = append(kids, s[:i+1]+" "+f[0])
		}
	}
	return kids
}
