package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/orchestrator"
	"github.com/tako-mcp/tako/transport"
)

// The agent streaming: the model's text through the OpenAI streaming
// format, a long-running tool's progress while it runs, and a sampling
// request with tools served over several turns. server-everything has the
// long-running tool but no tool that samples with tools, so the sampling
// half runs against the go-sdk peer's research tool.

// streamingModel plays an OpenAI-compatible model that streams (SSE) when
// asked to. As the agent's model it calls the long-running tool, then the
// research tool, then answers with what research said; as the model a
// sampling request asks (offered only "lookup"), it looks "tako" up, then
// answers with the lookup's result.
type streamingModel struct {
	t *testing.T
	// gate holds the first streamed answer after its first piece until
	// the test has seen that piece on tako's stdout.
	gate chan struct{}

	mu       sync.Mutex
	sampling int // sampling requests seen
	streamed []bool
}

func (m *streamingModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Stream   bool `json:"stream"`
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	m.streamed = append(m.streamed, body.Stream)
	m.mu.Unlock()
	last := body.Messages[len(body.Messages)-1]
	lastText := fmt.Sprint(last.Content)
	var tools []string
	for _, t := range body.Tools {
		tools = append(tools, t.Function.Name)
	}
	out := &sseWriter{w: w, stream: body.Stream}
	switch {
	case len(tools) == 1 && tools[0] == "lookup": // a server's sampling request
		m.mu.Lock()
		m.sampling++
		m.mu.Unlock()
		if last.Role != "tool" {
			out.toolCall("look-1", "lookup", `{"word":"tako"}`)
		} else {
			out.text("per the glossary, ", lastText)
		}
	case last.Role == "user":
		// Turn 1: a piece of text, held until tako has shown it, then
		// the long-running tool.
		out.text("Let me ")
		select {
		case <-m.gate:
		case <-r.Context().Done():
			return
		case <-time.After(30 * time.Second):
			m.t.Error("tako did not print the first streamed piece within 30s")
			return
		}
		out.text("check.")
		out.toolCall("call-long", "server-everything__trigger-long-running-operation", `{"duration":1,"steps":3}`)
	case strings.Contains(lastText, "Long running operation completed"):
		out.toolCall("call-research", "gosdk__research", `{"topic":"tako"}`)
	default:
		out.text("All done: ", lastText)
	}
	out.end()
}

// sseWriter writes one answer in the Chat Completions format: streamed as
// chunks when the request asked for a stream, else as one JSON body.
type sseWriter struct {
	w      http.ResponseWriter
	stream bool
	answer strings.Builder
	calls  []string
	finish string
}

func (s *sseWriter) chunk(delta string) {
	if !s.stream {
		return
	}
	if s.w.Header().Get("Content-Type") == "" {
		s.w.Header().Set("Content-Type", "text/event-stream")
	}
	fmt.Fprintf(s.w, "data: {\"model\":\"fake-stream\",\"choices\":[{\"index\":0,\"delta\":%s}]}\n\n", delta)
	s.w.(http.Flusher).Flush()
}

func (s *sseWriter) text(pieces ...string) {
	for _, p := range pieces {
		s.answer.WriteString(p)
		q, _ := json.Marshal(p)
		s.chunk(`{"content":` + string(q) + `}`)
	}
	s.finish = "stop"
}

