package transport

import (
	"context"
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
		result, err := s.opts.Handlers.Serve(ctx, msg.Method, msg.Params)
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
		if err := s.write(wctx, resp, nil); err != nil {
			s.log.Warn("mcp: could not answer server request", "method", msg.Method, "err", err)
		}
	}()
}
