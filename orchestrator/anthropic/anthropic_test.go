package anthropic

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

// fakeAPI answers each POST /v1/messages with the next scripted answer and
// records the requests.
type fakeAPI struct {
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
	f := &fakeAPI{answers: answers}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
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

// sseAnswer writes events given as "name data" pairs.
func sseAnswer(events ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			name, data, _ := strings.Cut(e, " ")
			io.WriteString(w, "event: "+name+"\ndata: "+data+"\n\n")
			w.(http.Flusher).Flush()
		}
	}
}

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
	p, err := New(Options{Model: "claude-test", BaseURL: srv.URL, APIKey: "sk-ant-test", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if sl != nil {
		p.opts.sleep = sl.sleep
	}
	return p
}

func conversation() *orchestrator.Request {
	text := "file body"
	return &orchestrator.Request{
		System: "be brief",
		Messages: []orchestrator.Message{
			{Role: orchestrator.RoleUser, Content: []mcp.Content{mcp.TextContent("look"), {Type: mcp.ContentImage, MIMEType: "image/png", Data: mcp.BinaryFromBase64("iVBORw0KGgo=")}}},
			{Role: orchestrator.RoleAssistant, Content: []mcp.Content{mcp.TextContent("calling")}, ToolCalls: []orchestrator.ToolCall{
				{ID: "toolu_1", Name: "read", Arguments: json.RawMessage(`{"path":"a"}`)},
				{ID: "toolu_2", Name: "fail"},
			}},
			{Role: orchestrator.RoleUser, ToolResults: []orchestrator.ToolResult{
				{ID: "toolu_1", Content: []mcp.Content{
					{Type: mcp.ContentImage, MIMEType: "image/jpeg", Data: mcp.BinaryFromBase64("/9j/")},
					{Type: mcp.ContentAudio, MIMEType: "audio/wav", Data: mcp.BinaryFromBase64("UklGRg==")},
					{Type: mcp.ContentResource, Resource: &mcp.ResourceContents{URI: "file:///a", MIMEType: "text/plain", Text: &text}},
				}},
				{ID: "toolu_2", IsError: true, Content: []mcp.Content{mcp.TextContent("boom")}},
			}},
		},
		Tools:     []orchestrator.ToolDef{{Name: "read", Description: "reads", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		MaxTokens: 200,
	}
}

func TestToolUseNonStreaming(t *testing.T) {
	f, srv := newFake(t, jsonAnswer(200, `{
	  "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test-1",
	  "content": [
	    {"type": "text", "text": "I'll check both."},
	    {"type": "tool_use", "id": "toolu_a", "name": "read", "input": {"path": "x"}},
	    {"type": "tool_use", "id": "toolu_b", "name": "list", "input": {}}
	  ],
	  "stop_reason": "tool_use", "stop_sequence": null,
	  "usage": {"input_tokens": 20, "output_tokens": 9}
	}`))
	p := newProvider(t, srv, nil)
	resp, err := p.Complete(context.Background(), conversation(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "I'll check both." || resp.StopReason != orchestrator.StopToolUse || resp.Usage != (orchestrator.Usage{InputTokens: 20, OutputTokens: 9}) {
		t.Errorf("response: %+v", resp)
	}
	if len(resp.ToolCalls) != 2 || resp.ToolCalls[0].ID != "toolu_a" || string(resp.ToolCalls[0].Arguments) != `{"path": "x"}` || resp.ToolCalls[1].Name != "list" {
		t.Errorf("tool calls: %+v", resp.ToolCalls)
	}

	req := f.requests()[0]
	if req.header.Get("X-Api-Key") != "sk-ant-test" || req.header.Get("Anthropic-Version") != Version {
		t.Errorf("headers: %v", req.header)
	}
	if req.body["system"] != "be brief" || req.body["max_tokens"] != float64(200) || req.body["model"] != "claude-test" {
		t.Errorf("request: %s", req.raw)
	}
	msgs := req.body["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("messages: %s", req.raw)
	}
	img := msgs[0].(map[string]any)["content"].([]any)[1].(map[string]any)
	if img["type"] != "image" || img["source"].(map[string]any)["media_type"] != "image/png" {
		t.Errorf("user image: %v", img)
	}
	asst := msgs[1].(map[string]any)["content"].([]any)
	if len(asst) != 3 || asst[1].(map[string]any)["type"] != "tool_use" || asst[2].(map[string]any)["input"] == nil {
		t.Errorf("assistant blocks: %v", asst)
	}
	results := msgs[2].(map[string]any)["content"].([]any)
	r1 := results[0].(map[string]any)
	inner := r1["content"].([]any)
	if r1["type"] != "tool_result" || r1["tool_use_id"] != "toolu_1" || inner[0].(map[string]any)["type"] != "image" ||
		!strings.Contains(inner[1].(map[string]any)["text"].(string), "audio content (audio/wav") ||
		!strings.Contains(inner[2].(map[string]any)["text"].(string), "file body") {
		t.Errorf("tool result (images kept, audio and resources as text with a note): %v", r1)
	}
	if r2 := results[1].(map[string]any); r2["is_error"] != true {
		t.Errorf("error result: %v", r2)
	}
	tool := req.body["tools"].([]any)[0].(map[string]any)
	if tool["name"] != "read" || tool["input_schema"] == nil {
		t.Errorf("tools: %v", tool)
	}
}

func TestStreaming(t *testing.T) {
	_, srv := newFake(t, sseAnswer(
		`message_start {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-s","content":[],"stop_reason":null,"usage":{"input_tokens":25,"output_tokens":1}}}`,
		`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`ping {"type":"ping"}`,
		`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Checking"}}`,
		`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" now."}}`,
		`content_block_stop {"type":"content_block_stop","index":0}`,
		`content_block_start {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_x","name":"read","input":{}}}`,
		`content_block_delta {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\": "}}`,
		`content_block_delta {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"b\"}"}}`,
		`content_block_stop {"type":"content_block_stop","index":1}`,
		`content_block_start {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_y","name":"list","input":{}}}`,
		`content_block_stop {"type":"content_block_stop","index":2}`,
		`message_delta {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":15}}`,
		`message_stop {"type":"message_stop"}`,
	))
	p := newProvider(t, srv, nil)
	var deltas []string
	resp, err := p.Complete(context.Background(), conversation(), func(d orchestrator.Delta) { deltas = append(deltas, d.Text) })
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(deltas, "|") != "Checking| now." || resp.Text != "Checking now." {
		t.Errorf("deltas %q, text %q", deltas, resp.Text)
	}
	if len(resp.ToolCalls) != 2 || string(resp.ToolCalls[0].Arguments) != `{"path": "b"}` || string(resp.ToolCalls[1].Arguments) != `{}` {
		t.Errorf("tool calls: %+v", resp.ToolCalls)
	}
	if resp.Usage != (orchestrator.Usage{InputTokens: 25, OutputTokens: 15}) || resp.StopReason != orchestrator.StopToolUse || resp.Model != "claude-s" {
		t.Errorf("response: %+v", resp)
	}
}

func TestAPIError(t *testing.T) {
	f, srv := newFake(t, jsonAnswer(400, `{"type":"error","error":{"type":"invalid_request_error","message":"messages: roles must alternate"}}`))
	p := newProvider(t, srv, &sleeps{})
	_, err := p.Complete(context.Background(), conversation(), nil)
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 400 || ae.Type != "invalid_request_error" || !strings.Contains(ae.Message, "alternate") {
		t.Fatalf("err = %v", err)
	}
	if len(f.requests()) != 1 {
		t.Errorf("a 400 was retried")
	}
}

func TestStreamError(t *testing.T) {
	_, srv := newFake(t, sseAnswer(
		`message_start {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"c","content":[],"usage":{"input_tokens":1,"output_tokens":0}}}`,
		`error {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
	))
	p := newProvider(t, srv, nil)
	_, err := p.Complete(context.Background(), conversation(), func(orchestrator.Delta) {})
	var ae *APIError
	if !errors.As(err, &ae) || ae.Type != "overloaded_error" {
		t.Fatalf("err = %v", err)
	}
}

func TestRetry429And529(t *testing.T) {
	limited := func(w http.ResponseWriter) {
		w.Header().Set("Retry-After", "3")
		jsonAnswer(429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`)(w)
	}
	overloaded := jsonAnswer(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	f, srv := newFake(t, limited, overloaded, jsonAnswer(200, `{"type":"message","role":"assistant","model":"c","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`))
	sl := &sleeps{}
	p := newProvider(t, srv, sl)
	resp, err := p.Complete(context.Background(), conversation(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "done" || resp.StopReason != orchestrator.StopEndTurn {
		t.Errorf("response %+v", resp)
	}
	if len(f.requests()) != 3 || len(sl.d) != 2 || sl.d[0] != 3*time.Second {
		t.Errorf("requests %d, waits %v; want retry-after's 3s then a backoff", len(f.requests()), sl.d)
	}
}

func TestMalformedBody(t *testing.T) {
	for name, answer := range map[string]func(http.ResponseWriter){
		"not json":     jsonAnswer(200, `{"type":"message","content":[`),
		"wrong type":   jsonAnswer(200, `{"type":"completion"}`),
		"bad event":    sseAnswer(`message_start {oops`),
		"no stop":      sseAnswer(`message_start {"type":"message_start","message":{"type":"message","content":[]}}`),
		"delta no blk": sseAnswer(`content_block_delta {"type":"content_block_delta","index":4,"delta":{"type":"text_delta","text":"x"}}`),
	} {
		t.Run(name, func(t *testing.T) {
			_, srv := newFake(t, answer)
			p := newProvider(t, srv, nil)
			if resp, err := p.Complete(context.Background(), conversation(), func(orchestrator.Delta) {}); err == nil {
				t.Fatalf("no error; response %+v", resp)
			}
		})
	}
}

func TestKeyFromEnvironment(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	if _, err := New(Options{Model: "m"}); err == nil {
		t.Error("New without a key succeeded")
	}
	t.Setenv("ANTHROPIC_API_KEY", "from-env")
	f, srv := newFake(t, jsonAnswer(200, `{"type":"message","role":"assistant","model":"c","content":[],"stop_reason":"end_turn","usage":{}}`))
	p, err := New(Options{Model: "m", BaseURL: srv.URL + "/v1/"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Complete(context.Background(), &orchestrator.Request{Messages: []orchestrator.Message{{Role: orchestrator.RoleUser, Content: []mcp.Content{mcp.TextContent("hi")}}}}, nil); err != nil {
		t.Fatal(err)
	}
	if got := f.requests()[0].header.Get("X-Api-Key"); got != "from-env" {
		t.Errorf("x-api-key %q", got)
	}
}

// TestToolChoice: required is the API's "any", none is "none", and the
// default sends no tool_choice.
func TestToolChoice(t *testing.T) {
	answer := `{"type":"message","model":"m","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`
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
	anyChoice, _ := reqs[1].body["tool_choice"].(map[string]any)
	none, _ := reqs[2].body["tool_choice"].(map[string]any)
	if anyChoice["type"] != "any" || none["type"] != "none" {
		t.Errorf("tool_choice %v and %v, want any and none", reqs[1].body["tool_choice"], reqs[2].body["tool_choice"])
	}
}
