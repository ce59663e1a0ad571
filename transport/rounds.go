package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tako-mcp/tako/mcp"
)

// The one round-trip policy.
//
// A server may need the client before it can answer: a legacy server sends
// requests of its own (sampling, elicitation, roots), a 2026-07-28 server
// answers input_required with inputRequests, and the gRPC service answers
// with dependent_requests. Each is served by the same Handlers, dispatched
// by Handlers.Serve, and the rounds of one call are bounded by Rounds. The
// Session and the gRPC client both use these two, so the bound, the
// dispatch and the error for a request no handler serves exist once
// (DESIGN.md rule 1).

// MaxInputRounds bounds the rounds of one multi-round-trip call, so that a
// server that asks for input forever cannot hold a caller forever.
const MaxInputRounds = 16

// Serve answers one request a server sent to the client, whatever carried
// it (a legacy server request, an inputRequests entry, a gRPC dependent
// request), and returns its result: *mcp.ListRootsResult,
// *mcp.CreateMessageResult, *mcp.ElicitResult, or an empty struct for ping.
// A method no handler serves is an *mcp.Error with code -32601 whose
// message names the handler the client lacks; bad params are -32602.
// Errors from a handler are returned as they are.
func (h *Handlers) Serve(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case mcp.MethodPing:
		return struct{}{}, nil
	case mcp.MethodRootsList:
		if h.Roots == nil {
			return nil, noHandler("roots", method)
		}
		roots, err := h.Roots(ctx)
		if err != nil {
			return nil, err
		}
		return &mcp.ListRootsResult{Roots: nonNil(roots)}, nil
	case mcp.MethodSamplingCreateMessage:
		if h.Sampling == nil {
			return nil, noHandler("sampling", method)
		}
		var p mcp.CreateMessageParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: "bad sampling/createMessage params: " + err.Error()}
		}
		return h.Sampling(ctx, &p)
	case mcp.MethodElicitationCreate:
		if h.Elicitation == nil {
			return nil, noHandler("elicitation", method)
		}
		var p mcp.ElicitParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: "bad elicitation/create params: " + err.Error()}
		}
		if p.Mode == "url" && !h.ElicitationURL {
			return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: "elicitation mode url was not declared by this client"}
		}
		if p.Mode != "" && p.Mode != "form" && p.Mode != "url" {
			return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: fmt.Sprintf("unknown elicitation mode %q", p.Mode)}
		}
		return h.elicit(ctx, &p)
	}
	return nil, &mcp.Error{Code: mcp.CodeMethodNotFound, Message: "method not found: this client does not serve " + method}
}

// noHandler is the error for a request whose handler the caller did not
// register: the client's side is missing, not the server at fault.
func noHandler(kind, method string) error {
	return &mcp.Error{Code: mcp.CodeMethodNotFound, Message: fmt.Sprintf("no %s handler is registered on this client (%s)", kind, method)}
}

// Rounds runs one multi-round-trip call. send makes one round: the first
// with answers nil, each later one with the answers to what the round
// before asked for, keyed as asked. A round that returns nil asks ends the
// call with its result; a non-nil, even empty, asks makes another round (a
// 2026-07-28 server may ask only to be called again with its
// requestState). Each request is answered by h.Serve; a request no
// handler serves fails the call with an error wrapping ErrCapability, and
// a server still asking after MaxInputRounds rounds fails it with one
// wrapping ErrProtocol. what names the call in errors.
func Rounds[R any](ctx context.Context, h *Handlers, what string, send func(ctx context.Context, answers map[string]any) (R, map[string]mcp.InputRequest, error)) (R, error) {
	var zero R
	var answers map[string]any
	for round := 0; ; round++ {
		res, asks, err := send(ctx, answers)
		if err != nil || asks == nil {
			return res, err
		}
		if round >= MaxInputRounds {
			return zero, fmt.Errorf("%w: %s still asks for input after %d rounds", ErrProtocol, what, round)
		}
		answers = make(map[string]any, len(asks))
		for key, r := range asks {
			out, err := answerInput(ctx, h, what, key, r)
			if err != nil {
				return zero, err
			}
			answers[key] = out
		}
	}
}

// answerInput serves one input request of a multi-round-trip call or a
// task: a request no handler serves is an error wrapping ErrCapability.
func answerInput(ctx context.Context, h *Handlers, what, key string, r mcp.InputRequest) (any, error) {
	out, err := h.Serve(ctx, r.Method, r.Params)
	if err != nil {
		var rpcErr *mcp.Error
		if errors.As(err, &rpcErr) && rpcErr.Code == mcp.CodeMethodNotFound {
			return nil, fmt.Errorf("%s: %w: the server asked for %s: %s", what, ErrCapability, r.Method, rpcErr.Message)
		}
		return nil, fmt.Errorf("%s: answering %s for input request %q: %w", what, r.Method, key, err)
	}
	return out, nil
}
