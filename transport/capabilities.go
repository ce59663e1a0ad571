package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/tako-mcp/tako/mcp"
)

// What the client declares, what it accepts back, and whether the server is
// still there.

// mergeCapabilities returns what the caller declared (Options.Capabilities)
// together with what the Handlers and Options.Roots imply: a member either
// side sets is declared, and the flags inside a member are the union of
// both. The caller's maps are copied, never written to.
func mergeCapabilities(declared *mcp.ClientCapabilities, implied mcp.ClientCapabilities) mcp.ClientCapabilities {
	if declared == nil {
		return implied
	}
	out := *declared
	out.Experimental = maps.Clone(declared.Experimental)
	out.Extensions = maps.Clone(declared.Extensions)
	if implied.Roots != nil {
		r := *implied.Roots
		if out.Roots != nil {
			r.ListChanged = r.ListChanged || out.Roots.ListChanged
		}
		out.Roots = &r
	} else if out.Roots != nil {
		r := *out.Roots
		out.Roots = &r
	}
	if implied.Sampling != nil {
		sc := *implied.Sampling
		if out.Sampling != nil {
			sc.Context = cmpOr(sc.Context, out.Sampling.Context)
			sc.Tools = cmpOr(sc.Tools, out.Sampling.Tools)
		}
		out.Sampling = &sc
	}
	if implied.Elicitation != nil {
		ec := *implied.Elicitation
		if out.Elicitation != nil {
			ec.Form = cmpOr(ec.Form, out.Elicitation.Form)
			ec.URL = cmpOr(ec.URL, out.Elicitation.URL)
		}
		out.Elicitation = &ec
	}
	return out
}

func cmpOr(a, b *struct{}) *struct{} {
	if a != nil {
		return a
	}
	return b
}

// checkResultType rejects a result whose resultType the client does not
// know (checklist §1B.9: an unrecognised value is an invalid response), on
// every method. Most results have no resultType (legacy servers) or
// "complete"; the common case costs one bytes.Contains.
func checkResultType(method string, res json.RawMessage, tasks bool) error {
	if !bytes.Contains(res, []byte(`"resultType"`)) {
		return nil
	}
	rt, err := mcp.ParseResultType(res)
	if err != nil {
		return fmt.Errorf("%w: %s result: %v", ErrProtocol, method, err)
	}
	switch rt {
	case mcp.ResultTypeComplete:
		return nil
	case mcp.ResultTypeTask:
		if method == mcp.MethodToolsCall && tasks {
			return nil // the tasks extension's CreateTaskResult, asked for
		}
	}
	return fmt.Errorf("%w: %s returned unknown resultType %q", ErrProtocol, method, rt)
}

// DefaultPingTimeout bounds each periodic ping when Options.PingTimeout is
// zero.
const DefaultPingTimeout = 10 * time.Second

// startPing starts the periodic ping (Options.PingInterval), after the
// handshake.
func (s *Session) startPing() {
	if s.opts.PingInterval <= 0 {
		return
	}
	timeout := s.opts.PingTimeout
	if timeout <= 0 {
		timeout = DefaultPingTimeout
	}
	s.wg.Add(1)
	go s.pingLoop(s.opts.PingInterval, timeout)
}

// pingLoop pings the server every interval. A server that does not answer
// within timeout is taken for dead (checklist §1A.8 [S]): the session ends
// with an error wrapping ErrConnectionLost, which every call then returns.
// An error answer is an answer: the server is alive.
func (s *Session) pingLoop(interval, timeout time.Duration) {
	defer s.wg.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(s.readerCtx, timeout)
		err := s.Ping(ctx)
		cancel()
		var rpcErr *mcp.Error
		switch {
		case err == nil, errors.As(err, &rpcErr):
			continue
		case s.Err() != nil:
			return
		}
		s.log.Warn("mcp: the server did not answer a ping; ending the session", "timeout", timeout, "err", err)
		s.fail(fmt.Errorf("%w: no answer to ping within %v: %w", ErrConnectionLost, timeout, err))
		return
	}
}
