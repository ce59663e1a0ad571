// Package transport holds tako's two seams and the one engine between them.
//
// A Conn moves JSON-RPC messages: stdio, Streamable HTTP and WebSocket are
// Conns, and so is anything a user writes over a pipe, a socket or a bus.
// A Transport performs MCP operations (list tools, call a tool, ...): it is
// what the registry and the orchestrator talk to. Session turns any Conn
// into a Transport, and is the only place where ids are allocated, responses
// matched, the handshake run, server requests answered, progress routed and
// cancellation sent (DESIGN.md rule 1). A transport whose wire is not
// JSON-RPC (gRPC) implements Transport directly.
//
// # Which call to use
//
// Every call takes a context and the method's own params, by pointer
// (nil where the method has none), and returns a typed result:
//
//	to ...                                     use
//	list every tool (all pages, typed)         [Transport.ListTools]
//	walk a huge list a page at a time          [Session.Tools] (an iterator); [Session.ListToolsPage] for one page and its cursor
//	call a tool                                [Transport.CallTool] with [mcp.CallToolParams]
//	call a tool with a Go value as arguments   [CallToolWith] (marshals the value; otherwise CallTool)
//	run a tool as a task, poll it, cancel it   [Session.CallToolTask], then [Task.Wait], [Session.GetTask], [Session.CancelTask]
//	get the protocol's own JSON of any result  [Call] (any [Caller]: the Session, the gRPC client), as tako --json does
//	a tool of the program's own beside them    registry.Registry (a Go function with a JSON Schema)
//
// Resources and prompts follow the same shape ([Transport.ListResources],
// [Transport.ReadResource], [Session.SubscribeResource],
// [Transport.ListPrompts], [Transport.GetPrompt]), as do the siblings of
// each list's page and iterator methods. [Session.Call] is the Caller
// method under [Call]; call [Call] rather than it, since it works on any
// Transport that can carry raw requests.
package transport

import (
	"context"
	"errors"
	"fmt"

	"github.com/tako-mcp/tako/mcp"
)

// Conn carries JSON-RPC messages to and from one MCP server.
//
// Concurrency: Read is called by one goroutine at a time (Session's reader).
// Write may be called by many goroutines at once, concurrently with Read.
// Close may be called at any time, more than once, from any goroutine; it
// unblocks pending Read and Write calls, which then return an error that
// wraps ErrClosed (or a more precise error wrapping ErrConnectionLost when
// the peer went away first).
//
// Errors: Read returns a *MessageError for one bad message that does not
// poison the connection (the engine fails the request with that id, if any,
// and reads on). Any other error from Read is final: the connection is gone.
//
// Contexts: Write's ctx bounds the write. For a request, it is also the
// context of the call that made it (the Session passes the call's own), so
// a Conn whose answer arrives on a stream of its own (Streamable HTTP) may
// stop reading that stream when ctx ends before the answer: the caller
// has given up.
//
// What only the wire can see reaches the engine as typed errors, for every
// kind of message the Conn writes (requests, notifications, answers to
// server requests), and the engine decides what to do: an error wrapping
// ErrSessionExpired (from Write, or as a MessageError) makes the engine run
// the legacy handshake again and send the message once more; a request
// failed with one wrapping ErrRequestLost is re-sent with a new id; an
// initialize whose Write fails with ErrLegacyWire makes the engine ask the
// Conn to switch to the older wire (Informed.SwitchWire) and try again. In the
// other direction a Conn that needs protocol state implements Informed and
// is told it.
type Conn interface {
	// Read returns the next message from the server. It blocks until one
	// arrives, ctx is done, or the connection ends.
	Read(ctx context.Context) (*mcp.Message, error)
	// Write sends one message to the server. The message must not be
	// modified after Write returns; Write does not retain it.
	Write(ctx context.Context, msg *mcp.Message) error
	// Close ends the connection and releases everything it holds (for stdio:
	// the child process and its process group), within a bounded time.
	Close() error
}

