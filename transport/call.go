package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/tako-mcp/tako/mcp"
)

// Call sends a request and decodes its result into result, which may be a
// *json.RawMessage to keep it raw, or nil to discard it. params may be nil,
// raw JSON, or a value that marshals to a JSON object. It implements
// Caller: a list method called without a cursor returns every page merged
// into one result.
//
// Call is the engine's general path: on the 2026-07-28 wire it adds the
// per-request _meta, and for tools/call, prompts/get and resources/read it
// answers input_required rounds through Options.Handlers. A JSON-RPC error
// from the server is returned as an *mcp.Error.
func (s *Session) Call(ctx context.Context, method string, params, result any) error {
	raw, err := marshalObject(params)
	if err != nil {
		return err
	}
	var res json.RawMessage
	if _, list := listKeys[method]; list && !hasCursor(raw) {
		res, err = s.callList(ctx, method)
	} else {
		res, err = s.call(ctx, method, raw, nil)
	}
	if err != nil {
		return err
	}
	return decodeResult(method, res, result)
}

func decodeResult(method string, res json.RawMessage, result any) error {
	switch r := result.(type) {
	case nil:
		return nil
	case *json.RawMessage:
		*r = res
		return nil
	}
	if err := json.Unmarshal(res, result); err != nil {
		return fmt.Errorf("%w: %s result: %v", ErrProtocol, method, err)
	}
	return nil
}

// call runs one logical request: from the cache where the server allowed
// it (cache.go), else through callRounds. info, when the caller has it, is
// what an Informed Conn needs to know of the request.
func (s *Session) call(ctx context.Context, method string, params json.RawMessage, info *RequestInfo) (json.RawMessage, error) {
	if s.cache != nil && cacheable(method) {
		return s.cachedCall(ctx, method, params, info)
	}
	res, _, err := s.callRounds(ctx, method, params, info)
	return res, err
}

// callRounds runs the round trip and, where the method allows it, the
// input_required rounds that follow (Rounds), and, after a -32042 the
// handlers could satisfy, one retry (elicit_url.go). answered reports that
// the result came from a round that carried input responses, or from the
// retry after the user's interaction: neither may be cached.
//
// Options.CallTimeout, the engine's own clock, bounds the server, not a
// person: a call it ended while an authorization was still under way (a
// login in the browser, an AuthWaiter) waits for that under the caller's
// context and is sent again with a fresh timeout.
func (s *Session) callRounds(ctx context.Context, method string, params json.RawMessage, info *RequestInfo) (res json.RawMessage, answered bool, err error) {
	if s.opts.CallTimeout <= 0 {
		return s.callRoundsOnce(ctx, method, params, info)
	}
	if _, ok := ctx.Deadline(); ok {
		return s.callRoundsOnce(ctx, method, params, info)
	}
	for waits := 0; ; waits++ {
		cctx, cancel := context.WithTimeout(ctx, s.opts.CallTimeout)
		res, answered, err = s.callRoundsOnce(cctx, method, params, info)
		cancel()
		if waits == maxAuthWaits {
			return res, answered, err
		}
		if again, werr := waitForAuth(ctx, err); !again {
			return res, answered, werr
		}
	}
}

func (s *Session) callRoundsOnce(ctx context.Context, method string, params json.RawMessage, info *RequestInfo) (res json.RawMessage, answered bool, err error) {
	res, answered, err = s.callOnce(ctx, method, params, info)
	if rpcErr, required := missingCapability(err); rpcErr != nil {
		// Once: a server that refuses the re-sent request as well gets the
		// typed error, not another round (missingcap.go).
		rctx, terr := s.retryWithCapabilities(ctx, method, rpcErr, required)
		if terr != nil {
			return nil, false, terr
		}
		s.log.Debug("mcp: the server needs a client capability; re-sending declaring it", "method", method)
		res, answered, err = s.callOnce(rctx, method, params, info)
		if rpcErr, required := missingCapability(err); rpcErr != nil {
			return nil, false, &MissingCapabilityError{Method: method, Required: *required, Err: rpcErr,
				Missing: lackingCapabilities(*required, s.caps, s.tasksAccepted(rctx))}
		}
		return res, answered, err
	}
	if rpcErr := s.urlElicitationRequired(err); rpcErr != nil {
		if err := s.completeURLElicitations(ctx, method, rpcErr); err != nil {
			return nil, false, err
		}
		res, _, err = s.callOnce(ctx, method, params, info)
		return res, true, err
	}
	return res, answered, err
}

