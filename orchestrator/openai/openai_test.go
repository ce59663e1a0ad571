package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/orchestrator"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeAPI answers each POST /v1/chat/completions with the next scripted
// answer and records the requests.
type fakeAPI struct {
	t       *testing.T
	mu      sync.Mutex
	answers []func(w http.ResponseWriter)
	reqs    []recorded
}

type recorded struct {
	header http.Header
	body   map[string]any
	raw    string
}

func newFake(t *testing.T, answers ...func(w http.ResponseWriter)) (*fakeAPI, *httptest.Server) {
	f := &fakeAPI{t: t, answers: answers}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	b, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, recorded{header: r.Header.Clone(), body: body, raw: string(b)})
	if len(f.answers) == 0 {
		f.mu.Unlock()
		http.Error(w, "no more answers", http.StatusInternalServerError)
		return
	}
	a := f.answers[0]
	f.answers = f.answers[1:]
	f.mu.Unlock()
	a(w)
}

func (f *fakeAPI) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

func jsonAnswer(status int, body string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func sseAnswer(events ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			io.WriteString(w, "data: "+e+"\n\n")
			w.(http.Flusher).Flush()
		}
	}
}

// sleeps records the retry waits instead of waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func newProvider(t *testing.T, srv *httptest.Server, sl *sleeps) *Provider {
	t.Helper()
	p, err := New(Options{Model: "m", BaseURL: srv.URL + "/v1", APIKey: "sk-test", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if sl != nil {
		p.opts.sleep = sl.sleep
	}
	return p
}

func conversation() *orchestrator.Request {
	return &orchestrator.Request{
		System: "be brief",
		Messages: []orchestrator.Message{
			{Role: orchestrator.RoleUser, Content: []mcp.Content{mcp.TextContent("what is 2+3 and the time?"), {Type: mcp.ContentImage, MIMEType: "image/png", Data: mcp.BinaryFromBase64("iVBORw0KGgo=")}}},
			{Role: orchestrator.RoleAssistant, ToolCalls: []orchestrator.ToolCall{{ID: "call_1", Name: "add", Arguments: json.RawMessage(`{"a":2,"b":3}`)}}},
			{Role: orchestrator.RoleUser, ToolResults: []orchestrator.ToolResult{{ID: "call_1", Name: "add", Content: []mcp.Content{
				mcp.TextContent("5"),
				{Type: mcp.ContentImage, MIMEType: "image/png", Data: mcp.BinaryFromBase64("iVBORw0KGgo=")},
			}}}},
		},
		Tools:     []orchestrator.ToolDef{{Name: "add", Description: "adds", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"}}}`)}},
		MaxTokens: 100,
	}
}

func TestToolCallsNonStreaming(t *testing.T) {
	f, srv := newFake(t, jsonAnswer(200, `{
	  "id": "chatcmpl-1", "object": "chat.completion", "model": "m-2024",
	  "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
	    "tool_calls": [
	      {"id": "call_a", "type": "function", "function": {"name": "add", "arguments": "{\"a\":1,\"b\":2}"}},
	      {"id": "call_b", "type": "function", "function": {"name": "time", "arguments": ""}}
	    ]}}],
	  "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
	}`))
	p := newProvider(t, srv, nil)
	resp, err := p.Complete(context.Background(), conversation(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != orchestrator.StopToolUse || resp.Model != "m-2024" || resp.Usage != (orchestrator.Usage{InputTokens: 11, OutputTokens: 7}) {
		t.Errorf("response: %+v", resp)
	}
	if len(resp.ToolCalls) != 2 || resp.ToolCalls[0].ID != "call_a" || string(resp.ToolCalls[0].Arguments) != `{"a":1,"b":2}` ||
		resp.ToolCalls[1].Name != "time" || string(resp.ToolCalls[1].Arguments) != `{}` {
		t.Errorf("tool calls: %+v", resp.ToolCalls)
	}

	req := f.requests()[0]
	if got := req.header.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization %q", got)
	}
	if req.body["model"] != "m" || req.body["max_tokens"] != float64(100) || req.body["stream"] != nil {
		t.Errorf("request: %s", req.raw)
	}
	msgs := req.body["messages"].([]any)
	if len(msgs) != 4 {
		t.Fatalf("messages: %s", req.raw)
	}
	if m := msgs[0].(map[string]any); m["role"] != "system" || m["content"] != "be brief" {
		t.Errorf("system message: %v", m)
	}
	user := msgs[1].(map[string]any)["content"].([]any)
	if img := user[1].(map[string]any); img["type"] != "image_url" || img["image_url"].(map[string]any)["url"] != "data:image/png;base64,iVBORw0KGgo=" {
		t.Errorf("user image: %v", img)
	}
	call := msgs[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)
	if call["id"] != "call_1" || call["function"].(map[string]any)["arguments"] != `{"a":2,"b":3}` {
		t.Errorf("assistant tool call: %v", call)
	}
	tool := msgs[3].(map[string]any)
	if tool["role"] != "tool" || tool["tool_call_id"] != "call_1" || !strings.HasPrefix(tool["content"].(string), "5\n[image content (image/png, 8 bytes) not shown") {
		t.Errorf("tool message (the image must become a note): %v", tool)
	}
	fn := req.body["tools"].([]any)[0].(map[string]any)["function"].(map[string]any)
	if fn["name"] != "add" || fn["parameters"].(map[string]any)["type"] != "object" {
		t.Errorf("tools: %v", fn)
	}
}

func TestStreaming(t *testing.T) {
	f, srv := newFake(t, sseAnswer(
		`{"id":"c","model":"m-s","choices":[{"index":0,"delta":{"role":"assistant","content":"Let me "}}]}`,
		`{"id":"c","choices":[{"index":0,"delta":{"content":"check."}}]}`,
		`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_x","type":"function","function":{"name":"add","arguments":"{\"a\":"}}]}}]}`,
		`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_y","type":"function","function":{"name":"echo","arguments":"{}"}}]}}]}`,
		`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1,\"b\":2}"}}]}}]}`,
		`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`{"id":"c","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3}}`,
		`[DONE]`,
	))
	p := newProvider(t, srv, nil)
	var deltas []string
	resp, err := p.Complete(context.Background(), conversation(), func(d orchestrator.Delta) { deltas = append(deltas, d.Text) })
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(deltas, "|") != "Let me |check." || resp.Text != "Let me check." {
		t.Errorf("deltas %q, text %q", deltas, resp.Text)
	}
	if len(resp.ToolCalls) != 2 || string(resp.ToolCalls[0].Arguments) != `{"a":1,"b":2}` || resp.ToolCalls[1].ID != "call_y" {
		t.Errorf("tool calls: %+v", resp.ToolCalls)
	}
	if resp.Usage.InputTokens != 5 || resp.StopReason != orchestrator.StopToolUse || resp.Model != "m-s" {
		t.Errorf("response: %+v", resp)
	}
	body := f.requests()[0].body
	if body["stream"] != true || body["stream_options"].(map[string]any)["include_usage"] != true {
		t.Errorf("stream request: %v", f.requests()[0].raw)
	}
}

func TestAPIErrorNotRetried(t *testing.T) {
	f, srv := newFake(t, jsonAnswer(400, `{"error":{"message":"bad tool schema","type":"invalid_request_error","param":null,"code":null}}`))
	p := newProvider(t, srv, &sleeps{})
	_, err := p.Complete(context.Background(), conversation(), nil)
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 400 || ae.Type != "invalid_request_error" || ae.Message != "bad tool schema" {
		t.Fatalf("err = %v", err)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("%d requests for a 400, want 1", n)
	}
}

func TestRetryAfter429(t *testing.T) {
	limited := func(w http.ResponseWriter) {
		w.Header().Set("Retry-After", "7")
		jsonAnswer(429, `{"error":{"message":"slow down","type":"rate_limit_exceeded"}}`)(w)
	}
	f, srv := newFake(t, limited, jsonAnswer(503, `{"error":{"message":"busy"}}`),
		jsonAnswer(200, `{"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hi"}}]}`))
	sl := &sleeps{}
	p := newProvider(t, srv, sl)
	resp, err := p.Complete(context.Background(), conversation(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "hi" || resp.StopReason != orchestrator.StopEndTurn {
		t.Errorf("response: %+v", resp)
	}
	if len(f.requests()) != 3 || len(sl.d) != 2 || sl.d[0] != 7*time.Second || sl.d[1] <= 0 {
		t.Errorf("requests %d, waits %v: want the first wait to be retry-after's 7s and the second a backoff", len(f.requests()), sl.d)
	}
}

func TestRetriesExhausted(t *testing.T) {
	limited := func(w http.ResponseWriter) {
		w.Header().Set("Retry-After", "1")
		jsonAnswer(429, `{"error":{"message":"slow down","type":"rate_limit_exceeded"}}`)(w)
	}
	f, srv := newFake(t, limited, limited, limited, limited, limited)
	p := newProvider(t, srv, &sleeps{})
	_, err := p.Complete(context.Background(), conversation(), nil)
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 429 {
		t.Fatalf("err = %v", err)
	}
	if n := len(f.requests()); n != 4 {
		t.Errorf("%d requests, want 1 + 3 retries", n)
	}
}

func TestMalformedBody(t *testing.T) {
	for name, answer := range map[string]func(http.ResponseWriter){
		"not json":      jsonAnswer(200, `{"choices": [`),
		"no choices":    jsonAnswer(200, `{"model":"m","choices":[]}`),
		"bad event":     sseAnswer(`{"choices":[{"delta":{"content":"a"}}]}`, `{oops`),
		"cut stream":    sseAnswer(`{"choices":[{"delta":{"content":"a"}}]}`),
		"error in body": sseAnswer(`{"error":{"message":"overloaded","type":"server_error"}}`),
	} {
		t.Run(name, func(t *testing.T) {
			_, srv := newFake(t, answer)
			p := newProvider(t, srv, nil)
			resp, err := p.Complete(context.Background(), conversation(), func(orchestrator.Delta) {})
			if err == nil {
				t.Fatalf("no error; response %+v", resp)
			}
		})
	}
}

func TestNoKeyNoHeader(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	f, srv := newFake(t, jsonAnswer(200, `{"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"ok"}}]}`))
	p, err := New(Options{Model: "m", BaseURL: srv.URL + "/v1/"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Complete(context.Background(), &orchestrator.Request{Messages: []orchestrator.Message{{Role: orchestrator.RoleUser, Content: []mcp.Content{mcp.TextContent("hi")}}}}, nil); err != nil {
		t.Fatal(err)
	}
	if h := f.requests()[0].header.Get("Authorization"); h != "" {
		t.Errorf("Authorization %q sent without a key", h)
	}
}

// TestToolChoice: a sampling request's toolChoice reaches the API as
// tool_choice, and the default sends none.
func TestToolChoice(t *testing.T) {
	answer := `{"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"ok"}}]}`
	f, srv := newFake(t, jsonAnswer(200, answer), jsonAnswer(200, answer), jsonAnswer(200, answer))
	p := newProvider(t, srv, nil)
	for _, c := range []orchestrator.ToolChoice{orchestrator.ToolChoiceAuto, orchestrator.ToolChoiceRequired, orchestrator.ToolChoiceNone} {
		req := conversation()
		req.ToolChoice = c
		if _, err := p.Complete(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
	}
	reqs := f.requests()
	if _, ok := reqs[0].body["tool_choice"]; ok {
		t.Errorf("auto sent tool_choice %v", reqs[0].body["tool_choice"])
	}
	if reqs[1].body["tool_choice"] != "required" || reqs[2].body["tool_choice"] != "none" {
		t.Errorf("tool_choice %v and %v, want required and none", reqs[1].body["tool_choice"], reqs[2].body["tool_choice"])
	}
}
