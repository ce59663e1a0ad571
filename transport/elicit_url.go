package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/tako-mcp/tako/mcp"
)

// URL elicitation (checklist §7C, 2025-11-25). A server that cannot answer
// a request until the user has visited a URL fails it with -32042, listing
// the URL elicitations to complete, each with an elicitationId; it may
// later send notifications/elicitation/complete with that id. A server may
// also send elicitation/create in URL mode, whose accept means only that
// the user consented.
//
// When the session has an elicitation handler and declared URL mode, the
// engine does the -32042 dance itself: it calls the handler for each listed
// elicitation, one after the other, and when every one is finished retries
// the original request once, with a new id. An elicitation is finished
// when the handler returns accept, or when the server reports it complete:
// the handler's context then ends with cause ErrElicitationComplete, so a
// handler may show the URL and simply wait on ctx.Done() for the server to
// say the user is done (a "done" button racing it is the manual control
// the spec asks for). The handler of a server's elicitation/create in URL
// mode gets the same context: it ends with that cause when the server
// reports the elicitation complete. A decline or cancel ends the call with a
// *URLElicitationError; a second -32042 is returned as it is. Without a
// handler, or without URL mode, the -32042 reaches the caller, whose
// *mcp.Error has URLElicitations.
//
// The session remembers the last maxTrackedElicitations elicitation ids it
// has seen (in -32042 errors, in elicitation/create requests, or asked
// about with WaitElicitationComplete) and whether each has completed; a
// completion for any other id is ignored, as the spec requires, though it
// still reaches Subscribe.

// ErrElicitationComplete is the cause (context.Cause) of a URL elicitation
// handler's context ending because the server reported, with
// notifications/elicitation/complete, that the user finished it.
var ErrElicitationComplete = errors.New("mcp: the server reported the elicitation complete")

// errElicitationForgotten ends the wait for an elicitation pushed out of
// the bounded record by newer ones.
var errElicitationForgotten = errors.New("mcp: too many newer elicitations; this one is no longer tracked")

// maxTrackedElicitations bounds the elicitation ids a session remembers.
const maxTrackedElicitations = 256

// maxURLElicitations bounds the elicitations one -32042 may make the
// client walk the user through.
const maxURLElicitations = 16

// URLElicitationError reports a request that failed with -32042 whose URL
// elicitation the user declined or cancelled, so it was not retried.
type URLElicitationError struct {
	// Elicitation is the one the user did not complete.
	Elicitation mcp.ElicitParams
	// Action is the handler's answer: mcp.ElicitDecline or mcp.ElicitCancel.
	Action string
	// Err is the server's -32042 error.
	Err *mcp.Error
}

func (e *URLElicitationError) Error() string {
	return fmt.Sprintf("mcp: URL elicitation %q: the user chose %s: %v", e.Elicitation.ElicitationID, e.Action, e.Err)
}

func (e *URLElicitationError) Unwrap() error { return e.Err }

// elicitations is the session's record of URL elicitations by id. Each
// entry's ctx ends when the elicitation completes (cause
// ErrElicitationComplete) or is forgotten.
type elicitations struct {
	mu    sync.Mutex
	byID  map[string]*elicitation
	order []string // oldest first
}

