// Package anthropic is an orchestrator.Provider for the Anthropic Messages
// API (POST /v1/messages).
//
// Tool calls are tool_use blocks of the assistant message and results are
// tool_result blocks of the next user message. Images (JPEG, PNG, GIF,
// WebP) travel as base64 image blocks, also inside tool results; other
// content (audio, resources, links) is sent as text with a note (see
// orchestrator.ContentAsText). 429 and 529 (overloaded) answers, 5xx answers
// and network errors are retried with backoff, honouring retry-after.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/orchestrator"
	"github.com/tako-mcp/tako/orchestrator/internal/apiclient"
)

// DefaultBaseURL is the API root.
const DefaultBaseURL = "https://api.anthropic.com"

// Version is the anthropic-version header sent by default.
const Version = "2023-06-01"

// maxBody bounds a response body or one streamed event.
const maxBody = 32 << 20

// Options configure a Provider. Model is required.
type Options struct {
	Model string
	// APIKey is sent as x-api-key. Empty means $ANTHROPIC_API_KEY.
	APIKey string
	// BaseURL is the API root without /v1. Empty means
	// $ANTHROPIC_BASE_URL, else DefaultBaseURL.
	BaseURL string
	// Version is the anthropic-version header; empty means Version.
	Version string
	// HTTPClient sends the requests; nil means one with no overall
	// timeout (the context bounds each call).
	HTTPClient *http.Client
	// MaxRetries is how many times a retryable failure is retried; zero
	// means 3, negative means none.
	MaxRetries int
	// Stream asks for a streamed answer even when Complete is given no
	// callback. With a callback the answer is always streamed.
	Stream bool
	// Header is added to every request (for example anthropic-beta).
	Header http.Header

	sleep func(ctx context.Context, d time.Duration) error
}

// Provider calls the Messages API. It is safe for concurrent use.
type Provider struct {
	opts  Options
	tools apiclient.ToolsJSON // the JSON of the tools last sent, for the next turn
}

// New returns a Provider. It fails when no API key is given or found in
// the environment.
func New(opts Options) (*Provider, error) {
	if opts.Model == "" {
		return nil, errors.New("anthropic: Options.Model is required")
	}
	if opts.APIKey == "" {
		opts.APIKey = os.Getenv("ANTHROPIC_API_KEY")
	}
	if opts.APIKey == "" {
		return nil, errors.New("anthropic: no API key: set Options.APIKey or ANTHROPIC_API_KEY")
	}
	if opts.BaseURL == "" {
		opts.BaseURL = os.Getenv("ANTHROPIC_BASE_URL")
	}
	if opts.BaseURL == "" {
		opts.BaseURL = DefaultBaseURL
	}
	opts.BaseURL = strings.TrimSuffix(strings.TrimRight(opts.BaseURL, "/"), "/v1")
	if opts.Version == "" {
		opts.Version = Version
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{}
	}
	switch {
	case opts.MaxRetries == 0:
		opts.MaxRetries = 3
	case opts.MaxRetries < 0:
		opts.MaxRetries = 0
	}
	return &Provider{opts: opts}, nil
}

// APIError is an error answer from the API.
type APIError struct {
	StatusCode int
	// Type is the API's error type, such as "rate_limit_error" or
	// "overloaded_error".
	Type    string
	Message string
}

func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.StatusCode)
	}
	return fmt.Sprintf("anthropic: %d %s: %s", e.StatusCode, e.Type, msg)
}

