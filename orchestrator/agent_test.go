package orchestrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/orchestrator"
	"github.com/tako-mcp/tako/registry"
	"github.com/tako-mcp/tako/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// script is a Provider that answers turns from a list and records each
// request.
type script struct {
	mu    sync.Mutex
	turns []func(req *orchestrator.Request) (*orchestrator.Response, error)
	reqs  []*orchestrator.Request
}

func (s *script) Complete(ctx context.Context, req *orchestrator.Request, stream func(orchestrator.Delta)) (*orchestrator.Response, error) {
	s.mu.Lock()
	// Keep a copy: the agent appends to the conversation afterwards.
	cp := *req
	cp.Messages = append([]orchestrator.Message(nil), req.Messages...)
	s.reqs = append(s.reqs, &cp)
	if len(s.turns) == 0 {
		s.mu.Unlock()
		return nil, errors.New("script: no more turns")
	}
	next := s.turns[0]
	s.turns = s.turns[1:]
	s.mu.Unlock()
	resp, err := next(req)
	if err == nil && stream != nil && resp.Text != "" {
		stream(orchestrator.Delta{Text: resp.Text})
	}
	return resp, err
}

func (s *script) requests() []*orchestrator.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*orchestrator.Request(nil), s.reqs...)
}

func callTools(calls ...orchestrator.ToolCall) func(*orchestrator.Request) (*orchestrator.Response, error) {
	return func(*orchestrator.Request) (*orchestrator.Response, error) {
		return &orchestrator.Response{ToolCalls: calls, StopReason: orchestrator.StopToolUse, Usage: orchestrator.Usage{InputTokens: 10, OutputTokens: 5}}, nil
	}
}

func answer(text string) func(*orchestrator.Request) (*orchestrator.Response, error) {
	return func(*orchestrator.Request) (*orchestrator.Response, error) {
		return &orchestrator.Response{Text: text, StopReason: orchestrator.StopEndTurn, Usage: orchestrator.Usage{InputTokens: 20, OutputTokens: 2}}, nil
	}
}