func (s *sseWriter) toolCall(id, name, args string) {
	q, _ := json.Marshal(args)
	call := fmt.Sprintf(`{"id":%q,"type":"function","function":{"name":%q,"arguments":%s}}`, id, name, q)
	s.chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,%s`, len(s.calls), call[1:]) + `]}`)
	s.calls = append(s.calls, call)
	s.finish = "tool_calls"
}

func (s *sseWriter) end() {
	if s.stream {
		fmt.Fprintf(s.w, "data: {\"model\":\"fake-stream\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":%q}]}\n\ndata: [DONE]\n\n", s.finish)
		s.w.(http.Flusher).Flush()
		return
	}
	content, _ := json.Marshal(s.answer.String())
	if s.answer.Len() == 0 {
		content = []byte("null")
	}
	calls := ""
	if len(s.calls) > 0 {
		calls = `,"tool_calls":[` + strings.Join(s.calls, ",") + `]`
	}
	s.w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(s.w, `{"model":"fake-plain","choices":[{"index":0,"finish_reason":%q,"message":{"role":"assistant","content":%s%s}}]}`, s.finish, content, calls)
}

// watchedBuffer is a stdout that closes seen once it holds want.
type watchedBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (b *watchedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if strings.Contains(b.buf.String(), b.want) {
		b.once.Do(func() { close(b.seen) })
	}
	return len(p), nil
}

func (b *watchedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestAgentStreamingCLI runs tako agent with a streaming model against
// server-everything (stdio) and the go-sdk peer (stdio): the first piece
// of text is on stdout while the model's answer is still open, the
// long-running tool's three progress events come before its result, and
// the research tool's sampling with tools takes two sampling turns (a
// tool_use, then text) served by the same model.
func TestAgentStreamingCLI(t *testing.T) {
	node, args := everything(t)
	model := &streamingModel{t: t}
	stdout := &watchedBuffer{want: "Let me ", seen: make(chan struct{})}
	model.gate = stdout.seen
	srv := httptest.NewServer(model)
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, takoCLI(t), "agent", "--provider", "openai", "--base-url", srv.URL+"/v1", "--model", "fake", "--prefix",
		"--stdio", "'"+node+"' '"+strings.Join(args, "' '")+"'",
		"--stdio", "'"+filepath.Join(peerBin, "gosdk")+"'",
		"research tako")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("tako agent: %v\nstdout: %s\nstderr: %s", err, stdout, stderr.String())
	}
	out, errs := stdout.String(), stderr.String()
	t.Logf("stdout:\n%s\nstderr:\n%s", out, errs)

	want := "Let me check.\nAll done: researched in 2 rounds: per the glossary, tako is Japanese for octopus\n"
	if out != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	model.mu.Lock()
	streamed, sampling := model.streamed, model.sampling
	model.mu.Unlock()
	if len(streamed) == 0 || !streamed[0] {
		t.Errorf("the agent's first request did not ask for a stream: %v", streamed)
	}
	if sampling != 2 {
		t.Errorf("%d sampling requests reached the model, want 2 (a tool_use turn, then the answer)", sampling)
	}

	long := "server-everything__trigger-long-running-operation"
	end := strings.Index(errs, "← "+long+" ok")
	if end < 0 {
		t.Fatalf("stderr lacks the long-running tool's result")
	}
	for _, p := range []string{"1/3", "2/3", "3/3"} {
		if i := strings.Index(errs, "… "+long+" "+p); i < 0 || i > end {
			t.Errorf("progress %s of %s not shown before its result", p, long)
		}
	}
	for _, s := range []string{
		"→ gosdk__research {\"topic\":\"tako\"}",
		"⇄ sampling for gosdk: 1 message(s), 1 tool(s) offered → tool_use lookup",
		"⇄ sampling for gosdk: 3 message(s), 1 tool(s) offered → per the glossary",
		"← gosdk__research ok",
	} {
		if !strings.Contains(errs, s) {
			t.Errorf("stderr lacks %q", s)
		}
	}
}

// TestAgentSamplingWithToolsGoSDK: the go-sdk peer's research tool samples
// with tools; the agent serves each createMessage with its provider, in
// both eras (server-to-client requests on 2025-11-25, input_required
// rounds on 2026-07-28).
func TestAgentSamplingWithToolsGoSDK(t *testing.T) {
	for _, version := range []string{mcp.Version20251125, ""} {
		t.Run("version="+version, func(t *testing.T) {
			var mu sync.Mutex
			var sampled []*orchestrator.Request
			model := orchestrator.ProviderFunc(func(ctx context.Context, req *orchestrator.Request, _ func(orchestrator.Delta)) (*orchestrator.Response, error) {
				last := req.Messages[len(req.Messages)-1]
				if len(req.Tools) == 1 && req.Tools[0].Name == "lookup" {
					mu.Lock()
					sampled = append(sampled, req)
					mu.Unlock()
					if len(last.ToolResults) == 0 {
						return &orchestrator.Response{Model: "m", StopReason: orchestrator.StopToolUse,
							ToolCalls: []orchestrator.ToolCall{{ID: "l1", Name: "lookup", Arguments: json.RawMessage(`{"word":"tako"}`)}}}, nil
					}
					return &orchestrator.Response{Model: "m", Text: "found: " + last.ToolResults[0].Text()}, nil
				}
				if len(last.ToolResults) > 0 {
					return &orchestrator.Response{Text: last.ToolResults[0].Text()}, nil
				}
				return &orchestrator.Response{ToolCalls: []orchestrator.ToolCall{{ID: "r", Name: "research", Arguments: json.RawMessage(`{"topic":"tako"}`)}}}, nil
			})
			agent, err := orchestrator.New(testContext(t), orchestrator.Config{
				Provider: model, Sampling: true,
				MCPServers: []orchestrator.MCPServer{{Name: "gosdk", Command: filepath.Join(peerBin, "gosdk")}},
				Session:    transport.Options{ProtocolVersion: version},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer agent.Close()
			res, err := agent.Run(testContext(t), "research tako")
			if err != nil {
				t.Fatal(err)
			}
			if want := "researched in 2 rounds: found: tako is Japanese for octopus"; res.Text != want {
				t.Errorf("final answer %q, want %q", res.Text, want)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(sampled) != 2 {
				t.Fatalf("%d sampling turns, want 2", len(sampled))
			}
			second := sampled[1].Messages
			if len(second) != 3 || len(second[1].ToolCalls) != 1 || second[1].ToolCalls[0].ID != "l1" || len(second[2].ToolResults) != 1 || second[2].ToolResults[0].ID != "l1" {
				t.Errorf("second sampling turn's history: %+v", second)
			}
		})
	}
}
