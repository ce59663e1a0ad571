package transport

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tako-mcp/tako/mcp"
)

// The engine tells the Conn what the protocol established.
//
// Some wires repeat protocol facts outside the message: Streamable HTTP
// sends the negotiated revision as a header, and on 2026-07-28 the method,
// the tool or resource name and some tool arguments too (checklist §4B.4,
// §4C.2). The engine has those facts already; a Conn that needs them
// implements Informed and is told, so it never parses a request's params or
// a result's body to learn them, and never rewrites a result. What only the
// wire can see still travels the other way, as typed errors (DESIGN.md:
// the wire knows, the engine acts).

// Informed is implemented by Conns that frame messages with protocol state.
// The Session calls its methods from the goroutines that make calls, so
// they must be safe for concurrent use with each other and with Write.
type Informed interface {
	Conn
	// SetProtocol says which revision the engine speaks from now on: the
	// version the 2026-07-28 requests carry (set before each
	// server/discover attempt), the version a legacy initialize
	// negotiated, or "" while a legacy handshake is under way.
	SetProtocol(version string)
	// NewSession says the engine is about to run the legacy handshake
	// again because the server forgot the session (the Conn reported
	// ErrSessionExpired): the Conn drops the old session's state (its id,
	// its GET stream) before the initialize goes out.
	NewSession()
	// SwitchWire says the engine takes the Conn's ErrLegacyWire on the
	// initialize at its word: the Conn switches to the older wire at the
	// same address (Streamable HTTP: the 2024-11-05 HTTP+SSE transport),
	// bounded by ctx, and carries every message on it from then on; the
	// engine then sends initialize again. An error means the older wire
	// is not there either; the engine reports both. A Conn with no older
	// wire never returns ErrLegacyWire and returns an error here.
	SwitchWire(ctx context.Context) error
	// ToolsListed hands the Conn every tool of a complete tools/list on
	// the 2026-07-28 wire. The Conn keeps what it needs (the x-mcp-header
	// parameters of each tool) and returns, by tool name, the tools its
	// wire cannot carry (an invalid x-mcp-header annotation, checklist
	// §4C.4); the engine drops those from the list and logs why.
	ToolsListed(tools []mcp.Tool) (rejected map[string]error)
	// WriteRequest is Write for a request, with what the engine knows of
	// it. The Session uses it instead of Write for every request.
	WriteRequest(ctx context.Context, msg *mcp.Message, info *RequestInfo) error
}

// RequestInfo is what the engine knows of a request beyond its envelope.
type RequestInfo struct {
	// Modern is true for a request on the 2026-07-28 wire.
	Modern bool
	// Name is the request's subject when its method has one: the tool or
	// prompt name (tools/call, prompts/get), the resource URI
	// (resources/read), or the task id (tasks/get, tasks/update,
	// tasks/cancel). HasName tells an empty name from none.
	Name    string
	HasName bool
	// Arguments are a tools/call's arguments, as sent.
	Arguments json.RawMessage
}

// requestInfo builds the RequestInfo of a request from its params. Typed
// operations that already hold the values fill it themselves; this serves
// Call, where the params come as JSON.
func requestInfo(modern bool, method string, params json.RawMessage) *RequestInfo {
	info := &RequestInfo{Modern: modern}
	if !modern {
		return info
	}
	var key string
	switch method {
	case mcp.MethodToolsCall, mcp.MethodPromptsGet:
		key = "name"
	case mcp.MethodResourcesRead:
		key = "uri"
	case mcp.MethodTasksGet, mcp.MethodTasksUpdate, mcp.MethodTasksCancel:
		key = "taskId"
	default:
		return info
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil {
		return info
	}
	if raw, ok := p[key]; ok && json.Unmarshal(raw, &info.Name) == nil {
		info.HasName = true
	}
	if method == mcp.MethodToolsCall {
		info.Arguments = p["arguments"]
	}
	return info
}

// write sends msg: a request through WriteRequest when the Conn is
// Informed, everything else through Write.
func (s *Session) write(ctx context.Context, msg *mcp.Message, info *RequestInfo) error {
	if s.informed != nil && msg.IsRequest() {
		if info == nil {
			info = requestInfo(s.modern, msg.Method, msg.Params)
		}
		return s.informed.WriteRequest(ctx, msg, info)
	}
	return s.conn.Write(ctx, msg)
}

// setProtocol tells an Informed Conn the revision now spoken.
func (s *Session) setProtocol(version string) {
	if s.informed != nil {
		s.informed.SetProtocol(version)
	}
}

// admitTools drops the tools an Informed Conn's wire cannot carry, on the
// 2026-07-28 wire (checklist §4C.4: drop, warn, keep the valid ones).
func (s *Session) admitTools(tools []mcp.Tool) []mcp.Tool {
	if s.informed == nil || !s.modern {
		return tools
	}
	rejected := s.informed.ToolsListed(tools)
	if len(rejected) == 0 {
		return tools
	}
	kept := tools[:0]
	for _, t := range tools {
		if err, bad := rejected[t.Name]; bad {
			s.log.Warn("mcp: dropping a tool the transport cannot carry", "tool", t.Name, "err", err)
			continue
		}
		kept = append(kept, t)
	}
	return kept
}

// checkRawTools is admitTools for tools kept as JSON (Call of tools/list).
func (s *Session) checkRawTools(items []json.RawMessage) ([]json.RawMessage, error) {
	if s.informed == nil || !s.modern {
		return items, nil
	}
	tools := make([]mcp.Tool, len(items))
	for i, raw := range items {
		if err := json.Unmarshal(raw, &tools[i]); err != nil {
			return nil, fmt.Errorf("%w: tools/list result: tool %d: %v", ErrProtocol, i, err)
		}
	}
	kept := s.admitTools(append([]mcp.Tool(nil), tools...))
	if len(kept) == len(items) {
		return items, nil
	}
	keep := make(map[string]bool, len(kept))
	for _, t := range kept {
		keep[t.Name] = true
	}
	out := items[:0]
	for i, raw := range items {
		if keep[tools[i].Name] {
			out = append(out, raw)
		}
	}
	return out, nil
}