func (s *Session) callOnce(ctx context.Context, method string, params json.RawMessage, info *RequestInfo) (res json.RawMessage, answered bool, err error) {
	if !s.modern || !mrtrMethod(method) {
		res, err := s.send(ctx, method, params, info)
		if err == nil {
			err = checkResultType(method, res, s.tasksAccepted(ctx))
		}
		if err != nil {
			return nil, false, err
		}
		return res, false, nil
	}
	var state json.RawMessage
	res, err = Rounds(ctx, &s.opts.Handlers, method, func(ctx context.Context, answers map[string]any) (json.RawMessage, map[string]mcp.InputRequest, error) {
		req := params
		if answers != nil {
			answered = true
			var extra []member
			if len(answers) > 0 {
				b, err := json.Marshal(answers)
				if err != nil {
					return nil, nil, fmt.Errorf("%s: input responses: %w", method, err)
				}
				extra = append(extra, member{"inputResponses", b})
			}
			if len(state) > 0 && string(state) != "null" {
				// Byte for byte, as the server sent it (MRTR [M]).
				extra = append(extra, member{"requestState", state})
			}
			var err error
			if req, err = setMembers(params, extra); err != nil {
				return nil, nil, err
			}
		}
		// Each round is a new request with a new id (MRTR [M]).
		res, err := s.send(ctx, method, req, info)
		if err != nil {
			return nil, nil, err
		}
		// The result type is read without decoding the result, which the
		// caller decodes once; only an input_required result, which is
		// small, is decoded here for its requests.
		rt, err := mcp.ParseResultType(res)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %s result: %v", ErrProtocol, method, err)
		}
		switch rt {
		case mcp.ResultTypeComplete:
			return res, nil, nil
		case mcp.ResultTypeInputRequired:
		case mcp.ResultTypeTask:
			if method == mcp.MethodToolsCall && s.tasksAccepted(ctx) {
				return res, nil, nil // a task created; tasks.go takes it from here
			}
			return nil, nil, fmt.Errorf("%w: %s returned resultType %q, but this request did not opt in to the %s extension", ErrProtocol, method, rt, mcp.ExtensionTasks)
		default:
			return nil, nil, fmt.Errorf("%w: %s returned unknown resultType %q", ErrProtocol, method, rt)
		}
		var head struct {
			InputRequests map[string]mcp.InputRequest `json:"inputRequests"`
			RequestState  json.RawMessage             `json:"requestState"`
		}
		if err := json.Unmarshal(res, &head); err != nil {
			return nil, nil, fmt.Errorf("%w: %s result: %v", ErrProtocol, method, err)
		}
		state = head.RequestState
		if head.InputRequests == nil {
			head.InputRequests = map[string]mcp.InputRequest{}
		}
		return nil, head.InputRequests, nil
	})
	return res, answered, err
}

// maxRenewals bounds how often a legacy session is re-established without
// a request succeeding in between: a server (or a load balancer without
// sticky sessions) that forgets every session at once would otherwise make
// the engine initialize forever.
const maxRenewals = 3

// send runs one round trip, re-sending it when the wire says the request
// was lost or the legacy session expired (DESIGN.md: the wire knows, the
// engine acts). Every re-send has a new id.
func (s *Session) send(ctx context.Context, method string, params json.RawMessage, info *RequestInfo) (json.RawMessage, error) {
	const maxLost = 2
	lost, renewed, relisted := 0, 0, false
	for {
		gen := s.generation.Load()
		res, err := s.roundTrip(ctx, method, params, true, info)
		switch {
		case err == nil:
			s.renewals.Store(0)
			return res, nil
		case errors.Is(err, ErrRequestLost) && lost < maxLost && ctx.Err() == nil:
			lost++
			s.log.Debug("mcp: request lost in transit; re-sending", "method", method, "err", err)
			continue
		case errors.Is(err, ErrSessionExpired) && !s.modern && renewed <= 2*maxRenewals && ctx.Err() == nil:
			// renewSession decides when to give up (maxRenewals in a row
			// ends the session); the bound here only keeps one call from
			// looping while others keep renewing.
			renewed++
			if herr := s.renewSession(ctx, gen, err); herr != nil {
				return nil, herr
			}
			continue
		case method == mcp.MethodToolsCall && !relisted && isHeaderMismatch(err) && ctx.Err() == nil:
			// The server says the headers disagree with the body: the
			// tool's x-mcp-header annotations have changed since they were
			// listed. List the tools again, which hands the Conn the new
			// ones, and retry once (checklist §4C.5).
			relisted = true
			s.log.Debug("mcp: header mismatch; listing tools again before one retry", "err", err)
			if _, lerr := s.ListTools(ctx); lerr != nil {
				return nil, fmt.Errorf("%w; listing tools again failed: %w", err, lerr)
			}
			continue
		}
		return nil, err
	}
}

