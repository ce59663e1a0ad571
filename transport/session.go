package transport

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/tako-mcp/tako/mcp"
)

var errTODO = errors.New("not implemented yet")

// Session is the one engine: it turns a Conn into a Transport.
type Session struct{}

// Connect runs the handshake over conn and returns a ready Session. Connect
// takes ownership of conn: if the handshake fails, conn is closed before
// Connect returns.
func Connect(ctx context.Context, conn Conn, opts *Options) (*Session, error) { return nil, errTODO }

// Call sends a request and decodes its result into result (which may be a
// *json.RawMessage to keep it raw).
func (s *Session) Call(ctx context.Context, method string, params, result any) error { return errTODO }

// Notify sends a notification.
func (s *Session) Notify(ctx context.Context, method string, params any) error { return errTODO }

// Ping checks that the server answers (legacy eras).
func (s *Session) Ping(ctx context.Context) error { return errTODO }

// Done is closed when the session has ended, by Close or by losing the Conn.
func (s *Session) Done() <-chan struct{} { return nil }

// Err returns why the session ended, or nil while it runs.
func (s *Session) Err() error { return nil }

func (s *Session) ServerInfo() ServerInfo                            { return ServerInfo{} }
func (s *Session) ListTools(ctx context.Context) ([]mcp.Tool, error) { return nil, errTODO }
func (s *Session) CallTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	return nil, errTODO
}
func (s *Session) ListResources(ctx context.Context) ([]mcp.Resource, error) { return nil, errTODO }
func (s *Session) ListResourceTemplates(ctx context.Context) ([]mcp.ResourceTemplate, error) {
	return nil, errTODO
}
func (s *Session) ReadResource(ctx context.Context, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	return nil, errTODO
}
func (s *Session) ListPrompts(ctx context.Context) ([]mcp.Prompt, error) { return nil, errTODO }
func (s *Session) GetPrompt(ctx context.Context, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	return nil, errTODO
}
func (s *Session) Complete(ctx context.Context, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	return nil, errTODO
}
func (s *Session) Subscribe(fn func(mcp.Notification)) func() { return func() {} }
func (s *Session) Close() error                               { return nil }

var _ Transport = (*Session)(nil)
var _ = json.RawMessage(nil)
