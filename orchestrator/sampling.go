package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tako-mcp/tako/mcp"
)

// sample answers a server's sampling/createMessage with the agent's
// provider. When the request carries tools (sampling with tools,
// 2025-11-25), they are offered to the model and its tool calls come back
// as tool_use blocks with stopReason toolUse: the server runs the tools and
// asks again with the history and one tool_result per tool_use, so each
// createMessage is one turn of a multi-turn exchange that the server
// drives. The agent never runs a sampling request's tools itself: they are
// the server's, not the agent's.
func (a *Agent) sample(ctx context.Context, server string, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	req := &Request{System: p.SystemPrompt, MaxTokens: p.MaxTokens, Temperature: p.Temperature, StopSequences: p.StopSequences}
	if req.MaxTokens <= 0 {
		req.MaxTokens = a.cfg.MaxTokens
	}
	msgs, err := samplingMessages(p.Messages)
	if err != nil {
		return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: "sampling request: " + err.Error()}
	}
	req.Messages = msgs
	mode := ""
	if p.ToolChoice != nil {
		mode = p.ToolChoice.Mode
	}
	switch mode {
	case "", "auto":
	case "required":
		req.ToolChoice = ToolChoiceRequired
	case "none":
		req.ToolChoice = ToolChoiceNone
	default:
		return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: fmt.Sprintf("sampling request: unknown toolChoice mode %q", mode)}
	}
	if mode == "required" && len(p.Tools) == 0 {
		return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: `sampling request: toolChoice "required" without tools`}
	}
	for _, t := range p.Tools {
		req.Tools = append(req.Tools, ToolDef{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
	}
	start := time.Now()
	resp, err := a.cfg.Provider.Complete(ctx, req, nil)
	if err != nil {
		return nil, err
	}
	a.addUsage(resp.Usage)
	a.emit(Event{Kind: EventSampling, Server: server, Sampling: p, Response: resp, Duration: time.Since(start)})
	return samplingResult(resp, len(p.Tools) > 0)
}

// samplingResult turns the model's answer into a createMessage result: one
// text block as a plain object (what every revision reads), or, when the
// model called tools, an array of the text and one tool_use block per call.
func samplingResult(resp *Response, offeredTools bool) (*mcp.CreateMessageResult, error) {
	stop := mcp.StopEndTurn
	switch resp.StopReason {
	case StopMaxTokens:
		stop = mcp.StopMaxTokens
	case StopStopSequence:
		stop = mcp.StopStopSequence
	}
	var content []byte
	var err error
	if len(resp.ToolCalls) == 0 || !offeredTools {
		content, err = json.Marshal(mcp.TextContent(resp.Text))
	} else {
		stop = mcp.StopToolUse
		blocks := make([]mcp.Content, 0, len(resp.ToolCalls)+1)
		if resp.Text != "" {
			blocks = append(blocks, mcp.TextContent(resp.Text))
		}
		for i, c := range resp.ToolCalls {
			id := c.ID
			if id == "" {
				id = fmt.Sprintf("call_%d", i+1)
			}
			blocks = append(blocks, mcp.ToolUseContent(id, c.Name, toolInput(c.Arguments)))
		}
		content, err = json.Marshal(blocks)
	}
	if err != nil {
		return nil, err
	}
	return &mcp.CreateMessageResult{Role: string(RoleAssistant), Content: content, Model: resp.Model, StopReason: stop}, nil
}

// toolInput is the model's arguments as the JSON object a tool_use block
// must carry. Arguments that are not an object are passed under "input", so
// that the server's tool sees them and can report them as invalid.
func toolInput(args json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if len(args) == 0 {
		return json.RawMessage(`{}`)
	}
	if json.Unmarshal(args, &obj) == nil && obj != nil {
		return args
	}
	wrapped, err := json.Marshal(map[string]json.RawMessage{"input": jsonOrString(args)})
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return wrapped
}

func jsonOrString(b []byte) json.RawMessage {
	if json.Valid(b) {
		return b
	}
	q, _ := json.Marshal(string(b))
	return q
}

// samplingMessages converts a sampling conversation. tool_use blocks of an
// assistant message become its ToolCalls, and the user message after it
// must answer each of them with a tool_result and hold nothing else, as the
// specification requires; a history that breaks this is an error the caller
// reports as invalid params.
func samplingMessages(in []mcp.SamplingMessage) ([]Message, error) {
	out := make([]Message, 0, len(in))
	var pending map[string]string // tool_use id -> tool name, awaiting results
	for i := range in {
		blocks, err := in[i].Blocks()
		if err != nil {
			return nil, fmt.Errorf("message %d is unreadable: %v", i, err)
		}
		var m Message
		switch in[i].Role {
		case string(RoleAssistant):
			if pending != nil {
				return nil, fmt.Errorf("message %d: the tool_use blocks of message %d have no tool_result", i, i-1)
			}
			m.Role = RoleAssistant
			for _, b := range blocks {
				switch b.Type {
				case mcp.ContentToolUse:
					u := b.ToolUse
					if u == nil || u.ID == "" || u.Name == "" {
						return nil, fmt.Errorf("message %d: a tool_use block needs an id and a name", i)
					}
					if pending == nil {
						pending = map[string]string{}
					}
					if _, dup := pending[u.ID]; dup {
						return nil, fmt.Errorf("message %d: tool_use id %q appears twice", i, u.ID)
					}
					pending[u.ID] = u.Name
					args := u.Input
					if len(args) == 0 {
						args = json.RawMessage(`{}`)
					}
					m.ToolCalls = append(m.ToolCalls, ToolCall{ID: u.ID, Name: u.Name, Arguments: args})
				case mcp.ContentToolResult:
					return nil, fmt.Errorf("message %d: a tool_result block belongs in a user message", i)
				default:
					m.Content = append(m.Content, b)
				}
			}
		case string(RoleUser):
			m.Role = RoleUser
			for _, b := range blocks {
				if b.Type == mcp.ContentToolUse {
					return nil, fmt.Errorf("message %d: a tool_use block belongs in an assistant message", i)
				}
				if b.Type != mcp.ContentToolResult {
					if pending != nil {
						return nil, fmt.Errorf("message %d answers tool calls and must hold only tool_result blocks, not %q", i, b.Type)
					}
					m.Content = append(m.Content, b)
					continue
				}
				r := b.ToolResult
				if r == nil {
					r = &mcp.ToolResult{}
				}
				name, ok := pending[r.ToolUseID]
				if !ok {
					return nil, fmt.Errorf("message %d: tool_result for %q answers no tool_use of the message before", i, r.ToolUseID)
				}
				delete(pending, r.ToolUseID)
				content := r.Content
				if content == nil {
					content = []mcp.Content{}
				}
				m.ToolResults = append(m.ToolResults, ToolResult{ID: r.ToolUseID, Name: name, Content: content, StructuredContent: r.StructuredContent, IsError: r.IsError})
			}
			if len(pending) > 0 {
				return nil, fmt.Errorf("message %d lacks a tool_result for %d tool_use block(s) of the message before", i, len(pending))
			}
			pending = nil
		default:
			return nil, fmt.Errorf("message %d has role %q, want user or assistant", i, in[i].Role)
		}
		out = append(out, m)
	}
	if pending != nil {
		return nil, fmt.Errorf("the last message calls tools but no tool_result follows")
	}
	return out, nil
}
