// Package orchestrator runs the agent loop: it asks a model (a [Provider])
// for a turn, runs the tool calls the model makes through a
// [registry.Registry] that holds local Go tools and the tools of every
// connected MCP server, feeds the results back, and stops when the model
// answers without tool calls or a turn limit ([Config.MaxTurns],
// [ErrMaxTurns]) is reached.
//
// [New] connects the servers of a [Config] and returns an [Agent];
// [Agent.Run] runs one conversation from a prompt to the model's final
// answer, a [Result]; [Agent.Close] ends what New started. [Config.OnEvent]
// sees the run as it happens, one [Event] at a time: the model's text as
// it streams, each tool call's start, progress, log messages and end.
// With [Config.Sampling] the agent's model also answers the servers'
// sampling requests.
//
// The providers for the Anthropic Messages API and the OpenAI Chat
// Completions API (also spoken by vLLM, llama.cpp and Ollama) live in the
// subpackages anthropic and openai; any other model is one small type that
// implements Provider ([ProviderFunc] adapts a function, as a scripted
// model in a test would be).
//
// Each server is an [MCPServer]: a [dial.Server] (a command, or a URL over
// Streamable HTTP, SSE, WebSocket or gRPC, as [dial.LoadConfig] reads them
// from a configuration file), a Transport the program connected, or a
// Connect function of its own. [New] connects them; [Config.Registry]
// lets the agent use a registry the program built instead, whose servers
// stay the program's.
package orchestrator

import (
	"context"
	"encoding/json"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/registry"
)

// Role is who said a message.
type Role string

// Roles of a conversation. The system prompt is not a message: it travels
// in Request.System.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// ToolCall is a model's request to run a tool.
type ToolCall = registry.Call

// ToolResult is the answer to one ToolCall, sent back to the model in the
// next user message.
type ToolResult = registry.Result

// Message is one message of the conversation.
type Message struct {
	Role Role
	// Content is text and images: a user's prompt, or the assistant's
	// text. Blocks a provider cannot carry are sent as text with a note.
	Content []mcp.Content
	// ToolCalls are the assistant's tool calls, in the model's order.
	ToolCalls []ToolCall
	// ToolResults (user messages only) answer the ToolCalls of the
	// assistant message before, in the same order.
	ToolResults []ToolResult
}

// Text returns the text of the message's text blocks, concatenated.
func (m *Message) Text() string {
	var s string
	for _, c := range m.Content {
		if c.Type == mcp.ContentText {
			s += c.Text
		}
	}
	return s
}

// ToolDef is a tool as offered to the model.
type ToolDef struct {
	Name        string
	Description string
	// InputSchema is the JSON Schema of the arguments (an object schema).
	InputSchema json.RawMessage
}

// Request is one turn's input.
type Request struct {
	System   string
	Messages []Message
	// Tools are the tools the model may call. The Agent hands every turn
	// the same slice while its registry's tools stay the same: a
	// Provider reads it and must not modify it.
	Tools []ToolDef
	// MaxTokens bounds the answer; zero lets the provider choose.
	MaxTokens int
	// Temperature, if set, is passed on.
	Temperature *float64
	// StopSequences, if any, are passed on.
	StopSequences []string
	// ToolChoice says whether the model may, must or must not call one of
	// Tools; the zero value lets it choose. A server's sampling request
	// sets it (sampling with tools).
	ToolChoice ToolChoice
}

// ToolChoice says whether the model may, must or must not call a tool.
type ToolChoice string

// Tool choices, as sampling/createMessage's toolChoice.mode names them.
const (
	ToolChoiceAuto     ToolChoice = ""
	ToolChoiceRequired ToolChoice = "required"
	ToolChoiceNone     ToolChoice = "none"
)

// StopReason says why the model stopped, in the provider-neutral terms the
// agent acts on.
type StopReason string

// Stop reasons. A provider maps its own values onto these; one it does not
// know becomes StopOther with the original kept in Response.RawStopReason.
const (
	StopEndTurn      StopReason = "end_turn"
	StopToolUse      StopReason = "tool_use"
	StopMaxTokens    StopReason = "max_tokens"
	StopStopSequence StopReason = "stop_sequence"
	StopRefusal      StopReason = "refusal"
	StopOther        StopReason = "other"
)

// Usage counts tokens.
type Usage struct {
	InputTokens  int
	OutputTokens int
}

// Add returns u plus v.
func (u Usage) Add(v Usage) Usage {
	return Usage{InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens}
}

// Response is one turn's output.
type Response struct {
	// Model is the model that answered, as the API reports it.
	Model         string
	Text          string
	ToolCalls     []ToolCall
	StopReason    StopReason
	RawStopReason string
	Usage         Usage
}

// Delta is a piece of a streamed answer.
type Delta struct {
	// Text is the next piece of the answer's text.
	Text string
}

// Provider is a model. Complete runs one turn. When stream is not nil the
// provider streams the answer and calls stream with each piece of text as
// it arrives (on the calling goroutine, in order) before returning the
// whole Response; when it is nil the provider may make a plain request.
// Complete must be safe for concurrent use: a server's sampling request may
// arrive while the agent's own turn is running.
type Provider interface {
	Complete(ctx context.Context, req *Request, stream func(Delta)) (*Response, error)
}

// ProviderFunc adapts a function to Provider: handy for scripted models in
// tests.
type ProviderFunc func(ctx context.Context, req *Request, stream func(Delta)) (*Response, error)

// Complete calls f.
func (f ProviderFunc) Complete(ctx context.Context, req *Request, stream func(Delta)) (*Response, error) {
	return f(ctx, req, stream)
}
