// Package openai is an orchestrator.Provider for the OpenAI Chat
// Completions API (POST /v1/chat/completions), which local servers such as
// vLLM, llama.cpp and Ollama also speak: point BaseURL at them.
//
// Tool calls travel as tool_calls on the assistant message and results as
// role "tool" messages. Images in a user message are sent as image_url data
// URLs; content that a tool message cannot carry (images, audio, binary
// resources) is sent as text with a note (see orchestrator.ContentAsText).
package openai

import (
	"bytes"
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

// DefaultBaseURL is OpenAI's API root. A local server's is typically
// http://127.0.0.1:8000/v1 (vLLM), :8080/v1 (llama.cpp) or :11434/v1
// (Ollama).
const DefaultBaseURL = "https://api.openai.com/v1"

// maxBody bounds a response body or one streamed event.
const maxBody = 32 << 20

// Options configure a Provider. Model is required.
type Options struct {
	Model string
	// BaseURL is the API root, up to and including /v1. Empty means
	// $OPENAI_BASE_URL, else DefaultBaseURL.
	BaseURL string
	// APIKey is sent as a bearer token. Empty means $OPENAI_API_KEY; a
	// local server usually needs none, and then no header is sent.
	APIKey string
	// HTTPClient sends the requests; nil means one with no overall
	// timeout (the context bounds each call).
	HTTPClient *http.Client
	// MaxRetries is how many times a 429, a 5xx or a network error is
	// retried; zero means 3, negative means none.
	MaxRetries int
	// Stream asks for a streamed answer even when Complete is given no
	// callback. With a callback the answer is always streamed.
	Stream bool
	// MaxTokensField names the request's token limit: "max_tokens" (the
	// default, understood by local servers) or "max_completion_tokens"
	// (OpenAI's newer models require it).
	MaxTokensField string
	// Header is added to every request.
	Header http.Header

	// sleep replaces the retry wait in tests.
	sleep func(ctx context.Context, d time.Duration) error
}

// Provider calls the Chat Completions API. It is safe for concurrent use.
type Provider struct {
	opts  Options
	tools apiclient.ToolsJSON // the JSON of the tools last sent, for the next turn
}

// New returns a Provider.
func New(opts Options) (*Provider, error) {
	if opts.Model == "" {
		return nil, errors.New("openai: Options.Model is required")
	}
	if opts.BaseURL == "" {
		opts.BaseURL = os.Getenv("OPENAI_BASE_URL")
	}
	if opts.BaseURL == "" {
		opts.BaseURL = DefaultBaseURL
	}
	opts.BaseURL = strings.TrimRight(opts.BaseURL, "/")
	if opts.APIKey == "" {
		opts.APIKey = os.Getenv("OPENAI_API_KEY")
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
	if opts.MaxTokensField == "" {
		opts.MaxTokensField = "max_tokens"
	}
	return &Provider{opts: opts}, nil
}

// APIError is an error answer from the API.
type APIError struct {
	StatusCode int
	Type       string
	Code       string
	Message    string
}

func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.StatusCode)
	}
	if e.Type != "" {
		return fmt.Sprintf("openai: %d %s: %s", e.StatusCode, e.Type, msg)
	}
	return fmt.Sprintf("openai: %d: %s", e.StatusCode, msg)
}