func isHeaderMismatch(err error) bool {
	var rpcErr *mcp.Error
	return errors.As(err, &rpcErr) && rpcErr.Code == mcp.CodeHeaderMismatch
}

// renewSession runs the legacy handshake again after the server forgot the
// session (checklist §4B.2), once per expiry however many messages noticed
// it: a caller that saw generation gen expire finds it already renewed if
// another got there first. expired is the error that reported the expiry.
//
// A session that cannot be renewed, because initialize fails or because the
// server has forgotten maxRenewals sessions in a row without answering a
// request in between, ends: every call then fails with an error wrapping
// ErrSessionExpired and Err says why. The alternative, going on without a
// session, is a silent stream of 400s.
func (s *Session) renewSession(ctx context.Context, gen int64, expired error) error {
	s.rehandshakeMu.Lock()
	defer s.rehandshakeMu.Unlock()
	if s.generation.Load() != gen {
		return nil
	}
	if err := s.Err(); err != nil {
		return err
	}
	if n := s.renewals.Add(1); n > maxRenewals {
		err := fmt.Errorf("%w: the server forgot %d new sessions in a row; giving up", ErrSessionExpired, n-1)
		s.fail(err)
		return err
	}
	s.log.Info("mcp: session expired; starting a new one", "err", expired)
	if s.informed != nil {
		s.informed.NewSession()
	}
	if err := s.initialize(ctx, s.ServerInfo().ProtocolVersion); err != nil {
		if ctx.Err() != nil {
			// The caller gave up; the next message tries again.
			return fmt.Errorf("%w; starting a new session: %w", expired, err)
		}
		err = fmt.Errorf("%w; starting a new session failed: %w", expired, err)
		s.fail(err)
		return err
	}
	s.generation.Add(1)
	return nil
}

// fail ends the session for a reason of the engine's own (a session that
// cannot be renewed) and releases the Conn, as a lost connection does.
func (s *Session) fail(reason error) {
	s.end(reason)
	go s.conn.Close()
}

func mrtrMethod(m string) bool {
	return m == mcp.MethodToolsCall || m == mcp.MethodPromptsGet || m == mcp.MethodResourcesRead
}

// roundTrip sends one request and waits for its response. withMeta adds the
// era's _meta members (and a progress token when the context asks for
// progress). With Options.Middleware the request goes through the chain
// (middleware.go) on its way to exchange.
func (s *Session) roundTrip(ctx context.Context, method string, params json.RawMessage, withMeta bool, info *RequestInfo) (json.RawMessage, error) {
	return s.roundTripID(ctx, s.nextID.Add(1), method, params, withMeta, info)
}

// roundTripID is roundTrip with an id the caller allocated (s.nextID), for
// a request whose notifications name it before it is answered (a listen
// stream's subscriptionId).
func (s *Session) roundTripID(ctx context.Context, n int64, method string, params json.RawMessage, withMeta bool, info *RequestInfo) (json.RawMessage, error) {
	select {
	case <-s.done:
		return nil, fmt.Errorf("%s: %w", method, s.err)
	default:
	}
	if s.handler != nil {
		return s.handler(ctx, &Request{Method: method, ID: mcp.Int64ID(n), Params: params, n: n, withMeta: withMeta, info: info})
	}
	return s.exchange(ctx, n, method, params, withMeta, info, nil)
}

