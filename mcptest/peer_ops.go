package mcptest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/tako-mcp/tako/mcp"
)

// The operations a Peer answers: listing and calling tools (with the
// input_required rounds of 2026-07-28), the subscriptions/listen stream,
// and the cursors and metadata they share. peer.go holds the connection.

// serverMeta returns a copy of m with the serverInfo key that 2026-07-28
// results carry.
func (s *Server) serverMeta(m mcp.Meta) mcp.Meta {
	out := make(mcp.Meta, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	out[mcp.MetaServerInfo] = s.infoRaw
	return out
}

// Cursors are opaque to the client; this one is the offset, wrapped so that
// a client that takes it for a number is caught.
const cursorPrefix = "mcptest-cursor:"

func encodeCursor(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.Itoa(offset)))
}

func decodeCursor(c string) (int, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !strings.HasPrefix(string(b), cursorPrefix) {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(string(b), cursorPrefix))
	return n, err == nil && n >= 0
}

func (p *Peer) listTools(msg *mcp.Message, modern bool) (any, error) {
	s := p.srv
	var lp mcp.ListToolsParams
	if len(msg.Params) > 0 {
		if err := json.Unmarshal(msg.Params, &lp); err != nil {
			return nil, rpcError(mcp.CodeInvalidParams, nil, "tools/list: bad params: %v", err)
		}
	}
	tools := s.Tools()
	offset := 0
	if lp.Cursor != nil {
		n, ok := decodeCursor(*lp.Cursor)
		if !ok || n > len(tools) {
			return nil, rpcError(mcp.CodeInvalidParams, nil, "tools/list: invalid cursor")
		}
		offset = n
	}
	end := len(tools)
	if s.opts.PageSize > 0 && offset+s.opts.PageSize < end {
		end = offset + s.opts.PageSize
	}
	res := &mcp.ListToolsResult{Tools: tools[offset:end]}
	if end < len(tools) {
		c := encodeCursor(end)
		res.NextCursor = &c
	}
	if modern {
		res.ResultType = mcp.ResultTypeComplete
		res.Meta = s.serverMeta(nil)
	}
	return res, nil
}

