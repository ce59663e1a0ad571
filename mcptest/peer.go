package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// Peer is the client at the other end of one connection the server serves.
// Tests get it from a Record or from Server.Peers, and use it to send the
// client requests and notifications of their own. Its methods are safe for
// concurrent use.
type Peer struct {
	srv  *Server
	conn transport.Conn
	num  int
	ctx  context.Context // ends when Serve returns
	// life is Serve's own ctx, which outlives the connection: the runs of
	// the tasks this peer created end with it (tasks.go).
	life context.Context
	wg   sync.WaitGroup // request goroutines

	mu            sync.Mutex
	legacyVersion string // negotiated by initialize; "" until then
	initialized   bool   // notifications/initialized seen
	modernVersion string // from the last valid modern request
	clientInfo    mcp.Implementation
	clientCaps    mcp.ClientCapabilities // legacy: from initialize
	logLevel      mcp.LoggingLevel       // legacy: from logging/setLevel
	inflight      map[mcp.ID]*inflight   // the client's requests being served
	pending       map[mcp.ID]chan *mcp.Message
	abandoned     map[mcp.ID]bool // our requests given up on: a late answer is no violation
	nextID        int64
	listens       map[mcp.ID]mcp.SubscriptionFilter // modern listen streams
	bogus         int64                             // ids for Junk and WrongID
	died          bool
}

type inflight struct {
	cancel    context.CancelFunc
	cancelled bool // by notifications/cancelled: do not answer
}

// Num numbers the connection: 1 for the first the server served, and so on.
func (p *Peer) Num() int { return p.num }

// ProtocolVersion returns the revision the connection speaks: the one
// negotiated by initialize, else the one of the last valid modern request,
// else "".
func (p *Peer) ProtocolVersion() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.legacyVersion != "" {
		return p.legacyVersion
	}
	return p.modernVersion
}

// ClientInfo returns the clientInfo the client sent (in initialize, or in a
// modern request's _meta).
func (p *Peer) ClientInfo() mcp.Implementation {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.clientInfo
}

// Request sends the client a request and waits for its answer. It is how a
// test plays a legacy server that pings, samples or asks for roots outside
// any tool call. It does not check the era: sending a request to a modern
// client is a protocol violation a test may want to provoke. If ctx ends
// first, the client is sent notifications/cancelled.
func (p *Peer) Request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	p.mu.Lock()
	p.nextID++
	id := mcp.Int64ID(p.nextID)
	ch := make(chan *mcp.Message, 1)
	p.pending[id] = ch
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.pending, id)
		p.mu.Unlock()
	}()
	msg, err := mcp.NewRequest(id, method, params)
	if err != nil {
		return nil, err
	}
	if err := p.write(ctx, msg); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			return nil, r.Error
		}
		return r.Result, nil
	case <-ctx.Done():
		p.mu.Lock()
		p.abandoned[id] = true
		p.mu.Unlock()
		// The caller's context may be done while the connection lives:
		// tell the client, as the spec asks of the side that gives up.
		cancelled, _ := mcp.NewNotification(mcp.NotificationCancelled, mcp.CancelledParams{RequestID: id, Reason: ctx.Err().Error()})
		wctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
		_ = p.write(wctx, cancelled)
		cancel()
		return nil, ctx.Err()
	case <-p.ctx.Done():
		return nil, fmt.Errorf("mcptest: %s: %w", method, transport.ErrClosed)
	}
}

// Ping sends the client a ping and waits for the empty answer.
func (p *Peer) Ping(ctx context.Context) error {
	_, err := p.Request(ctx, mcp.MethodPing, nil)
	return err
}

// Notify sends the client a notification.
func (p *Peer) Notify(ctx context.Context, method string, params any) error {
	msg, err := mcp.NewNotification(method, params)
	if err != nil {
		return err
	}
	return p.write(ctx, msg)
}

// Close closes the connection, as a crashing server would; Serve then
// returns.
func (p *Peer) Close() error {
	p.mu.Lock()
	p.died = true
	p.mu.Unlock()
	return p.conn.Close()
}

func (p *Peer) hasDied() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.died
}

func (p *Peer) write(ctx context.Context, m *mcp.Message) error {
	return p.conn.Write(ctx, m)
}

