package transport

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tako-mcp/tako/mcp"
)

// serveRequest answers one server-to-client request on a goroutine of its
// own: handlers run user code (a model, a person) and the reader must not
// wait for them. At most Options.MaxServerRequests run at once; past that
// the request is handed to the refusal goroutine, which answers it with an
// error, and if even that one is behind, the request is dropped. A server
// that floods the client with requests and stops reading the answers can
// make it hold no more than that.
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
	if s.answering >= s.opts.MaxServerRequests {
		s.mu.Unlock()
		cancel()
		s.refuse(msg)
		return
	}
	s.answering++
	s.handlers[key] = cancel
	s.wg.Add(1)
	s.mu.Unlock()
	tracked := s.noteElicitation(msg)
	go func() {
		defer s.wg.Done()
		defer func() {
			s.mu.Lock()
			delete(s.handlers, key)
			s.answering--
			s.mu.Unlock()
			cancel()
		}()
		var result any
		var err error
		if s.serveAsTask(msg) {
			result, err = s.serveTaskRequest(ctx, msg)
		} else {
			hctx, stop := endsWith(ctx, tracked)
			result, err = s.opts.Handlers.Serve(hctx, msg.Method, msg.Params)
			stop()
		}
		var contentErr *ElicitationContentError
		if errors.As(err, &contentErr) {
			s.log.Warn("mcp: the elicitation answer was refused, not sent as accept", "err", err)
		}
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

// refuse queues the error answer for a server request past the bound, or
// drops the request when the refusals themselves are backed up.
func (s *Session) refuse(msg *mcp.Message) {
	if s.refusals == nil {
		// Made on the first refusal, as most sessions never refuse: 64
		// slots held by every idle session were 0.5 KB of its heap.
		// refuse runs in the dispatch of what was read, whose calls are
		// never concurrent (Pusher), and the refusal goroutine starts
		// after this: the field needs no lock.
		s.refusals = make(chan *mcp.Message, refusalQueue)
	}
	resp, _ := mcp.NewResponse(msg.ID, nil, &mcp.Error{Code: mcp.CodeInternalError,
		Message: fmt.Sprintf("client busy: %d requests from the server are already being answered", s.opts.MaxServerRequests)})
	select {
	case s.refusals <- resp:
		s.startRefusals()
	default:
		s.log.Warn("mcp: dropped a server request: too many at once", "method", msg.Method, "bound", s.opts.MaxServerRequests)
	}
}

// refuseLoop writes the refusals, one at a time, each bounded: a server
// that does not read them cannot hold more than refusalQueue of them.
func (s *Session) refuseLoop() {
	defer s.wg.Done()
	for {
		select {
		case <-s.done:
			return
		case resp := <-s.refusals:
			ctx, cancel := context.WithTimeout(s.readerCtx, 5*time.Second)
			if err := s.write(ctx, resp, nil); err != nil {
				s.log.Debug("mcp: could not refuse a server request", "err", err)
			}
			cancel()
		}
	}
}