type elicitation struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// track returns the entry for id, creating it if need be.
func (r *elicitations) track(id string) *elicitation {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.byID[id]; e != nil {
		return e
	}
	if r.byID == nil {
		r.byID = map[string]*elicitation{}
	}
	if len(r.order) >= maxTrackedElicitations {
		old := r.order[0]
		r.order = r.order[1:]
		if e := r.byID[old]; e != nil {
			e.cancel(errElicitationForgotten)
			delete(r.byID, old)
		}
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	e := &elicitation{ctx: ctx, cancel: cancel}
	r.byID[id] = e
	r.order = append(r.order, id)
	return e
}

// complete marks id complete; it reports whether the id was known.
func (r *elicitations) complete(id string) bool {
	r.mu.Lock()
	e := r.byID[id]
	r.mu.Unlock()
	if e == nil {
		return false
	}
	e.cancel(ErrElicitationComplete)
	return true
}

// WaitElicitationComplete waits until the server reports, with
// notifications/elicitation/complete, that the user finished the URL
// elicitation elicitationID, and returns nil; a completion that arrived
// before the call counts. It returns early with an error when ctx ends or
// the session does. A UI uses it to close its "finish in your browser"
// prompt, for example after accepting a URL-mode elicitation/create.
func (s *Session) WaitElicitationComplete(ctx context.Context, elicitationID string) error {
	e := s.elicits.track(elicitationID)
	select {
	case <-e.ctx.Done():
		if cause := context.Cause(e.ctx); !errors.Is(cause, ErrElicitationComplete) {
			return fmt.Errorf("elicitation %q: %w", elicitationID, cause)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("elicitation %q: %w", elicitationID, context.Cause(ctx))
	case <-s.done:
		return fmt.Errorf("elicitation %q: %w", elicitationID, s.err)
	}
}

// elicitationCompleted handles notifications/elicitation/complete; it runs
// on the reader goroutine and only cancels contexts.
func (s *Session) elicitationCompleted(params json.RawMessage) {
	var p mcp.ElicitationCompleteParams
	if err := json.Unmarshal(params, &p); err != nil || p.ElicitationID == "" {
		s.log.Warn("mcp: bad notifications/elicitation/complete", "params", string(params))
		return
	}
	if !s.elicits.complete(p.ElicitationID) {
		s.log.Debug("mcp: completion of an elicitation this client does not know; ignored", "elicitationId", p.ElicitationID)
	}
}

// noteElicitation records the id of a URL-mode elicitation/create before
// its handler runs, so that a completion racing the answer is not lost, and
// returns the record (nil for any other request). The handler's context
// ends with it: when the server reports the elicitation complete, the
// handler, which may be waiting for the user to come back from the page,
// sees cause ErrElicitationComplete, as in the -32042 dance.
func (s *Session) noteElicitation(msg *mcp.Message) *elicitation {
	if msg.Method != mcp.MethodElicitationCreate {
		return nil
	}
	var p struct {
		Mode          string `json:"mode"`
		ElicitationID string `json:"elicitationId"`
	}
	if json.Unmarshal(msg.Params, &p) == nil && p.Mode == mcp.ElicitModeURL && p.ElicitationID != "" {
		return s.elicits.track(p.ElicitationID)
	}
	return nil
}

// endsWith returns ctx ending also when e does, with e's cause; stop
// releases what ties them. A nil e leaves ctx as it is.
func endsWith(ctx context.Context, e *elicitation) (context.Context, func()) {
	if e == nil {
		return ctx, func() {}
	}
	hctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(e.ctx, func() { cancel(context.Cause(e.ctx)) })
	return hctx, func() { stop(); cancel(nil) }
}

// noteURLElicitations records the ids of a -32042 error as the reader
// delivers it: a completion the server sends right after the error is then
// matched, even if it is read before the caller sees the error.
func (s *Session) noteURLElicitations(e *mcp.Error) {
	if s.opts.Handlers.Elicitation == nil || !s.opts.Handlers.ElicitationURL {
		return
	}
	els, _ := e.URLElicitations()
	for i := range els {
		if i < maxURLElicitations && els[i].ElicitationID != "" {
			s.elicits.track(els[i].ElicitationID)
		}
	}
}

// urlElicitationRequired returns the -32042 error in err when the session
// can act on it: it has an elicitation handler and declared URL mode.
func (s *Session) urlElicitationRequired(err error) *mcp.Error {
	if err == nil || s.opts.Handlers.Elicitation == nil || !s.opts.Handlers.ElicitationURL {
		return nil
	}
	return rpcErrorWithCode(err, mcp.CodeURLElicitationRequired)
}

// rpcErrorWithCode returns the *mcp.Error in err's chain if it has code.
// Its own function, so that the variable errors.As needs (which escapes)
// is allocated only for an error, not on every call that succeeds.
func rpcErrorWithCode(err error, code int64) *mcp.Error {
	var rpcErr *mcp.Error
	if errors.As(err, &rpcErr) && rpcErr.Code == code {
		return rpcErr
	}
	return nil
}

// completeURLElicitations walks the user through the elicitations of a
// -32042 error (see the note at the top of the file) and returns nil when
// every one is finished, so the request can be retried.
func (s *Session) completeURLElicitations(ctx context.Context, method string, rpcErr *mcp.Error) error {
	els, ok := rpcErr.URLElicitations()
	if !ok || len(els) == 0 {
		return fmt.Errorf("%s: %w: -32042 without elicitations: %w", method, ErrProtocol, rpcErr)
	}
	if len(els) > maxURLElicitations {
		return fmt.Errorf("%s: %w: -32042 lists %d elicitations, more than %d: %w", method, ErrProtocol, len(els), maxURLElicitations, rpcErr)
	}
	// Every id is tracked before the first handler runs: the server may
	// report one complete while the user is still on another.
	tracked := make([]*elicitation, len(els))
	for i := range els {
		e := &els[i]
		if e.Mode != mcp.ElicitModeURL || e.URL == "" || e.ElicitationID == "" {
			return fmt.Errorf("%s: %w: -32042 lists an elicitation that is not URL mode with a url and an elicitationId: %w", method, ErrProtocol, rpcErr)
		}
		tracked[i] = s.elicits.track(e.ElicitationID)
	}
	for i := range els {
		e := &els[i]
		if tracked[i].ctx.Err() != nil && errors.Is(context.Cause(tracked[i].ctx), ErrElicitationComplete) {
			continue
		}
		hctx, cancel := context.WithCancelCause(ctx)
		stop := context.AfterFunc(tracked[i].ctx, func() { cancel(context.Cause(tracked[i].ctx)) })
		res, err := s.opts.Handlers.elicit(hctx, e)
		stop()
		completed := errors.Is(context.Cause(hctx), ErrElicitationComplete)
		cancel(nil)
		switch {
		case completed:
		case err != nil:
			return fmt.Errorf("%s: URL elicitation %q: %w", method, e.ElicitationID, err)
		case res.Action != mcp.ElicitAccept:
			return &URLElicitationError{Elicitation: *e, Action: res.Action, Err: rpcErr}
		}
	}
	s.log.Debug("mcp: URL elicitations finished; retrying the request", "method", method, "count", len(els))
	return nil
}