// drain waits up to d for the requests in flight to finish. It returns a
// channel closed when its helper goroutine has ended, which Serve waits for
// so that nothing outlives it.
func (p *Peer) drain(d time.Duration) <-chan struct{} {
	idle := make(chan struct{})
	go func() {
		p.wg.Wait()
		close(idle)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
		// Serve cancels what is left.
	}
	return idle
}

// receive handles one message read from the connection. It runs on Serve's
// goroutine: responses and notifications are handled inline (so that a
// notifications/cancelled is seen in order), requests on a goroutine each.
func (p *Peer) receive(msg *mcp.Message) {
	// The server keeps messages for records and handlers, so it takes its
	// own copy of the raw parts: a Conn may reuse its buffers.
	c := *msg
	c.Params = bytes.Clone(msg.Params)
	c.Result = bytes.Clone(msg.Result)
	msg = &c
	p.srv.record(p, msg)
	switch {
	case msg.IsResponse():
		p.mu.Lock()
		ch, ok := p.pending[msg.ID]
		if ok {
			delete(p.pending, msg.ID)
		}
		late := p.abandoned[msg.ID]
		delete(p.abandoned, msg.ID)
		p.mu.Unlock()
		if !ok {
			// An answer that crossed our cancellation on the wire is
			// fine; one to an id we never used is not.
			if !late {
				p.srv.violation(p, "response to unknown request id %s", msg.ID)
			}
			return
		}
		ch <- msg
	case msg.IsNotification():
		p.notification(msg)
	default:
		p.startRequest(msg)
	}
}

func (p *Peer) notification(msg *mcp.Message) {
	switch msg.Method {
	case mcp.NotificationInitialized:
		p.mu.Lock()
		if p.legacyVersion == "" {
			p.mu.Unlock()
			p.srv.violation(p, "notifications/initialized before initialize")
			return
		}
		p.initialized = true
		p.mu.Unlock()
	case mcp.NotificationCancelled:
		var cp mcp.CancelledParams
		if err := json.Unmarshal(msg.Params, &cp); err != nil || !cp.RequestID.IsValid() {
			p.srv.violation(p, "notifications/cancelled with bad params: %s", msg.Params)
			return
		}
		p.mu.Lock()
		fl, ok := p.inflight[cp.RequestID]
		if ok {
			fl.cancelled = true
		}
		p.mu.Unlock()
		// An unknown id is no violation: the answer may have crossed the
		// cancellation on the wire.
		if ok {
			fl.cancel()
		}
	}
}

func (p *Peer) startRequest(msg *mcp.Message) {
	p.mu.Lock()
	if _, dup := p.inflight[msg.ID]; dup {
		p.mu.Unlock()
		p.srv.violation(p, "request id %s reused while in flight", msg.ID)
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			resp, _ := mcp.NewResponse(msg.ID, nil, &mcp.Error{Code: mcp.CodeInvalidRequest, Message: "request id already in use"})
			_ = p.write(p.ctx, resp)
		}()
		return
	}
	ctx, cancel := context.WithCancel(p.ctx)
	fl := &inflight{cancel: cancel}
	p.inflight[msg.ID] = fl
	p.mu.Unlock()
	// Faults are taken here, in the order requests arrive, so that "the
	// next request" in a test means the next one the client sent.
	f, faulty := p.srv.takeFault(msg)
	p.wg.Add(1)
	go p.serveRequest(ctx, fl, msg, f, faulty)
}

// errNoAnswer is returned by method handlers that must not be answered (a
// listen stream that ended by cancellation).
var errNoAnswer = errors.New("no answer")