// Wire types of the Chat Completions API.
type (
	// chatRequest has no "tools": they are spliced in, from the cache
	// (chatTools).
	chatRequest struct {
		Model         string         `json:"model"`
		Messages      []chatMessage  `json:"messages"`
		ToolChoice    string         `json:"tool_choice,omitempty"`
		Temperature   *float64       `json:"temperature,omitempty"`
		Stop          []string       `json:"stop,omitempty"`
		Stream        bool           `json:"stream,omitempty"`
		StreamOptions *streamOptions `json:"stream_options,omitempty"`
	}
	streamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	}
	chatMessage struct {
		Role       string     `json:"role"`
		Content    any        `json:"content"` // string, []contentPart, or nil
		ToolCalls  []toolCall `json:"tool_calls,omitempty"`
		ToolCallID string     `json:"tool_call_id,omitempty"`
	}
	contentPart struct {
		Type     string    `json:"type"`
		Text     string    `json:"text,omitempty"`
		ImageURL *imageURL `json:"image_url,omitempty"`
	}
	imageURL struct {
		URL string `json:"url"`
	}
	toolCall struct {
		Index    *int         `json:"index,omitempty"` // streaming only
		ID       string       `json:"id,omitempty"`
		Type     string       `json:"type,omitempty"`
		Function functionCall `json:"function"`
	}
	functionCall struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	}
	chatTool struct {
		Type     string       `json:"type"`
		Function functionDecl `json:"function"`
	}
	functionDecl struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	chatResponse struct {
		Model   string       `json:"model"`
		Choices []chatChoice `json:"choices"`
		Usage   *chatUsage   `json:"usage"`
	}
	chatChoice struct {
		Message      respMessage `json:"message"`
		Delta        respMessage `json:"delta"`
		FinishReason *string     `json:"finish_reason"`
	}
	respMessage struct {
		Content   *string    `json:"content"`
		Refusal   *string    `json:"refusal"`
		ToolCalls []toolCall `json:"tool_calls"`
	}
	chatUsage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	}
	errorBody struct {
		Error *struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
)

// Complete runs one turn. With stream set, the answer is streamed and
// stream receives each piece of text.
func (p *Provider) Complete(ctx context.Context, req *orchestrator.Request, stream func(orchestrator.Delta)) (*orchestrator.Response, error) {
	body, err := p.encode(req, stream != nil || p.opts.Stream)
	if err != nil {
		return nil, err
	}
	resp, err := apiclient.Do(ctx, p.opts.HTTPClient, apiclient.Retry{
		MaxRetries: p.opts.MaxRetries,
		Retryable:  func(s int) bool { return s == http.StatusTooManyRequests || s >= 500 },
		Sleep:      p.opts.sleep,
	}, func(ctx context.Context) (*http.Request, error) {
		r, err := body.NewRequest(ctx, http.MethodPost, p.opts.BaseURL+"/chat/completions")
		if err != nil {
			return nil, err
		}
		for k, v := range p.opts.Header {
			r.Header[k] = v
		}
		r.Header.Set("Content-Type", "application/json")
		if p.opts.APIKey != "" {
			r.Header.Set("Authorization", "Bearer "+p.opts.APIKey)
		}
		return r, nil
	})
	if err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		b, _ := apiclient.ReadBody(resp, 1<<20)
		return nil, apiError(resp.StatusCode, b)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		defer resp.Body.Close()
		return p.readStream(resp, stream)
	}
	b, err := apiclient.ReadBody(resp, maxBody)
	if err != nil {
		return nil, fmt.Errorf("openai: reading the response: %w", err)
	}
	var cr chatResponse
	if err := json.Unmarshal(b, &cr); err != nil {
		return nil, fmt.Errorf("openai: malformed response body: %w", err)
	}
	if len(cr.Choices) == 0 {
		return nil, errors.New("openai: malformed response body: no choices")
	}
	c := cr.Choices[0]
	out := &orchestrator.Response{Model: cr.Model}
	if c.Message.Content != nil {
		out.Text = *c.Message.Content
	} else if c.Message.Refusal != nil {
		out.Text = *c.Message.Refusal
	}
	if stream != nil && out.Text != "" {
		// A server that ignored stream:true still gets its text to the
		// callback.
		stream(orchestrator.Delta{Text: out.Text})
	}
	for _, tc := range c.Message.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, orchestrator.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: arguments(tc.Function.Arguments)})
	}
	if cr.Usage != nil {
		out.Usage = orchestrator.Usage{InputTokens: cr.Usage.PromptTokens, OutputTokens: cr.Usage.CompletionTokens}
	}
	finish := ""
	if c.FinishReason != nil {
		finish = *c.FinishReason
	}
	out.RawStopReason, out.StopReason = finish, stopReason(finish, len(out.ToolCalls) > 0)
	return out, nil
}