// exchange writes request n and waits for its response; extra are _meta
// members a middleware added.
func (s *Session) exchange(ctx context.Context, n int64, method string, params json.RawMessage, withMeta bool, info *RequestInfo, extra []member) (json.RawMessage, error) {
	id := mcp.Int64ID(n)
	pc := getPending()
	defer putPending(pc)
	if withMeta || len(extra) > 0 {
		var meta []byte
		if s.modern && withMeta {
			if b := s.requestMeta(ctx); b != nil {
				// Clipped: what is appended below must not reach the
				// shared bytes.
				meta = b[:len(b):len(b)]
			}
		}
		if fn := progressFrom(ctx); fn != nil && withMeta {
			pc.progress = fn
			if len(meta) > 0 {
				meta = append(append(meta, ','), `"progressToken":`...)
			} else {
				meta = []byte(`"progressToken":`)
			}
			meta = strconv.AppendInt(meta, n, 10)
		}
		meta = appendMembers(meta, extra)
		if len(meta) > 0 {
			var err error
			if params, err = addMeta(params, meta); err != nil {
				return nil, err
			}
		}
	}
	msg := requestPool.Get().(*mcp.Message)
	*msg = mcp.Message{ID: id, Method: method, Params: params}

	// A tools/call's progress may outlive its answer, when that answer is a
	// task (taskprogress.go): its route is settled by the answer, and
	// dropped if none comes.
	route := pc.progress != nil && method == mcp.MethodToolsCall
	s.mu.Lock()
	s.pending[n] = pc
	if route {
		s.addTaskRoute(n, pc.progress)
	}
	s.mu.Unlock()
	settled := false
	answer := func(r reply) (json.RawMessage, error) {
		res, err := r.result(method)
		if route {
			settled = true
			s.settleTaskRoute(n, res, err)
		}
		return res, err
	}
	if route {
		defer func() {
			if !settled {
				s.dropTaskRoute(n)
			}
		}()
	}
	err := s.write(ctx, msg, info)
	*msg = mcp.Message{}
	requestPool.Put(msg)
	if err != nil {
		s.take(n)
		select {
		case <-s.done:
			return nil, fmt.Errorf("%s: %w", method, s.err)
		default:
		}
		return nil, fmt.Errorf("%s: write: %w", method, err)
	}

	select {
	case r := <-pc.ch:
		res, err := answer(r)
		if pc.progress != nil {
			// Progress the server sent before its answer may still be in
			// the event queue; let it reach the callback first, so a caller
			// sees all of a call's progress by the time the call returns.
			s.startEvents()
			s.events.barrier(s.done)
		}
		return res, err
	case <-ctx.Done():
		if s.take(n) == nil {
			// The response won the race; it is in the channel.
			return answer(<-pc.ch)
		}
		if method != mcp.MethodInitialize && method != mcp.MethodDiscover {
			s.sendCancel(id, ctx.Err())
		}
		return nil, fmt.Errorf("%s: %w", method, context.Cause(ctx))
	case <-s.done:
		if s.take(n) == nil {
			return answer(<-pc.ch)
		}
		return nil, fmt.Errorf("%s: %w", method, s.err)
	}
}

// requestPool recycles the requests exchange writes: a Conn does not
// retain a message past Write (the Conn contract), and the request is a
// fifth of what a call over stdio allocates otherwise.
var requestPool = sync.Pool{New: func() any { return new(mcp.Message) }}

// pendingPool recycles pendingCall values and their channels: a call costs
// no channel allocation. Reuse is safe because a call's channel receives at
// most one value, and the call has received it (or nobody will send it,
// because the call took itself out of the pending map) before it returns.
var pendingPool = sync.Pool{New: func() any { return &pendingCall{ch: make(chan reply, 1)} }}

func getPending() *pendingCall { return pendingPool.Get().(*pendingCall) }

func putPending(pc *pendingCall) {
	pc.progress = nil
	pendingPool.Put(pc)
}

func (r reply) result(method string) (json.RawMessage, error) {
	if r.err != nil {
		return nil, fmt.Errorf("%s: %w", method, r.err)
	}
	if r.msg.Error != nil {
		return nil, r.msg.Error
	}
	if len(r.msg.Result) == 0 {
		return json.RawMessage("{}"), nil
	}
	return r.msg.Result, nil
}