func (p *Peer) serveRequest(ctx context.Context, fl *inflight, msg *mcp.Message, f Fault, faulty bool) {
	defer p.wg.Done()
	defer func() {
		p.mu.Lock()
		delete(p.inflight, msg.ID)
		p.mu.Unlock()
		fl.cancel()
	}()
	if faulty && f.IgnoreCancel {
		// The client's cancellation is not to reach this request: only
		// the end of the connection stops it.
		ctx = p.ctx
	}
	if faulty && f.Delay > 0 {
		t := time.NewTimer(f.Delay)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	if faulty && f.Die {
		p.Close()
		return
	}
	if faulty && f.Drop {
		return
	}
	if faulty {
		p.flood(ctx, f)
	}
	var result any
	var err error
	if faulty && f.Huge > 0 {
		result = textResult(strings.Repeat("x", f.Huge))
	} else {
		result, err = p.dispatch(ctx, msg)
	}
	p.mu.Lock()
	cancelled := fl.cancelled && !(faulty && f.IgnoreCancel)
	p.mu.Unlock()
	if cancelled || errors.Is(err, errNoAnswer) || p.ctx.Err() != nil {
		return
	}
	resp, merr := mcp.NewResponse(msg.ID, result, err)
	if merr != nil {
		resp, _ = mcp.NewResponse(msg.ID, nil, &mcp.Error{Code: mcp.CodeInternalError, Message: merr.Error()})
	}
	if !faulty {
		_ = p.write(ctx, resp)
		return
	}
	if f.Junk {
		p.writeJunk(ctx)
	}
	rw, raw := p.conn.(RawWriter)
	if f.Undecodable && raw {
		// A valid id, so that the client can tell whose answer it was,
		// in a message no decoder may accept.
		line := append([]byte(`{"jsonrpc":"1.0","id":`), msg.ID.AppendJSON(nil)...)
		line = append(line, `,"result":{}}`+"\n"...)
		_ = rw.WriteRaw(ctx, line)
		return
	}
	if f.Cut {
		if raw {
			b := resp.AppendJSON(nil)
			_ = rw.WriteRaw(ctx, b[:len(b)/2])
		}
		p.Close()
		return
	}
	if f.WrongID {
		wrong := *resp
		wrong.ID = p.bogusID("wrong")
		_ = p.write(ctx, &wrong)
		if !f.AlsoRight {
			return
		}
	}
	if f.Trickle > 0 && raw {
		p.trickle(ctx, rw, append(resp.AppendJSON(nil), '\n'), f.Trickle)
	} else {
		_ = p.write(ctx, resp)
	}
	if f.Twice {
		_ = p.write(ctx, resp)
	}
}

// flood sends the notifications and requests of the Notify and Ask
// faults.
func (p *Peer) flood(ctx context.Context, f Fault) {
	for i := range f.Notify {
		if p.Notify(ctx, mcp.NotificationMessage, map[string]any{"level": "info", "data": fmt.Sprintf("flood %d of %d", i+1, f.Notify)}) != nil {
			return
		}
	}
	for range f.Ask {
		p.mu.Lock()
		p.nextID++
		id := mcp.Int64ID(p.nextID)
		// Not waited for: its answer, whenever it comes, is expected.
		p.abandoned[id] = true
		p.mu.Unlock()
		if p.write(ctx, &mcp.Message{ID: id, Method: mcp.MethodPing}) != nil {
			return
		}
	}
}

// tricklePiece is how many bytes the Trickle fault writes at a time.
const tricklePiece = 7

// trickle writes b in small pieces with a pause after each. On a
// RawStream the pieces are written under its lock, so no other message
// lands inside this one.
func (p *Peer) trickle(ctx context.Context, rw RawWriter, b []byte, pause time.Duration) {
	write := rw.WriteRaw
	if h, ok := rw.(interface {
		holdRaw(func(write func([]byte) error))
	}); ok {
		h.holdRaw(func(w func([]byte) error) { trickleOut(ctx, w, b, pause) })
		return
	}
	trickleOut(ctx, func(b []byte) error { return write(ctx, b) }, b, pause)
}

func trickleOut(ctx context.Context, write func([]byte) error, b []byte, pause time.Duration) {
	t := time.NewTimer(pause)
	defer t.Stop()
	for len(b) > 0 {
		n := min(tricklePiece, len(b))
		if write(b[:n]) != nil {
			return
		}
		b = b[n:]
		t.Reset(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			// Finish at once: half a message left on the wire would
			// break the connection, which is Cut's job, not Trickle's.
			_ = write(b)
			return
		}
	}
}

func (p *Peer) bogusID(kind string) mcp.ID {
	p.mu.Lock()
	p.bogus++
	n := p.bogus
	p.mu.Unlock()
	return mcp.StringID("mcptest-" + kind + "-" + strconv.FormatInt(n, 10))
}

// junkLine is what the Junk fault writes on a byte stream: a line a client
// must skip without losing the connection.
const junkLine = "mcptest junk: this line is not JSON-RPC\n"

func (p *Peer) writeJunk(ctx context.Context) {
	if rw, ok := p.conn.(RawWriter); ok {
		_ = rw.WriteRaw(ctx, []byte(junkLine))
		return
	}
	junk, _ := mcp.NewResponse(p.bogusID("junk"), json.RawMessage(`{}`), nil)
	_ = p.write(ctx, junk)
}

// rpcError builds a JSON-RPC error; data, if not nil, is marshalled.
func rpcError(code int64, data any, format string, args ...any) *mcp.Error {
	e := &mcp.Error{Code: code, Message: fmt.Sprintf(format, args...)}
	if data != nil {
		e.Data, _ = json.Marshal(data)
	}
	return e
}

// paramsObject checks that raw params are absent or a JSON object.
func paramsObject(raw json.RawMessage) error {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" || t[0] == '{' {
		return nil
	}
	return rpcError(mcp.CodeInvalidParams, nil, "params must be an object")
}