// Sentinel errors. Every error tako returns for these conditions wraps one of
// them, so errors.Is works through any wrapper.
var (
	// ErrClosed: the Session or Conn was closed by its owner.
	ErrClosed = errors.New("mcp connection closed")
	// ErrConnectionLost: the peer went away (process exited, stream
	// dropped). Transport-specific errors such as *stdio.ExitError wrap it.
	ErrConnectionLost = errors.New("mcp connection lost")
	// ErrSessionExpired: the server no longer knows the session (HTTP 404
	// on a legacy session); the engine starts a new one.
	ErrSessionExpired = errors.New("mcp session expired")
	// ErrUnsupportedVersion: no protocol revision both sides speak.
	ErrUnsupportedVersion = errors.New("mcp: no mutually supported protocol version")
	// ErrMessageTooLarge: a message exceeded the configured size cap.
	ErrMessageTooLarge = errors.New("mcp message too large")
	// ErrProtocol: the peer broke the protocol (malformed result, unknown
	// resultType, a handshake answer that makes no sense).
	ErrProtocol = errors.New("mcp protocol violation")
	// ErrAuthRequired: the server wants credentials (HTTP 401/403).
	ErrAuthRequired = errors.New("mcp: authorization required")
	// ErrCapability: the server did not declare the capability the call
	// needs, so tako did not send it.
	ErrCapability = errors.New("mcp: server lacks capability")
	// ErrNotMCP: the peer answered with something that is not MCP at all,
	// such as a web page or a login portal where the MCP endpoint was
	// expected (*streamablehttp.ContentTypeError wraps it). The handshake
	// stops at it instead of trying another era: no era would do better.
	ErrNotMCP = errors.New("mcp: the peer does not speak MCP")
	// ErrRequestLost: the request or its answer was lost in transit (a
	// 2026-07-28 response stream broke before the response). A Conn reports
	// it as a MessageError for that request's id; the engine re-sends the
	// request with a new id, at most twice.
	ErrRequestLost = errors.New("mcp request lost in transit")
	// ErrLegacyWire: the endpoint refused the initialize in a way that
	// says an older wire of the same transport may answer at the same
	// address (Streamable HTTP: a 400, 404 or 405, where a 2024-11-05
	// HTTP+SSE server may be listening). A Conn returns it from the
	// initialize's Write; the engine asks an Informed Conn to switch
	// (Informed.SwitchWire), once, and sends initialize again.
	ErrLegacyWire = errors.New("mcp: the endpoint refuses this wire; an older one may answer there")
)

// SkipReporter is implemented by Conns that skip what their peer sends when
// it is not a message at all, rather than failing on it: stdio passes over
// lines on stdout that are not JSON-RPC (a banner, log lines), as the
// checklist asks (§3.3). When the handshake fails, Connect adds what was
// skipped to its error, so that a server that wrote its logs to stdout and
// nothing else is told apart from one that was only slow, without a debug
// log.
type SkipReporter interface {
	Conn
	// Skipped returns an error that says what the Conn has skipped so far,
	// or nil if it skipped nothing.
	Skipped() error
}

// MessageError reports one message the Conn could not deliver (too large, or
// not JSON-RPC) without ending the connection. ID is the id of the response
// it belonged to when the Conn could tell, so the engine can fail exactly
// that call.
type MessageError struct {
	ID  mcp.ID
	Err error
}

func (e *MessageError) Error() string {
	if e.ID.IsValid() {
		return fmt.Sprintf("message for request %s: %v", e.ID, e.Err)
	}
	return "bad message: " + e.Err.Error()
}

func (e *MessageError) Unwrap() error { return e.Err }

// ToolError is a tool result with isError set, as a Go error. Transports
// return such results as values, for a model to see and correct; a program
// that wants an error instead calls ToolResultError.
type ToolError struct {
	Tool   string
	Result *mcp.CallToolResult
}

func (e *ToolError) Error() string {
	return fmt.Sprintf("tool %q reported an error: %s", e.Tool, e.Result.Text())
}

// ToolResultError returns a *ToolError when res reports a tool error
// (isError), and nil otherwise:
//
//	res, err := t.CallTool(ctx, params)
//	if err == nil {
//		err = transport.ToolResultError(params.Name, res)
//	}
func ToolResultError(tool string, res *mcp.CallToolResult) error {
	if res == nil || !res.IsError {
		return nil
	}
	return &ToolError{Tool: tool, Result: res}
}

// DefaultMaxMessageSize is the cap on one incoming message that every tako
// transport applies when its Options leave MaxMessageSize zero: large
// enough for any real tool result, small enough that a broken server cannot
// make the client buffer without bound.
const DefaultMaxMessageSize = 64 << 20