// arguments turns the API's argument string into raw JSON. An empty string
// means no arguments; anything that is not JSON is kept as a JSON string so
// that the registry reports it to the model as invalid.
func arguments(s string) json.RawMessage {
	s = strings.TrimSpace(s)
	if s == "" {
		return json.RawMessage(`{}`)
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	q, _ := json.Marshal(s)
	return q
}

func stopReason(finish string, hasTools bool) orchestrator.StopReason {
	switch finish {
	case "stop":
		if hasTools {
			return orchestrator.StopToolUse // some local servers say stop
		}
		return orchestrator.StopEndTurn
	case "tool_calls", "function_call":
		return orchestrator.StopToolUse
	case "length":
		return orchestrator.StopMaxTokens
	case "content_filter":
		return orchestrator.StopRefusal
	case "":
		if hasTools {
			return orchestrator.StopToolUse
		}
		return orchestrator.StopEndTurn
	}
	return orchestrator.StopOther
}

func apiError(status int, body []byte) error {
	e := &APIError{StatusCode: status}
	var eb errorBody
	if json.Unmarshal(body, &eb) == nil && eb.Error != nil {
		e.Message, e.Type = eb.Error.Message, eb.Error.Type
		if eb.Error.Code != nil {
			e.Code = fmt.Sprint(eb.Error.Code)
		}
	} else {
		e.Message = strings.TrimSpace(string(body[:min(len(body), 500)]))
	}
	return e
}

// readStream assembles a streamed answer.
func (p *Provider) readStream(resp *http.Response, stream func(orchestrator.Delta)) (*orchestrator.Response, error) {
	out := &orchestrator.Response{}
	var (
		text   strings.Builder
		calls  []*toolCall
		finish string
		done   bool
	)
	err := apiclient.ReadEvents(resp.Body, maxBody, func(ev apiclient.Event) error {
		if bytes.Equal(bytes.TrimSpace(ev.Data), []byte("[DONE]")) {
			done = true
			return nil
		}
		var chunk chatResponse
		if err := json.Unmarshal(ev.Data, &chunk); err != nil {
			var eb errorBody
			if json.Unmarshal(ev.Data, &eb) == nil && eb.Error != nil {
				return apiError(resp.StatusCode, ev.Data)
			}
			return fmt.Errorf("openai: malformed stream event: %w", err)
		}
		if chunk.Model != "" {
			out.Model = chunk.Model
		}
		if chunk.Usage != nil {
			out.Usage = orchestrator.Usage{InputTokens: chunk.Usage.PromptTokens, OutputTokens: chunk.Usage.CompletionTokens}
		}
		if len(chunk.Choices) == 0 {
			var eb errorBody
			if json.Unmarshal(ev.Data, &eb) == nil && eb.Error != nil {
				return apiError(resp.StatusCode, ev.Data)
			}
			return nil
		}
		c := chunk.Choices[0]
		if c.Delta.Content != nil && *c.Delta.Content != "" {
			text.WriteString(*c.Delta.Content)
			if stream != nil {
				stream(orchestrator.Delta{Text: *c.Delta.Content})
			}
		}
		for _, d := range c.Delta.ToolCalls {
			i := len(calls)
			if d.Index != nil {
				i = *d.Index
			}
			if i < 0 || i > 1024 {
				return fmt.Errorf("openai: malformed stream event: tool call index %d", i)
			}
			for len(calls) <= i {
				calls = append(calls, &toolCall{})
			}
			tc := calls[i]
			if d.ID != "" {
				tc.ID = d.ID
			}
			tc.Function.Name += d.Function.Name
			tc.Function.Arguments += d.Function.Arguments
		}
		if c.FinishReason != nil {
			finish = *c.FinishReason
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !done && finish == "" {
		return nil, errors.New("openai: the stream ended before the answer was complete")
	}
	out.Text = text.String()
	for _, tc := range calls {
		if tc.Function.Name == "" {
			continue
		}
		out.ToolCalls = append(out.ToolCalls, orchestrator.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: arguments(tc.Function.Arguments)})
	}
	out.RawStopReason, out.StopReason = finish, stopReason(finish, len(out.ToolCalls) > 0)
	return out, nil
}

// encode builds the request body.
func (p *Provider) encode(req *orchestrator.Request, stream bool) (apiclient.Body, error) {
	cr := chatRequest{Model: p.opts.Model, Temperature: req.Temperature, Stop: req.StopSequences, Stream: stream}
	if stream {
		cr.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	if req.System != "" {
		cr.Messages = append(cr.Messages, chatMessage{Role: "system", Content: req.System})
	}
	for _, m := range req.Messages {
		cr.Messages = append(cr.Messages, messages(m)...)
	}
	if len(req.Tools) > 0 {
		// The API's names for the two choices other than the default
		// are those of sampling's toolChoice.mode.
		cr.ToolChoice = string(req.ToolChoice)
	}
	b, err := json.Marshal(cr)
	if err != nil {
		return nil, fmt.Errorf("openai: encoding the request: %w", err)
	}
	if req.MaxTokens > 0 {
		// The field's name is configurable, so it is spliced in.
		b = append(b[:len(b)-1], fmt.Sprintf(",%q:%d}", p.opts.MaxTokensField, req.MaxTokens)...)
	}
	if len(req.Tools) == 0 {
		return apiclient.Body{b}, nil
	}
	// The tools' JSON comes from the cache when they are those of the
	// last turn; they are converted only when it does not.
	tj, err := p.tools.Get(req.Tools, func() ([]byte, error) { return json.Marshal(chatTools(req.Tools)) })
	if err != nil {
		return nil, fmt.Errorf("openai: encoding the request: %w", err)
	}
	return apiclient.Splice(b, "tools", tj), nil
}

// chatTools is the request's "tools" member, spliced into its JSON.
func chatTools(tools []orchestrator.ToolDef) []chatTool {
	out := make([]chatTool, len(tools))
	for i, t := range tools {
		params := t.InputSchema
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out[i] = chatTool{Type: "function", Function: functionDecl{Name: t.Name, Description: t.Description, Parameters: params}}
	}
	return out
}

// messages converts one conversation message; tool results become one
// "tool" message each.
func messages(m orchestrator.Message) []chatMessage {
	var out []chatMessage
	if m.Role == orchestrator.RoleAssistant {
		cm := chatMessage{Role: "assistant"}
		if t := textOf(m.Content); t != "" {
			cm.Content = t
		}
		for _, tc := range m.ToolCalls {
			args := string(tc.Arguments)
			if args == "" {
				args = "{}"
			}
			cm.ToolCalls = append(cm.ToolCalls, toolCall{ID: tc.ID, Type: "function", Function: functionCall{Name: tc.Name, Arguments: args}})
		}
		return append(out, cm)
	}
	for i := range m.ToolResults {
		r := &m.ToolResults[i]
		text := orchestrator.ResultText(r)
		if r.IsError {
			text = "Error: " + text
		}
		out = append(out, chatMessage{Role: "tool", ToolCallID: r.ID, Content: text})
	}
	if len(m.Content) > 0 {
		out = append(out, chatMessage{Role: "user", Content: userContent(m.Content)})
	}
	return out
}

func textOf(cs []mcp.Content) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, orchestrator.ContentAsText(c))
	}
	return strings.Join(parts, "\n")
}

// userContent is a plain string when the message is only text, else parts
// with images as data URLs.
func userContent(cs []mcp.Content) any {
	plain := true
	for _, c := range cs {
		if c.Type != mcp.ContentText {
			plain = false
		}
	}
	if plain {
		return textOf(cs)
	}
	parts := make([]contentPart, 0, len(cs))
	for _, c := range cs {
		if c.Type == mcp.ContentImage && !c.Data.IsZero() {
			if _, err := c.Data.Bytes(); err == nil { // base64 text is checked; bytes are bytes
				parts = append(parts, contentPart{Type: "image_url", ImageURL: &imageURL{URL: "data:" + c.MIMEType + ";base64," + c.Data.Base64()}})
				continue
			}
		}
		parts = append(parts, contentPart{Type: "text", Text: orchestrator.ContentAsText(c)})
	}
	return parts
}