// requestMeta extracts params._meta, or nil.
func requestMeta(raw json.RawMessage) (mcp.Meta, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var p struct {
		Meta mcp.Meta `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, rpcError(mcp.CodeInvalidParams, nil, "bad params: %v", err)
	}
	return p.Meta, nil
}

func (p *Peer) dispatch(ctx context.Context, msg *mcp.Message) (any, error) {
	if err := paramsObject(msg.Params); err != nil {
		return nil, err
	}
	meta, err := requestMeta(msg.Params)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	legacy := p.legacyVersion != ""
	initialized := p.initialized
	p.mu.Unlock()
	_, modern := meta[mcp.MetaProtocolVersion]
	s := p.srv
	switch {
	case msg.Method == mcp.MethodInitialize:
		return p.initialize(msg)
	case legacy:
		if !initialized && msg.Method != mcp.MethodPing {
			p.srv.violation(p, "%s before notifications/initialized", msg.Method)
		}
		return p.legacyDispatch(ctx, msg)
	case msg.Method == mcp.MethodPing && !modern:
		// ping may precede initialize, and a probe for liveness is
		// harmless on any connection.
		return struct{}{}, nil
	case len(s.modernVersions) > 0:
		return p.modernDispatch(ctx, msg, meta)
	case msg.Method == mcp.MethodDiscover:
		return nil, rpcError(mcp.CodeMethodNotFound, nil, "method not found: %s", msg.Method)
	default:
		p.srv.violation(p, "%s before initialize", msg.Method)
		return nil, rpcError(mcp.CodeInvalidRequest, nil, "server not initialized: send initialize first")
	}
}

// initialize runs the legacy handshake: echo the client's revision if the
// server speaks it, else offer the newest legacy revision it has.
func (p *Peer) initialize(msg *mcp.Message) (any, error) {
	s := p.srv
	var ip mcp.InitializeParams
	if len(msg.Params) == 0 || json.Unmarshal(msg.Params, &ip) != nil {
		return nil, rpcError(mcp.CodeInvalidParams, nil, "initialize: bad or missing params")
	}
	if ip.ProtocolVersion == "" {
		return nil, rpcError(mcp.CodeInvalidParams, nil, "initialize: missing protocolVersion")
	}
	if len(s.legacyVersions) == 0 {
		return nil, rpcError(mcp.CodeUnsupportedProtocolVersion,
			mcp.UnsupportedVersionData{Supported: s.versions, Requested: ip.ProtocolVersion},
			"unsupported protocol version %q: this server has no initialize handshake", ip.ProtocolVersion)
	}
	version := s.legacyVersions[0]
	if slices.Contains(s.legacyVersions, ip.ProtocolVersion) {
		version = ip.ProtocolVersion
	}
	p.mu.Lock()
	if p.legacyVersion != "" {
		p.mu.Unlock()
		s.violation(p, "second initialize")
		return nil, rpcError(mcp.CodeInvalidRequest, nil, "already initialized")
	}
	p.legacyVersion = version
	p.clientInfo = ip.ClientInfo
	p.clientCaps = ip.Capabilities
	p.mu.Unlock()
	return &mcp.InitializeResult{
		ProtocolVersion: version,
		Capabilities:    s.caps,
		ServerInfo:      s.info,
		Instructions:    s.opts.Instructions,
	}, nil
}

func (p *Peer) legacyDispatch(ctx context.Context, msg *mcp.Message) (any, error) {
	switch msg.Method {
	case mcp.MethodPing:
		return struct{}{}, nil
	case mcp.MethodToolsList:
		return p.listTools(msg, false)
	case mcp.MethodToolsCall:
		p.mu.Lock()
		caps := p.clientCaps
		version := p.legacyVersion
		p.mu.Unlock()
		return p.callTool(ctx, msg, false, version, caps, nil)
	case mcp.MethodLoggingSetLevel:
		var sp mcp.SetLevelParams
		if len(msg.Params) == 0 || json.Unmarshal(msg.Params, &sp) != nil || levelRank(sp.Level) < 0 {
			return nil, rpcError(mcp.CodeInvalidParams, nil, "logging/setLevel: bad level")
		}
		p.mu.Lock()
		p.logLevel = sp.Level
		p.mu.Unlock()
		return struct{}{}, nil
	}
	return nil, rpcError(mcp.CodeMethodNotFound, nil, "method not found: %s", msg.Method)
}

// modernDispatch serves a 2026-07-28 request: _meta must carry the
// protocol version (one the server speaks) and the client capabilities.
func (p *Peer) modernDispatch(ctx context.Context, msg *mcp.Message, meta mcp.Meta) (any, error) {
	s := p.srv
	rawVersion, hasVersion := meta[mcp.MetaProtocolVersion]
	rawCaps, hasCaps := meta[mcp.MetaClientCapabilities]
	if !hasVersion || !hasCaps {
		missing := mcp.MetaProtocolVersion
		if hasVersion {
			missing = mcp.MetaClientCapabilities
		}
		s.violation(p, "%s without _meta %s", msg.Method, missing)
		return nil, rpcError(mcp.CodeInvalidParams, nil, "missing required _meta key %q", missing)
	}
	var version string
	if err := json.Unmarshal(rawVersion, &version); err != nil {
		return nil, rpcError(mcp.CodeInvalidParams, nil, "_meta %q must be a string", mcp.MetaProtocolVersion)
	}
	if !slices.Contains(s.modernVersions, version) {
		return nil, rpcError(mcp.CodeUnsupportedProtocolVersion,
			mcp.UnsupportedVersionData{Supported: s.versions, Requested: version},
			"unsupported protocol version %q", version)
	}
	var caps mcp.ClientCapabilities
	if err := json.Unmarshal(rawCaps, &caps); err != nil {
		return nil, rpcError(mcp.CodeInvalidParams, nil, "_meta %q must be a ClientCapabilities object", mcp.MetaClientCapabilities)
	}
	if rawLevel, ok := meta[mcp.MetaLogLevel]; ok {
		var level mcp.LoggingLevel
		if json.Unmarshal(rawLevel, &level) != nil || levelRank(level) < 0 {
			return nil, rpcError(mcp.CodeInvalidParams, nil, "_meta %q: invalid logging level", mcp.MetaLogLevel)
		}
	}
	var info mcp.Implementation
	if rawInfo, ok := meta[mcp.MetaClientInfo]; ok {
		_ = json.Unmarshal(rawInfo, &info) // informative only
	}
	p.mu.Lock()
	p.modernVersion = version
	if info.Name != "" {
		p.clientInfo = info
	}
	p.mu.Unlock()

	switch msg.Method {
	case mcp.MethodDiscover:
		return &mcp.DiscoverResult{
			ResultType:        mcp.ResultTypeComplete,
			SupportedVersions: s.versions,
			Capabilities:      s.caps,
			Instructions:      s.opts.Instructions,
			Meta:              s.serverMeta(nil),
		}, nil
	case mcp.MethodToolsList:
		return p.listTools(msg, true)
	case mcp.MethodToolsCall:
		return p.callTool(ctx, msg, true, version, caps, meta)
	case mcp.MethodSubscriptionsListen:
		return p.listen(ctx, msg)
	case mcp.MethodTasksGet, mcp.MethodTasksUpdate, mcp.MethodTasksCancel:
		return p.taskRequest(msg, caps)
	case mcp.MethodPing:
		// ping is gone from 2026-07-28; answer anyway, so that a client
		// that still sends it learns of its mistake from Violations.
		s.violation(p, "ping sent in the 2026-07-28 era")
		return map[string]any{"resultType": mcp.ResultTypeComplete, "_meta": s.serverMeta(nil)}, nil
	}
	return nil, rpcError(mcp.CodeMethodNotFound, nil, "method not found: %s", msg.Method)
}
