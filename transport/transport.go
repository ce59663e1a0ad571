package transport

import (
	"context"
	"time"

	"github.com/tako-mcp/tako/mcp"
)

// Transport is one connected MCP server, at the level of MCP operations.
// Session implements it over any Conn; a transport whose wire is not JSON-RPC
// may implement it directly. The registry cannot tell the difference.
//
// Every method is safe for concurrent use. List methods return every page;
// a server that did not declare the feature has nothing to list, so they
// return an empty list without sending anything. Other methods whose
// feature the server did not declare return an error wrapping ErrCapability,
// again without sending anything. After Close, every method returns an
// error wrapping ErrClosed.
type Transport interface {
	// ServerInfo returns what the handshake learned about the server.
	ServerInfo() ServerInfo

	ListTools(ctx context.Context) ([]mcp.Tool, error)
	CallTool(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error)

	ListResources(ctx context.Context) ([]mcp.Resource, error)
	ListResourceTemplates(ctx context.Context) ([]mcp.ResourceTemplate, error)
	ReadResource(ctx context.Context, params *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error)

	ListPrompts(ctx context.Context) ([]mcp.Prompt, error)
	GetPrompt(ctx context.Context, params *mcp.GetPromptParams) (*mcp.GetPromptResult, error)

	Complete(ctx context.Context, params *mcp.CompleteParams) (*mcp.CompleteResult, error)

	// Subscribe registers fn to receive every notification the server sends
	// that is not tied to one call (list changes, log messages, resource
	// updates). Notifications are delivered in order, one at a time, on a
	// goroutine of the transport's; fn must not block for long. The returned
	// function removes the subscription.
	//
	// A transport that cannot carry notifications (gRPC) says so in
	// ServerInfo().Notifications, and callers fall back to polling.
	Subscribe(fn func(mcp.Notification)) (unsubscribe func())

	// Close ends the connection, fails every pending call with an error
	// wrapping ErrClosed, and returns within a bounded time.
	Close() error
}

// ListTTL is implemented by transports that learn from the server how long
// a list stays fresh (the 2026-07-28 ttlMs, the gRPC service's ttl). The
// registry uses it, where a transport has no notifications, to decide when
// to list again; without it, a fixed cache time applies.
type ListTTL interface {
	// TTL reports how long the last listing of method (mcp.MethodToolsList,
	// ...) stays fresh; ok is false when the server said nothing.
	TTL(method string) (d time.Duration, ok bool)
}

// ServerInfo is what a client knows about a connected server.
type ServerInfo struct {
	// ProtocolVersion is the negotiated revision, e.g. "2025-11-25".
	ProtocolVersion string
	Implementation  mcp.Implementation
	Capabilities    mcp.ServerCapabilities
	// Instructions is the server's advice for the model, if any; a host may
	// add it to the system prompt.
	Instructions string
	// Notifications reports whether the transport delivers server
	// notifications to Subscribe.
	Notifications bool
}

// Handlers answer the requests a server sends to the client. The same
// handler serves a legacy server-to-client request and a 2026-07-28
// input_required round, so the caller writes it once. A nil handler means
// the capability is not declared, unless Options.Capabilities (or, for
// roots, Options.Roots) declares it.
type Handlers struct {
	// Sampling answers sampling/createMessage: the server asks the client's
	// model for a completion.
	Sampling func(ctx context.Context, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	// SamplingTools declares that Sampling accepts requests with tools.
	SamplingTools bool
	// Elicitation answers elicitation/create: the server asks the user.
	// For a form, the engine checks the requestedSchema before calling it,
	// fills the schema's defaults into an accepted answer for every field
	// left out (an empty accept takes every default), and refuses to send
	// an answer that then breaks the schema (an *ElicitationContentError;
	// elicit.go). For a URL elicitation, accept means the user consented,
	// or, for one listed in a -32042 error, that the user finished; the
	// engine then retries the failed request once (elicit_url.go).
	Elicitation func(ctx context.Context, req *mcp.ElicitParams) (*mcp.ElicitResult, error)
	// ElicitationURL declares URL mode next to form mode, and lets the
	// engine answer -32042 errors through Elicitation.
	ElicitationURL bool
	// Roots answers roots/list.
	Roots func(ctx context.Context) ([]mcp.Root, error)
}