// Wire types of the Messages API.
type (
	// messagesRequest has no "tools": body splices them in, from the
	// cache (wireTools).
	messagesRequest struct {
		Model         string          `json:"model"`
		MaxTokens     int             `json:"max_tokens"`
		System        string          `json:"system,omitempty"`
		Messages      []wireMessage   `json:"messages"`
		ToolChoice    *toolChoice     `json:"tool_choice,omitempty"`
		Temperature   *float64        `json:"temperature,omitempty"`
		StopSequences []string        `json:"stop_sequences,omitempty"`
		Stream        bool            `json:"stream,omitempty"`
		Metadata      json.RawMessage `json:"metadata,omitempty"`
	}
	wireMessage struct {
		Role    string      `json:"role"`
		Content []wireBlock `json:"content"`
	}
	wireBlock struct {
		Type string `json:"type"`
		Text string `json:"text,omitempty"`
		// image
		Source *imageSource `json:"source,omitempty"`
		// tool_use
		ID    string          `json:"id,omitempty"`
		Name  string          `json:"name,omitempty"`
		Input json.RawMessage `json:"input,omitempty"`
		// tool_result
		ToolUseID string      `json:"tool_use_id,omitempty"`
		Content   []wireBlock `json:"content,omitempty"`
		IsError   bool        `json:"is_error,omitempty"`
	}
	imageSource struct {
		Type      string     `json:"type"`
		MediaType string     `json:"media_type"`
		Data      mcp.Binary `json:"data"` // written as base64, from bytes or the text as it came
	}
	toolChoice struct {
		Type string `json:"type"` // "auto", "any" or "none"
	}
	wireTool struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	messagesResponse struct {
		Type       string      `json:"type"`
		Model      string      `json:"model"`
		Content    []wireBlock `json:"content"`
		StopReason string      `json:"stop_reason"`
		Usage      wireUsage   `json:"usage"`
	}
	wireUsage struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	}
	errorBody struct {
		Type  string `json:"type"`
		Error *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
)

// Complete runs one turn.
func (p *Provider) Complete(ctx context.Context, req *orchestrator.Request, stream func(orchestrator.Delta)) (*orchestrator.Response, error) {
	streaming := stream != nil || p.opts.Stream
	body, err := p.body(req, streaming)
	if err != nil {
		return nil, fmt.Errorf("anthropic: encoding the request: %w", err)
	}
	resp, err := apiclient.Do(ctx, p.opts.HTTPClient, apiclient.Retry{
		MaxRetries: p.opts.MaxRetries,
		Retryable:  func(s int) bool { return s == http.StatusTooManyRequests || s >= 500 },
		Sleep:      p.opts.sleep,
	}, func(ctx context.Context) (*http.Request, error) {
		r, err := body.NewRequest(ctx, http.MethodPost, p.opts.BaseURL+"/v1/messages")
		if err != nil {
			return nil, err
		}
		for k, v := range p.opts.Header {
			r.Header[k] = v
		}
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("x-api-key", p.opts.APIKey)
		r.Header.Set("anthropic-version", p.opts.Version)
		return r, nil
	})
	if err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		b, _ := apiclient.ReadBody(resp, 1<<20)
		return nil, apiError(resp.StatusCode, b)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		defer resp.Body.Close()
		return readStream(resp, stream)
	}
	b, err := apiclient.ReadBody(resp, maxBody)
	if err != nil {
		return nil, fmt.Errorf("anthropic: reading the response: %w", err)
	}
	var mr messagesResponse
	if err := json.Unmarshal(b, &mr); err != nil {
		return nil, fmt.Errorf("anthropic: malformed response body: %w", err)
	}
	if mr.Type != "message" {
		return nil, fmt.Errorf("anthropic: malformed response body: type %q, want \"message\"", mr.Type)
	}
	out := decode(&mr)
	if stream != nil && out.Text != "" {
		stream(orchestrator.Delta{Text: out.Text})
	}
	return out, nil
}

func decode(mr *messagesResponse) *orchestrator.Response {
	out := &orchestrator.Response{
		Model: mr.Model,
		Usage: orchestrator.Usage{InputTokens: mr.Usage.InputTokens, OutputTokens: mr.Usage.OutputTokens},
	}
	var text strings.Builder
	for _, b := range mr.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			in := b.Input
			if len(in) == 0 {
				in = json.RawMessage(`{}`)
			}
			out.ToolCalls = append(out.ToolCalls, orchestrator.ToolCall{ID: b.ID, Name: b.Name, Arguments: in})
		}
	}
	out.Text = text.String()
	out.RawStopReason = mr.StopReason
	out.StopReason = stopReason(mr.StopReason, len(out.ToolCalls) > 0)
	return out
}

