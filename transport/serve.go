package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tako-mcp/tako/mcp"
)

// serveRequest answers one server-to-client request on a goroutine of its
// own: handlers run user code (a model, a person) and the reader must not
// wait for them. These requests are rare, so a goroutine each costs nothing
// on the hot path.
func (s *Session) serveRequest(msg *mcp.Message) {
	ctx, cancel := context.WithCancel(s.readerCtx)
	key := msg.ID.String()
	s.mu.Lock()
	select {
	case <-s.done:
		s.mu.Unlock()
		cancel()
		return
	default:
	}
	s.handlers[key] = cancel
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		defer func() {
			s.mu.Lock()
			delete(s.handlers, key)
			s.mu.Unlock()
			cancel()
		}()
		result, err := s.handle(ctx, msg.Method, msg.Params)
		if ctx.Err() != nil {
			// Cancelled by the server (notifications/cancelled) or by our
			// Close: the spec says not to answer.
			return
		}
		resp, merr := mcp.NewResponse(msg.ID, result, err)
		if merr != nil {
			resp, _ = mcp.NewResponse(msg.ID, nil, &mcp.Error{Code: mcp.CodeInternalError, Message: merr.Error()})
		}
		wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer wcancel()
		if err := s.conn.Write(wctx, resp); err != nil {
			s.log.Warn("mcp: could not answer server request", "method", msg.Method, "err", err)
		}
	}()
}

// handle runs the handler for one server request, legacy or MRTR, and
// returns its result. Errors that are *mcp.Error reach the server with their
// code; others become internal errors.
func (s *Session) handle(ctx context.Context, method string, params json.RawMessage) (any, error) {
	h := &s.opts.Handlers
	switch method {
	case mcp.MethodPing:
		return struct{}{}, nil
	case mcp.MethodRootsList:
		if h.Roots == nil {
			return nil, methodNotFound(method)
		}
		roots, err := h.Roots(ctx)
		if err != nil {
			return nil, err
		}
		if roots == nil {
			roots = []mcp.Root{}
		}
		return &mcp.ListRootsResult{Roots: roots}, nil
	case mcp.MethodSamplingCreateMessage:
		if h.Sampling == nil {
			return nil, methodNotFound(method)
		}
		var p mcp.CreateMessageParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: "bad sampling/createMessage params: " + err.Error()}
		}
		return h.Sampling(ctx, &p)
	case mcp.MethodElicitationCreate:
		if h.Elicitation == nil {
			return nil, methodNotFound(method)
		}
		var p mcp.ElicitParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: "bad elicitation/create params: " + err.Error()}
		}
		if p.Mode == "url" && !h.ElicitationURL {
			return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: "elicitation mode url was not declared"}
		}
		if p.Mode != "" && p.Mode != "form" && p.Mode != "url" {
			return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: fmt.Sprintf("unknown elicitation mode %q", p.Mode)}
		}
		return h.Elicitation(ctx, &p)
	}
	return nil, methodNotFound(method)
}

func methodNotFound(method string) error {
	return &mcp.Error{Code: mcp.CodeMethodNotFound, Message: "method not found: " + method}
}

// fulfil answers every entry of a 2026-07-28 input_required result with the
// same handlers that serve legacy server requests, and returns the
// inputResponses object.
func (s *Session) fulfil(ctx context.Context, reqs map[string]mcp.InputRequest) (json.RawMessage, error) {
	out := make(map[string]any, len(reqs))
	for key, r := range reqs {
		res, err := s.handle(ctx, r.Method, r.Params)
		if err != nil {
			var rpcErr *mcp.Error
			if errors.As(err, &rpcErr) && rpcErr.Code == mcp.CodeMethodNotFound {
				return nil, fmt.Errorf("%w: server asked for %s, which no handler serves", ErrCapability, r.Method)
			}
			return nil, fmt.Errorf("answering %s for input request %q: %w", r.Method, key, err)
		}
		out[key] = res
	}
	return json.Marshal(out)
}
