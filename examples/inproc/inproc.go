// Package inproc shows how to plug a transport of one's own into tako at
// the operation level: a transport.Transport written directly over an
// in-process Go service, with no JSON-RPC, no Conn and no Session. The
// registry (and so the orchestrator's agent loop) cannot tell it from an
// MCP server over stdio or HTTP: inproc_test.go registers one beside the
// reference MCP server and calls the tools of both.
//
// A Transport is the right seam when the other side is not JSON-RPC (a Go
// service, an RPC system of one's own, as tako's gRPC client is); when it
// is JSON-RPC over some byte pipe, a Conn is less work and gets the whole
// protocol from the Session (see examples/unixconn).
package inproc

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// Tool is one tool of the service: its MCP definition and the Go function
// that runs it.
type Tool struct {
	mcp.Tool
	Run func(ctx context.Context, arguments json.RawMessage) (*mcp.CallToolResult, error)
}

// Server is an in-process service as a transport.Transport. Its methods
// are safe for concurrent use; Close cancels the context of every call in
// flight.
type Server struct {
	name  string
	tools []Tool
	// closing ends with Close; every call's context is tied to it.
	closing context.Context
	close   context.CancelFunc
}

var _ transport.Transport = (*Server)(nil)

// New returns a service named name offering tools.
func New(name string, tools ...Tool) *Server {
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{name: name, tools: slices.Clone(tools), closing: ctx, close: cancel}
}

func (s *Server) closed(op string) error {
	if s.closing.Err() != nil {
		return fmt.Errorf("inproc %s: %w", op, transport.ErrClosed)
	}
	return nil
}

// ServerInfo describes the service. It has no handshake to negotiate a
// revision, and nothing to notify: the registry refreshes the tool list
// by its cache time.
func (s *Server) ServerInfo() transport.ServerInfo {
	return transport.ServerInfo{
		ProtocolVersion: mcp.LatestVersion,
		Implementation:  mcp.Implementation{Name: s.name, Version: "1.0.0"},
		Capabilities:    mcp.ServerCapabilities{Tools: &mcp.ListChangedCapability{}},
	}
}

// ListTools returns the definitions of the tools.
func (s *Server) ListTools(context.Context) ([]mcp.Tool, error) {
	if err := s.closed("ListTools"); err != nil {
		return nil, err
	}
	out := make([]mcp.Tool, len(s.tools))
	for i, t := range s.tools {
		out[i] = t.Tool
	}
	return out, nil
}

// CallTool runs a tool. An unknown name is the JSON-RPC error an MCP
// server gives (-32602); an error from the tool is a tool error, for the
// model to read; a call that Close interrupts fails with ErrClosed.
func (s *Server) CallTool(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	if err := s.closed("CallTool"); err != nil {
		return nil, err
	}
	i := slices.IndexFunc(s.tools, func(t Tool) bool { return t.Name == params.Name })
	if i < 0 {
		return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: "unknown tool " + params.Name}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.closing, cancel)
	defer stop()
	res, err := s.tools[i].Run(ctx, params.Arguments)
	if cerr := s.closed("CallTool"); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(err.Error())}, IsError: true}, nil
	}
	return res, nil
}

// ListResources returns no resources: the service has none, and a
// Transport lists nothing for a feature the server did not declare.
func (s *Server) ListResources(context.Context) ([]mcp.Resource, error) {
	return nil, s.closed("ListResources")
}

// ListResourceTemplates returns no templates, as ListResources.
func (s *Server) ListResourceTemplates(context.Context) ([]mcp.ResourceTemplate, error) {
	return nil, s.closed("ListResourceTemplates")
}

// ListPrompts returns no prompts, as ListResources.
func (s *Server) ListPrompts(context.Context) ([]mcp.Prompt, error) {
	return nil, s.closed("ListPrompts")
}

// ReadResource fails with an error wrapping transport.ErrCapability, as
// the Transport contract asks for a feature the server did not declare.
func (s *Server) ReadResource(context.Context, *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	return nil, s.unsupported("resources/read")
}

// GetPrompt fails as ReadResource does.
func (s *Server) GetPrompt(context.Context, *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	return nil, s.unsupported("prompts/get")
}

// Complete fails as ReadResource does.
func (s *Server) Complete(context.Context, *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	return nil, s.unsupported("completion/complete")
}

func (s *Server) unsupported(method string) error {
	if err := s.closed(method); err != nil {
		return err
	}
	return fmt.Errorf("inproc %s: %w", method, transport.ErrCapability)
}

// Subscribe delivers nothing: ServerInfo says the service has no
// notifications.
func (s *Server) Subscribe(func(mcp.Notification)) (unsubscribe func()) { return func() {} }

// Close cancels the calls in flight; they and every later call fail with
// an error wrapping transport.ErrClosed. It is idempotent.
func (s *Server) Close() error {
	s.close()
	return nil
}