func stopReason(s string, hasTools bool) orchestrator.StopReason {
	switch s {
	case "end_turn":
		return orchestrator.StopEndTurn
	case "tool_use":
		return orchestrator.StopToolUse
	case "max_tokens":
		return orchestrator.StopMaxTokens
	case "stop_sequence":
		return orchestrator.StopStopSequence
	case "refusal":
		return orchestrator.StopRefusal
	}
	if hasTools {
		return orchestrator.StopToolUse
	}
	return orchestrator.StopOther
}

func apiError(status int, body []byte) error {
	e := &APIError{StatusCode: status}
	var eb errorBody
	if json.Unmarshal(body, &eb) == nil && eb.Error != nil {
		e.Type, e.Message = eb.Error.Type, eb.Error.Message
	} else {
		e.Message = strings.TrimSpace(string(body[:min(len(body), 500)]))
	}
	return e
}

// readStream assembles a streamed message from its events.
func readStream(resp *http.Response, stream func(orchestrator.Delta)) (*orchestrator.Response, error) {
	var (
		mr      messagesResponse
		partial = map[int]*strings.Builder{} // tool_use input JSON by block index
		stopped bool
	)
	err := apiclient.ReadEvents(resp.Body, maxBody, func(ev apiclient.Event) error {
		var e struct {
			Type         string          `json:"type"`
			Index        int             `json:"index"`
			Message      json.RawMessage `json:"message"`
			ContentBlock *wireBlock      `json:"content_block"`
			Delta        *struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				PartialJSON string `json:"partial_json"`
				StopReason  string `json:"stop_reason"`
			} `json:"delta"`
			Usage *wireUsage `json:"usage"`
		}
		if err := json.Unmarshal(ev.Data, &e); err != nil {
			return fmt.Errorf("anthropic: malformed stream event: %w", err)
		}
		switch e.Type {
		case "message_start":
			if err := json.Unmarshal(e.Message, &mr); err != nil {
				return fmt.Errorf("anthropic: malformed message_start: %w", err)
			}
			mr.Content = nil
		case "content_block_start":
			if e.ContentBlock == nil || e.Index != len(mr.Content) {
				return fmt.Errorf("anthropic: malformed content_block_start at index %d", e.Index)
			}
			b := *e.ContentBlock
			if b.Type == "tool_use" {
				b.Input = nil
				partial[e.Index] = &strings.Builder{}
			}
			mr.Content = append(mr.Content, b)
		case "content_block_delta":
			if e.Delta == nil || e.Index < 0 || e.Index >= len(mr.Content) {
				return fmt.Errorf("anthropic: malformed content_block_delta at index %d", e.Index)
			}
			switch e.Delta.Type {
			case "text_delta":
				mr.Content[e.Index].Text += e.Delta.Text
				if stream != nil && e.Delta.Text != "" {
					stream(orchestrator.Delta{Text: e.Delta.Text})
				}
			case "input_json_delta":
				if sb := partial[e.Index]; sb != nil {
					sb.WriteString(e.Delta.PartialJSON)
				}
			}
		case "content_block_stop":
			if sb := partial[e.Index]; sb != nil && e.Index < len(mr.Content) {
				in := strings.TrimSpace(sb.String())
				if in == "" {
					in = "{}"
				}
				if !json.Valid([]byte(in)) {
					q, _ := json.Marshal(in)
					in = string(q)
				}
				mr.Content[e.Index].Input = json.RawMessage(in)
			}
		case "message_delta":
			if e.Delta != nil && e.Delta.StopReason != "" {
				mr.StopReason = e.Delta.StopReason
			}
			if e.Usage != nil {
				mr.Usage.OutputTokens = e.Usage.OutputTokens
				if e.Usage.InputTokens > 0 {
					mr.Usage.InputTokens = e.Usage.InputTokens
				}
			}
		case "message_stop":
			stopped = true
		case "error":
			return apiError(resp.StatusCode, ev.Data)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !stopped {
		return nil, errors.New("anthropic: the stream ended before message_stop")
	}
	return decode(&mr), nil
}

// imageTypes are the media types the API accepts in image blocks.
var imageTypes = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}

// blocks converts MCP content to API blocks.
func blocks(cs []mcp.Content) []wireBlock {
	out := make([]wireBlock, 0, len(cs))
	for _, c := range cs {
		if c.Type == mcp.ContentImage && imageTypes[c.MIMEType] && !c.Data.IsZero() {
			out = append(out, wireBlock{Type: "image", Source: &imageSource{Type: "base64", MediaType: c.MIMEType, Data: c.Data}})
			continue
		}
		out = append(out, wireBlock{Type: "text", Text: orchestrator.ContentAsText(c)})
	}
	return out
}

// body is the request's JSON: encode's, with the tools' JSON from the
// cache when they are those of the last turn.
func (p *Provider) body(req *orchestrator.Request, stream bool) (apiclient.Body, error) {
	mr := p.encode(req, stream)
	b, err := json.Marshal(mr)
	if err != nil || len(req.Tools) == 0 {
		return apiclient.Body{b}, err
	}
	// Converted only when the cache does not have them: 10,000 tools
	// were 0.6 MB of wire structs a turn.
	tj, err := p.tools.Get(req.Tools, func() ([]byte, error) { return json.Marshal(wireTools(req.Tools)) })
	if err != nil {
		return nil, err
	}
	return apiclient.Splice(b, "tools", tj), nil
}

func (p *Provider) encode(req *orchestrator.Request, stream bool) *messagesRequest {
	mr := &messagesRequest{
		Model:         p.opts.Model,
		MaxTokens:     req.MaxTokens,
		System:        req.System,
		Temperature:   req.Temperature,
		StopSequences: req.StopSequences,
		Stream:        stream,
	}
	if mr.MaxTokens <= 0 {
		mr.MaxTokens = 4096 // required by the API
	}
	for _, m := range req.Messages {
		var wm wireMessage
		if m.Role == orchestrator.RoleAssistant {
			wm.Role = "assistant"
			for _, b := range blocks(m.Content) {
				if b.Type == "text" && b.Text == "" {
					continue // the API refuses empty text blocks
				}
				wm.Content = append(wm.Content, b)
			}
			for _, tc := range m.ToolCalls {
				in := tc.Arguments
				if len(in) == 0 || !json.Valid(in) {
					in = json.RawMessage(`{}`)
				}
				wm.Content = append(wm.Content, wireBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: in})
			}
		} else {
			wm.Role = "user"
			for i := range m.ToolResults {
				r := &m.ToolResults[i]
				content := blocks(r.Content)
				if len(content) == 0 && len(r.StructuredContent) > 0 {
					content = []wireBlock{{Type: "text", Text: string(r.StructuredContent)}}
				}
				wm.Content = append(wm.Content, wireBlock{Type: "tool_result", ToolUseID: r.ID, Content: content, IsError: r.IsError})
			}
			wm.Content = append(wm.Content, blocks(m.Content)...)
		}
		if len(wm.Content) == 0 {
			wm.Content = []wireBlock{{Type: "text", Text: "(empty)"}}
		}
		// The API wants the roles to alternate: merge a message into the
		// one before when both have the same role.
		if n := len(mr.Messages); n > 0 && mr.Messages[n-1].Role == wm.Role {
			mr.Messages[n-1].Content = append(mr.Messages[n-1].Content, wm.Content...)
			continue
		}
		mr.Messages = append(mr.Messages, wm)
	}
	if len(req.Tools) > 0 {
		switch req.ToolChoice {
		case orchestrator.ToolChoiceRequired:
			mr.ToolChoice = &toolChoice{Type: "any"}
		case orchestrator.ToolChoiceNone:
			mr.ToolChoice = &toolChoice{Type: "none"}
		}
	}
	return mr
}

// wireTools is the request's "tools" member; body adds it to encode's
// request.
func wireTools(tools []orchestrator.ToolDef) []wireTool {
	out := make([]wireTool, len(tools))
	for i, t := range tools {
		schema := t.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out[i] = wireTool{Name: t.Name, Description: t.Description, InputSchema: schema}
	}
	return out
}