// callParams are tools/call params with the 2026-07-28 retry members.
type callParams struct {
	Name           string                     `json:"name"`
	Arguments      json.RawMessage            `json:"arguments"`
	Meta           mcp.Meta                   `json:"_meta"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
	RequestState   *string                    `json:"requestState"`
}

// callState is the requestState of an input_required round: the tool it
// belongs to and every answer so far. It travels through the client so
// that the server keeps nothing between rounds.
type callState struct {
	Tool    string                     `json:"tool"`
	Round   int                        `json:"round"`
	Answers map[string]json.RawMessage `json:"answers"`
}

func (p *Peer) callTool(ctx context.Context, msg *mcp.Message, modern bool, version string, caps mcp.ClientCapabilities, meta mcp.Meta) (any, error) {
	s := p.srv
	var cp callParams
	if len(msg.Params) == 0 || json.Unmarshal(msg.Params, &cp) != nil {
		return nil, rpcError(mcp.CodeInvalidParams, nil, "tools/call: bad or missing params")
	}
	if cp.Name == "" {
		return nil, rpcError(mcp.CodeInvalidParams, nil, "tools/call: missing tool name")
	}
	entry, ok := s.lookupTool(cp.Name)
	if !ok {
		return nil, rpcError(mcp.CodeInvalidParams, nil, "unknown tool %q", cp.Name)
	}
	args := bytes.TrimSpace(cp.Arguments)
	if string(args) == "null" {
		args = nil
	}
	if len(args) > 0 && args[0] != '{' {
		return nil, rpcError(mcp.CodeInvalidParams, nil, "tools/call: arguments must be an object")
	}
	req := &CallRequest{
		Name:      cp.Name,
		Arguments: json.RawMessage(args),
		Meta:      cp.Meta,
		ID:        msg.ID,
		peer:      p,
		modern:    modern,
		version:   version,
		caps:      caps,
	}
	if tok, ok := cp.Meta[mcp.MetaProgressToken]; ok {
		req.progressToken = tok
	}
	if modern {
		if raw, ok := meta[mcp.MetaLogLevel]; ok {
			_ = json.Unmarshal(raw, &req.logLevel) // validated by modernDispatch
		}
		st := callState{Tool: cp.Name, Answers: map[string]json.RawMessage{}}
		if cp.RequestState != nil {
			b, err := base64.RawURLEncoding.DecodeString(*cp.RequestState)
			if err != nil || json.Unmarshal(b, &st) != nil || st.Tool != cp.Name {
				s.violation(p, "tools/call %s: requestState altered or from another call", cp.Name)
				return nil, rpcError(mcp.CodeInvalidParams, nil, "tools/call: invalid requestState")
			}
			if st.Answers == nil {
				st.Answers = map[string]json.RawMessage{}
			}
		} else if len(cp.InputResponses) > 0 {
			s.violation(p, "tools/call %s: inputResponses without the requestState the server sent", cp.Name)
		}
		if len(cp.InputResponses) > 0 {
			st.Round++
		}
		for k, v := range cp.InputResponses {
			st.Answers[k] = v
		}
		req.Round = st.Round
		req.answers = st.Answers
	} else if len(cp.InputResponses) > 0 || cp.RequestState != nil {
		s.violation(p, "tools/call %s: inputResponses or requestState in a legacy session", cp.Name)
	}

	if modern && s.taskEligible(entry, caps) {
		return p.createTask(entry, req)
	}
	res, err := runHandler(ctx, entry.handler, req)
	if ctx.Err() != nil {
		// Cancelled by the client or the connection ended: whatever the
		// handler returned, serveRequest decides whether to answer.
		return nil, ctx.Err()
	}
	if modern {
		if ask := req.pendingInput(); ask != nil {
			return p.inputRequired(req, ask)
		}
	}
	if err != nil {
		var rpcErr *mcp.Error
		switch {
		case errors.As(err, &rpcErr):
			return nil, rpcErr
		case modern && errors.Is(err, ErrMissingCapability):
			return nil, rpcError(mcp.CodeMissingRequiredClientCapability,
				map[string]any{"requiredCapabilities": req.missingCapability()}, "%v", err)
		}
		res = &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(err.Error())}, IsError: true}
	}
	if res == nil {
		res = &mcp.CallToolResult{}
	}
	out := *res
	if out.Content == nil {
		out.Content = []mcp.Content{}
	}
	if modern {
		out.ResultType = mcp.ResultTypeComplete
		out.Meta = s.serverMeta(res.Meta)
	}
	return &out, nil
}

// runHandler runs a tool handler, turning a panic into an internal error:
// a test server must report a broken handler, not take the test binary down.
func runHandler(ctx context.Context, h ToolHandler, req *CallRequest) (res *mcp.CallToolResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			req.peer.srv.logger.Error("mcptest: tool handler panicked", "tool", req.Name, "panic", r)
			res, err = nil, rpcError(mcp.CodeInternalError, nil, "tool %q panicked: %v", req.Name, r)
		}
	}()
	return h(ctx, req)
}

func (p *Peer) inputRequired(req *CallRequest, ask *inputAsk) (any, error) {
	st := callState{Tool: req.Name, Round: req.Round, Answers: req.answers}
	b, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	state := base64.RawURLEncoding.EncodeToString(b)
	return &mcp.InputRequiredResult{
		ResultType:    mcp.ResultTypeInputRequired,
		InputRequests: map[string]mcp.InputRequest{ask.key: {Method: ask.method, Params: ask.params}},
		RequestState:  &state,
		Meta:          p.srv.serverMeta(nil),
	}, nil
}

// listen serves a 2026-07-28 subscriptions/listen stream: acknowledge the
// granted filter, then hold the request open until the client cancels it
// or the connection ends. The server can only grant tool list changes.
func (p *Peer) listen(ctx context.Context, msg *mcp.Message) (any, error) {
	var lp mcp.SubscriptionsListenParams
	if err := json.Unmarshal(msg.Params, &lp); err != nil {
		return nil, rpcError(mcp.CodeInvalidParams, nil, "subscriptions/listen: bad params: %v", err)
	}
	granted := mcp.SubscriptionFilter{
		ToolsListChanged: lp.Notifications.ToolsListChanged && p.srv.caps.Tools != nil && p.srv.caps.Tools.ListChanged,
	}
	idRaw := msg.ID.AppendJSON(nil)
	p.mu.Lock()
	p.listens[msg.ID] = granted
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.listens, msg.ID)
		p.mu.Unlock()
	}()
	ack := mcp.SubscriptionsAcknowledgedParams{
		Notifications: granted,
		Meta:          mcp.Meta{mcp.MetaSubscriptionID: idRaw},
	}
	if err := p.Notify(ctx, mcp.NotificationSubscriptionsAck, ack); err != nil {
		return nil, errNoAnswer
	}
	<-ctx.Done()
	return nil, errNoAnswer
}

// toolsListChanged sends notifications/tools/list_changed the way the
// connection's era wants it. With fallback, a modern connection without a
// listen stream gets a plain notification too (the reference notify tool
// uses that so that clients without listen streams still see one).
func (p *Peer) toolsListChanged(ctx context.Context, fallback bool) error {
	p.mu.Lock()
	legacy := p.legacyVersion != ""
	var ids []mcp.ID
	for id, f := range p.listens {
		if f.ToolsListChanged {
			ids = append(ids, id)
		}
	}
	p.mu.Unlock()
	if legacy || (fallback && len(ids) == 0) {
		return p.Notify(ctx, mcp.NotificationToolsListChanged, nil)
	}
	var first error
	for _, id := range ids {
		params := map[string]any{"_meta": mcp.Meta{mcp.MetaSubscriptionID: id.AppendJSON(nil)}}
		if err := p.Notify(ctx, mcp.NotificationToolsListChanged, params); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// levelRank orders RFC 5424 levels, debug lowest; -1 for an unknown level.
func levelRank(l mcp.LoggingLevel) int {
	return slices.Index([]mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}, l)
}