// sendCancel tells the server that the caller gave up on request id
// (notifications/cancelled; on modern HTTP a Conn may instead close the
// stream, which it learns from the same notification).
func (s *Session) sendCancel(id mcp.ID, cause error) {
	reason := "cancelled"
	if errors.Is(cause, context.DeadlineExceeded) {
		reason = "timeout"
	}
	b := append([]byte(`{"requestId":`), id.AppendJSON(nil)...)
	b = append(b, `,"reason":`...)
	b = mcp.AppendJSONString(b, reason)
	b = append(b, '}')
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.write(ctx, &mcp.Message{Method: mcp.NotificationCancelled, Params: b}, nil); err != nil {
		s.log.Debug("mcp: could not send cancellation", "id", id.String(), "err", err)
	}
}

// Notify sends a notification to the server. On a legacy session that the
// server has forgotten, the session is renewed and the notification sent
// once more on the new one.
func (s *Session) Notify(ctx context.Context, method string, params any) error {
	raw, err := marshalObject(params)
	if err != nil {
		return err
	}
	for renewed := 0; ; renewed++ {
		select {
		case <-s.done:
			return fmt.Errorf("%s: %w", method, s.err)
		default:
		}
		gen := s.generation.Load()
		err := s.write(ctx, &mcp.Message{Method: method, Params: raw}, nil)
		if err == nil || !errors.Is(err, ErrSessionExpired) || s.modern || renewed > 2*maxRenewals ||
			ctx.Err() != nil || method == mcp.NotificationInitialized {
			return err
		}
		if herr := s.renewSession(ctx, gen, err); herr != nil {
			return herr
		}
	}
}

// marshalObject turns params into raw JSON; nil stays nil.
func marshalObject(params any) (json.RawMessage, error) {
	switch p := params.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return p, nil
	case []byte:
		return p, nil
	}
	b, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("mcp: marshal params: %w", err)
	}
	if string(b) == "null" {
		return nil, nil
	}
	return b, nil
}

type member struct {
	key   string
	value json.RawMessage
}

// addMeta puts the members in meta (a comma-separated list of "key":value
// pairs, without braces) into params._meta. The common case, params without
// a _meta of their own, is a splice with no parsing; params that carry
// _meta are merged, keeping the caller's keys unless they collide with the
// engine's.
func addMeta(params json.RawMessage, meta []byte) (json.RawMessage, error) {
	body := bytes.TrimSpace(params)
	if len(body) == 0 || string(body) == "null" || string(body) == "{}" {
		out := make([]byte, 0, len(meta)+12)
		out = append(out, `{"_meta":{`...)
		out = append(out, meta...)
		return append(out, "}}"...), nil
	}
	if body[0] != '{' {
		return nil, fmt.Errorf("mcp: params must be a JSON object, got %.20s", body)
	}
	if !bytes.Contains(body, []byte(`"_meta"`)) {
		out := make([]byte, 0, len(body)+len(meta)+12)
		out = append(out, `{"_meta":{`...)
		out = append(out, meta...)
		out = append(out, "},"...)
		return append(out, body[1:]...), nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, fmt.Errorf("mcp: params: %w", err)
	}
	var have map[string]json.RawMessage
	if m, ok := obj["_meta"]; ok && string(m) != "null" {
		if err := json.Unmarshal(m, &have); err != nil {
			return nil, fmt.Errorf("mcp: params._meta: %w", err)
		}
	}
	var ours map[string]json.RawMessage
	if err := json.Unmarshal(append(append([]byte{'{'}, meta...), '}'), &ours); err != nil {
		return nil, fmt.Errorf("mcp: engine _meta: %w", err)
	}
	if have == nil {
		have = ours
	} else {
		for k, v := range ours {
			have[k] = v
		}
	}
	mb, err := json.Marshal(have)
	if err != nil {
		return nil, err
	}
	obj["_meta"] = mb
	return json.Marshal(obj)
}

// setMembers returns params with the given top-level members set (replaced
// if present). It is used for MRTR retries, which are rare, so clarity wins
// over speed.
func setMembers(params json.RawMessage, ms []member) (json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if body := bytes.TrimSpace(params); len(body) > 0 && string(body) != "null" {
		if err := json.Unmarshal(body, &obj); err != nil {
			return nil, fmt.Errorf("mcp: params: %w", err)
		}
	}
	for _, m := range ms {
		obj[m.key] = m.value
	}
	return json.Marshal(obj)
}