// calcServer is an mcptest server with an "add" tool.
func calcServer(instructions string) *mcptest.Server {
	srv := mcptest.New(mcptest.Options{ServerInfo: mcp.Implementation{Name: "calc", Version: "1"}, Instructions: instructions})
	srv.AddTool(mcp.Tool{Name: "add", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`)},
		func(ctx context.Context, req *mcptest.CallRequest) (*mcp.CallToolResult, error) {
			var in struct{ A, B float64 }
			if err := req.BindArguments(&in); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(fmt.Sprint(in.A + in.B))}}, nil
		})
	return srv
}

// pipeServer returns an MCPServer whose Connect serves srv in memory.
func pipeServer(t *testing.T, name string, srv *mcptest.Server) orchestrator.MCPServer {
	return orchestrator.MCPServer{Name: name, Connect: func(ctx context.Context, opts *transport.Options) (transport.Transport, error) {
		sctx, cancel := context.WithCancel(context.Background())
		conn, wait := srv.Pipe(sctx)
		t.Cleanup(func() { cancel(); wait() })
		return transport.Connect(ctx, conn, opts)
	}}
}

func TestRunWithParallelToolCalls(t *testing.T) {
	now, err := registry.Func("now", "the time", func(ctx context.Context, in struct{}) (string, error) { return "noon", nil })
	if err != nil {
		t.Fatal(err)
	}
	model := &script{turns: []func(*orchestrator.Request) (*orchestrator.Response, error){
		callTools(
			orchestrator.ToolCall{ID: "1", Name: "add", Arguments: json.RawMessage(`{"a":2,"b":3}`)},
			orchestrator.ToolCall{ID: "2", Name: "now"},
			orchestrator.ToolCall{ID: "3", Name: "add", Arguments: json.RawMessage(`{"a":"x"}`)},
			orchestrator.ToolCall{ID: "4", Name: "nope"},
		),
		answer("5 at noon"),
	}}
	var (
		mu     sync.Mutex
		events []orchestrator.Event
	)
	agent, err := orchestrator.New(testContext(t), orchestrator.Config{
		Provider:     model,
		SystemPrompt: "You add.",
		MCPServers:   []orchestrator.MCPServer{pipeServer(t, "calc", calcServer(""))},
		Tools:        []registry.Tool{now},
		OnEvent: func(e orchestrator.Event) {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	res, err := agent.Run(testContext(t), "what is 2+3, and when?")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "5 at noon" || res.Turns != 2 || res.Usage != (orchestrator.Usage{InputTokens: 30, OutputTokens: 7}) || agent.Usage() != res.Usage {
		t.Errorf("result: %+v", res)
	}
	reqs := model.requests()
	if reqs[0].System != "You add." || len(reqs[0].Tools) != 2 {
		t.Errorf("first request: %+v", reqs[0])
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if len(last.ToolResults) != 4 {
		t.Fatalf("second request's last message: %+v", last)
	}
	want := []struct {
		id, text string
		isError  bool
	}{{"1", "5", false}, {"2", "noon", false}, {"3", "invalid arguments", true}, {"4", "unknown tool", true}}
	for i, w := range want {
		r := last.ToolResults[i]
		if r.ID != w.id || r.IsError != w.isError || !strings.Contains(r.Text(), w.text) {
			t.Errorf("result %d: %+v, want id %s, isError %v, text with %q", i, r, w.id, w.isError, w.text)
		}
	}
	counts := map[orchestrator.EventKind]int{}
	for _, e := range events {
		counts[e.Kind]++
		if e.Kind == orchestrator.EventToolEnd && (e.Result == nil || e.Call == nil || e.Duration < 0) {
			t.Errorf("tool end event: %+v", e)
		}
	}
	if counts[orchestrator.EventTurnStart] != 2 || counts[orchestrator.EventToolStart] != 4 || counts[orchestrator.EventToolEnd] != 4 || counts[orchestrator.EventText] != 1 {
		t.Errorf("events: %v", counts)
	}
}

func TestTurnLimit(t *testing.T) {
	loop := callTools(orchestrator.ToolCall{ID: "x", Name: "add", Arguments: json.RawMessage(`{"a":1,"b":1}`)})
	model := &script{turns: []func(*orchestrator.Request) (*orchestrator.Response, error){loop, loop, loop, loop}}
	agent, err := orchestrator.New(testContext(t), orchestrator.Config{
		Provider: model, MaxTurns: 3,
		MCPServers: []orchestrator.MCPServer{pipeServer(t, "calc", calcServer(""))},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	res, err := agent.Run(testContext(t), "loop")
	if !errors.Is(err, orchestrator.ErrMaxTurns) || res == nil || res.Turns != 3 {
		t.Fatalf("err %v, result %+v", err, res)
	}
}

func TestProviderErrorEndsRun(t *testing.T) {
	model := orchestrator.ProviderFunc(func(context.Context, *orchestrator.Request, func(orchestrator.Delta)) (*orchestrator.Response, error) {
		return nil, errors.New("model down")
	})
	agent, err := orchestrator.New(testContext(t), orchestrator.Config{Provider: model})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	if _, err := agent.Run(testContext(t), "hi"); err == nil || !strings.Contains(err.Error(), "model down") {
		t.Fatalf("err = %v", err)
	}
}

func TestInstructionsInSystemPrompt(t *testing.T) {
	model := &script{turns: []func(*orchestrator.Request) (*orchestrator.Response, error){answer("ok")}}
	agent, err := orchestrator.New(testContext(t), orchestrator.Config{
		Provider: model, SystemPrompt: "Base.", IncludeInstructions: true,
		MCPServers: []orchestrator.MCPServer{pipeServer(t, "calc", calcServer("Use add for sums."))},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	if _, err := agent.Run(testContext(t), "hi"); err != nil {
		t.Fatal(err)
	}
	sys := model.requests()[0].System
	if !strings.HasPrefix(sys, "Base.") || !strings.Contains(sys, "Use add for sums.") || !strings.Contains(sys, `"calc"`) {
		t.Errorf("system prompt: %q", sys)
	}
}

func TestSamplingByTheAgentsProvider(t *testing.T) {
	srv := mcptest.New(mcptest.Options{})
	srv.AddTool(mcp.Tool{Name: "poem"}, func(ctx context.Context, req *mcptest.CallRequest) (*mcp.CallToolResult, error) {
		res, err := req.Sample(ctx, &mcp.CreateMessageParams{
			Messages:  []mcp.SamplingMessage{{Role: "user", Content: json.RawMessage(`{"type":"text","text":"a poem"}`)}},
			MaxTokens: 20,
		})
		if err != nil {
			return nil, err
		}
		var c mcp.Content
		json.Unmarshal(res.Content, &c)
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("sampled " + res.Model + ": " + c.Text)}}, nil
	})
	var sampled sync.Once
	model := orchestrator.ProviderFunc(func(ctx context.Context, req *orchestrator.Request, _ func(orchestrator.Delta)) (*orchestrator.Response, error) {
		if len(req.Tools) == 0 { // the server's sampling request
			if req.Messages[0].Text() != "a poem" {
				return nil, fmt.Errorf("sampling request: %+v", req)
			}
			return &orchestrator.Response{Model: "m1", Text: "roses", StopReason: orchestrator.StopEndTurn}, nil
		}
		last := req.Messages[len(req.Messages)-1]
		if len(last.ToolResults) > 0 {
			return &orchestrator.Response{Text: last.ToolResults[0].Text()}, nil
		}
		var resp *orchestrator.Response
		sampled.Do(func() { resp = &orchestrator.Response{ToolCalls: []orchestrator.ToolCall{{ID: "p", Name: "poem"}}} })
		if resp == nil {
			return nil, errors.New("asked twice")
		}
		return resp, nil
	})
	agent, err := orchestrator.New(testContext(t), orchestrator.Config{
		Provider: model, Sampling: true,
		MCPServers: []orchestrator.MCPServer{pipeServer(t, "poet", srv)},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	res, err := agent.Run(testContext(t), "write")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "sampled m1: roses" {
		t.Errorf("final text %q", res.Text)
	}
}

func TestNewFailureClosesTheOthers(t *testing.T) {
	var good *transport.Session
	model := &script{}
	_, err := orchestrator.New(testContext(t), orchestrator.Config{
		Provider: model,
		MCPServers: []orchestrator.MCPServer{
			{Name: "good", Connect: func(ctx context.Context, opts *transport.Options) (transport.Transport, error) {
				srv := calcServer("")
				sctx, cancel := context.WithCancel(context.Background())
				conn, wait := srv.Pipe(sctx)
				t.Cleanup(func() { cancel(); wait() })
				s, err := transport.Connect(ctx, conn, opts)
				good = s
				return s, err
			}},
			{Name: "bad", Connect: func(ctx context.Context, opts *transport.Options) (transport.Transport, error) {
				return nil, errors.New("handshake refused")
			}},
		},
	})
	if err == nil || !strings.Contains(err.Error(), `server "bad"`) || !strings.Contains(err.Error(), "handshake refused") {
		t.Fatalf("err = %v", err)
	}
	select {
	case <-good.Done():
	default:
		t.Error("the good server's session was left open")
	}
}

func TestClashFailsNew(t *testing.T) {
	_, err := orchestrator.New(testContext(t), orchestrator.Config{
		Provider:   &script{},
		MCPServers: []orchestrator.MCPServer{pipeServer(t, "one", calcServer("")), pipeServer(t, "two", calcServer(""))},
	})
	if !errors.Is(err, registry.ErrClash) {
		t.Fatalf("err = %v", err)
	}
	agent, err := orchestrator.New(testContext(t), orchestrator.Config{
		Provider:   &script{turns: []func(*orchestrator.Request) (*orchestrator.Response, error){answer("ok")}},
		Naming:     registry.Prefix("__"),
		MCPServers: []orchestrator.MCPServer{pipeServer(t, "one", calcServer("")), pipeServer(t, "two", calcServer(""))},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	var names []string
	for _, d := range agent.Registry().Tools() {
		names = append(names, d.Name)
	}
	if strings.Join(names, ",") != "one__add,two__add" {
		t.Errorf("tools %v", names)
	}
}

func TestURLServerBadScheme(t *testing.T) {
	_, err := orchestrator.New(testContext(t), orchestrator.Config{
		Provider:   &script{},
		MCPServers: []orchestrator.MCPServer{{URL: "ftp://127.0.0.1/mcp"}},
	})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("err = %v", err)
	}
}
