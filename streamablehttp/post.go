package streamablehttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// One POST per message: the headers each carries, the exchange with
// authorization, and what its status means. The stream that answers a
// request is read in stream.go.

// request is a request in flight on its own POST stream. It is known only
// to the goroutine that reads that stream (see the design note: the Conn
// keeps no map of requests).
type request struct {
	id      mcp.ID
	method  string
	modern  bool
	session string // the session id the request carried
	ctx     context.Context
	cancel  context.CancelFunc
	// detach stops the call's context from closing the stream, once the
	// response is in.
	detach func() bool
	// answered is set when the response, or an error for the request, has
	// been read: nothing more is owed to the engine than queueing it.
	answered atomic.Bool
	// queued is set when the response has been handed on (queueResponse).
	queued atomic.Bool
	// response is the response read on the request's SSE stream, held
	// until the stream ends (finish). Only the stream's goroutine uses it.
	response *mcp.Message
}

// headers builds the headers of one POST (checklist §4A, §4B.1, §4B.4,
// §4C.2) from what the engine said: the revision, and the request's name
// and arguments.
//
// The values that are the same for every POST are shared slices, set into
// the map rather than Set (which allocates a slice per header per
// request): net/http only reads a request's header values, and a caller
// that appends to one gets a copy, since each has no room to spare.
func (c *Conn) headers(ctx context.Context, msg *mcp.Message, info *transport.RequestInfo) http.Header {
	h := c.baseHeaders(ctx)
	h["Content-Type"] = jsonType
	h["Accept"] = acceptPOST
	c.mu.Lock()
	sid, version := c.sessionID, c.version
	modern := mcp.IsModernVersion(version)
	var specs []paramHeader
	if modern && info != nil && info.HasName && msg.Method == mcp.MethodToolsCall {
		specs = c.tools[info.Name]
	}
	c.mu.Unlock()
	switch {
	case modern:
		h.Set("Mcp-Protocol-Version", version)
		h.Set("Mcp-Method", msg.Method)
		if info != nil {
			if info.HasName {
				h.Set("Mcp-Name", encodeHeaderValue(info.Name))
			}
			setParamHeaders(h, specs, info.Arguments)
		}
	case msg.Method == mcp.MethodInitialize:
		// A new session: neither the old id nor a version yet.
	default:
		if sid != "" {
			h["Mcp-Session-Id"] = c.shared(&c.sidValue, sid)
		}
		if version != "" {
			h["Mcp-Protocol-Version"] = c.shared(&c.versionValue, version)
		}
	}
	return h
}

var (
	jsonType   = []string{"application/json"}
	acceptPOST = []string{"application/json, text/event-stream"}
)

// shared returns a one-value slice holding v, made anew only when v
// changes (a session id, a revision: once per session). Guarded by c.mu.
func (c *Conn) shared(cache *[]string, v string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(*cache) != 1 || (*cache)[0] != v {
		*cache = []string{v}
	}
	return (*cache)[:1:1]
}

// mediaType returns the media type of a Content-Type value, lower case,
// without its parameters: what mime.ParseMediaType gives for the types
// this package reads, without the map of parameters it allocates.
func mediaType(v string) string {
	if i := strings.IndexByte(v, ';'); i >= 0 {
		v = v[:i]
	}
	v = strings.TrimSpace(v)
	for i := 0; i < len(v); i++ {
		if 'A' <= v[i] && v[i] <= 'Z' {
			return strings.ToLower(v)
		}
	}
	return v
}

// baseHeaders are the caller's headers, for every request.
func (c *Conn) baseHeaders(ctx context.Context) http.Header {
	h := make(http.Header, 8)
	for k, vs := range c.opts.Header {
		h[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	if c.opts.HeaderFunc != nil {
		for k, vs := range c.opts.HeaderFunc(ctx) {
			h[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
		}
	}
	return h
}

// do sends one HTTP request with authorization, giving OnUnauthorized one
// chance to refresh credentials. A non-2xx answer other than 401/403 is
// returned as is, for the caller to interpret. do takes hdr over: every
// caller builds a fresh map for its request, so it is used as it is rather
// than copied (a copy per call was a third of the client's header cost).
func (c *Conn) do(ctx context.Context, method string, u *url.URL, body []byte, hdr http.Header, what string) (*http.Response, error) {
	staleRetried := false
	for attempt := 0; ; attempt++ {
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		// The trace goes into the context the request is made with: set
		// afterwards, WithContext would copy the whole request.
		rt := getReuseTrace(ctx)
		tctx := httptrace.WithClientTrace(ctx, &rt.trace)
		target := c.endpointStr
		if u != c.endpoint {
			target = u.String()
		}
		req, err := http.NewRequestWithContext(tctx, method, target, rd)
		if err != nil {
			return nil, fmt.Errorf("mcp http: %w", err)
		}
		req.Header = hdr
		if az := c.opts.Auth; az != nil {
			if err := az.AuthorizeRequest(req); err != nil {
				return nil, fmt.Errorf("mcp http: authorization: %w", err)
			}
		}
		resp, err := c.client.Do(req)
		reused := rt.reused
		rt.release()
		if err != nil && reused && !staleRetried && ctx.Err() == nil && staleConn(err) {
			// A kept-alive connection the server had closed (it
			// restarted, or timed the connection out) before reading the
			// request: net/http retries that only for idempotent
			// methods. The request died with the connection before any
			// answer, which on a kept-alive connection almost always means
			// the server never read it: send it once more. The Conn's own
			// pool is emptied first: a server that closed one of its
			// connections has most likely closed them all (it restarted),
			// and the retry would take the next dead one.
			if c.own != nil {
				c.own.CloseIdleConnections()
			}
			staleRetried = true
			attempt--
			continue
		}
		if err != nil {
			var re *RedirectError
			if errors.As(err, &re) {
				return nil, re
			}
			if c.ctx.Err() != nil {
				return nil, fmt.Errorf("mcp http: %s: %w", what, transport.ErrClosed)
			}
			if ctx.Err() != nil {
				return nil, context.Cause(ctx)
			}
			return nil, fmt.Errorf("mcp http: %s: %w (%w)", what, err, transport.ErrConnectionLost)
		}
		if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
			return resp, nil
		}
		b := readErrorBody(resp)
		var cause error
		if az := c.opts.Auth; az != nil && attempt < MaxAuthRetries {
			if cause = az.HandleUnauthorized(ctx, resp); cause == nil {
				continue
			}
			c.log.Debug("mcp http: authorization hook failed", "err", cause)
		}
		return nil, &AuthError{
			StatusError:     StatusError{Code: resp.StatusCode, Body: b, Method: what},
			WWWAuthenticate: resp.Header.Get("Www-Authenticate"),
			Cause:           cause,
		}
	}
}

// reuseTrace records whether a request went out on a kept-alive
// connection, which decides whether a failure is retried (do). One is taken
// from a pool per attempt and given back once Do has returned: net/http
// calls GotConn while it picks the connection, before Do returns, and no
// hook later. A context that already carries a trace of the caller's gets a
// fresh one, since WithClientTrace then writes the caller's hooks into it.
type reuseTrace struct {
	trace  httptrace.ClientTrace
	reused bool
	pooled bool
}

var reuseTraces = sync.Pool{New: func() any { return newReuseTrace(true) }}

func newReuseTrace(pooled bool) *reuseTrace {
	rt := &reuseTrace{pooled: pooled}
	rt.trace.GotConn = rt.gotConn
	return rt
}

func getReuseTrace(ctx context.Context) *reuseTrace {
	if httptrace.ContextClientTrace(ctx) != nil {
		return newReuseTrace(false)
	}
	rt := reuseTraces.Get().(*reuseTrace)
	rt.reused = false
	return rt
}

func (rt *reuseTrace) gotConn(info httptrace.GotConnInfo) { rt.reused = info.Reused }

func (rt *reuseTrace) release() {
	if rt.pooled {
		reuseTraces.Put(rt)
	}
}

// staleConn reports whether err is what a request gets on a kept-alive
// connection that the server closed before reading it.
func staleConn(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) ||
		strings.Contains(err.Error(), "server closed idle connection")
}

// readErrorBody reads the start of an error response and closes it.
func readErrorBody(resp *http.Response) string {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	return string(b)
}

// statusError interprets a non-2xx answer to a message that carried
// session id sid: a 404 on a session is its expiry, whatever the message
// (checklist §4B.2), which the engine answers by renewing the session.
func statusError(resp *http.Response, body, what, sid string) error {
	se := &StatusError{Code: resp.StatusCode, Body: body, Method: what}
	if resp.StatusCode == http.StatusNotFound && sid != "" {
		return fmt.Errorf("%w: %w", transport.ErrSessionExpired, se)
	}
	return se
}

// rpcErrorBody returns the JSON-RPC error an error response carries, if any.
func rpcErrorBody(resp *http.Response, body string) *mcp.Error {
	ct := mediaType(resp.Header.Get("Content-Type"))
	if ct != "application/json" && !strings.HasPrefix(strings.TrimSpace(body), "{") {
		return nil
	}
	var m struct {
		JSONRPC string     `json:"jsonrpc"`
		Error   *mcp.Error `json:"error"`
	}
	if json.Unmarshal([]byte(body), &m) != nil || m.Error == nil || m.JSONRPC != "2.0" {
		return nil
	}
	return m.Error
}

// postOneWay posts a notification or a response: the answer is 202 (or 200
// with a body some servers send anyway, which is drained).
func (c *Conn) postOneWay(ctx context.Context, msg *mcp.Message, body []byte) error {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel)
	defer stop()
	hdr := c.headers(ctx, msg, nil)
	what := msg.Method
	if what == "" {
		what = "response"
	}
	var opened <-chan struct{}
	if msg.Method == mcp.NotificationInitialized {
		// The GET stream opens beside this POST rather than after it:
		// the session exists once initialize is answered, and the
		// handshake then waits for the slower of the two instead of
		// both in turn (a third of an HTTP handshake on loopback).
		// The GET dials a connection of its own while the POST holds
		// the handshake's, which stays warm for the first call.
		opened = c.startGET()
	}
	resp, err := c.do(rctx, http.MethodPost, c.endpoint, body, hdr, what)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return statusError(resp, readErrorBody(resp), what, hdr.Get("Mcp-Session-Id"))
	}
	// Drain a little so the connection can be reused, then let it go.
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	if opened != nil {
		// Wait (briefly) until the GET stream is open, so that what the
		// server pushes right after the handshake is not missed, and a
		// stream the server opens later is not taken for a resumption.
		// Open means answered: a GET written but not yet answered may
		// be taken after later requests on the connection already open
		// (Node's server accepts a new connection late), and the
		// conformance suite's sse-retry server then answers the call on
		// it (TestHandshakeWaitsForGETAnswer).
		t := time.NewTimer(getOpenWait)
		defer t.Stop()
		select {
		case <-opened:
		case <-t.C:
		case <-ctx.Done():
		}
	}
	return nil
}

// getOpenWait bounds how long the Write of notifications/initialized waits
// for the standalone GET stream's response headers: a server that holds
// them cannot hold the handshake longer than this.
const getOpenWait = time.Second

// postRequest posts a request, on the caller's goroutine, and waits for
// its response headers; its stream is then read by a stream goroutine
// (readAnswer). Doing the POST here rather than on the stream goroutine
// saves the caller a hand-off there and one back for the headers.
func (c *Conn) postRequest(ctx context.Context, msg *mcp.Message, info *transport.RequestInfo, body []byte) error {
	rctx, cancelCause := context.WithCancelCause(c.ctx)
	cancel := func() { cancelCause(nil) }
	modern := info != nil && info.Modern
	if info == nil {
		c.mu.Lock()
		modern = mcp.IsModernVersion(c.version)
		c.mu.Unlock()
	}
	r := &request{id: msg.ID, method: msg.Method, modern: modern, ctx: rctx, cancel: cancel}
	// Until its response is in, the stream lives no longer than the call
	// that wrote it: abandoning the call closes it (the 2026 cancellation).
	// Its cause is the call's (a deadline stays a deadline): an auth layer
	// that waits for a person tells the one from a person giving up.
	r.detach = context.AfterFunc(ctx, func() { cancelCause(context.Cause(ctx)) })
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		r.detach()
		cancel()
		return fmt.Errorf("mcp http: write %s: %w", msg.Method, transport.ErrClosed)
	}
	c.wg.Add(1)
	c.mu.Unlock()

	hdr := c.headers(ctx, msg, info)
	resp, err := c.openRequest(r, body, hdr)
	if resp == nil {
		r.detach()
		c.wg.Done()
		var pending transport.AuthWaiter
		if err != nil && ctx.Err() != nil && !errors.As(err, &pending) {
			return context.Cause(ctx)
		}
		return err
	}
	c.startStream(streamJob{r, resp})
	return nil
}

// streamJob is one answer for a stream goroutine to read.
type streamJob struct {
	r    *request
	resp *http.Response
}

// streamIdle is how long a stream goroutine waits for the next answer
// before it exits.
const streamIdle = 5 * time.Second

// startStream hands job to an idle stream goroutine, or starts one.
//
// Why not a goroutine per request: net/http's client path is deep, so a
// new goroutine grows its stack two or three times on every request
// (runtime.newstack was 8% of the client's CPU at 16 concurrent calls);
// one that has served a request before already has the stack. There are
// never more stream goroutines than answers being read, plus those idling
// for up to streamIdle; Close ends the idle ones at once. The caller has
// done c.wg.Add(1) for the job.
func (c *Conn) startStream(job streamJob) {
	select {
	case c.jobs <- job:
	default:
		c.wg.Add(1)
		go c.streamWorker(job)
	}
}

func (c *Conn) streamWorker(job streamJob) {
	defer c.wg.Done()
	idle := time.NewTimer(streamIdle)
	defer idle.Stop()
	for {
		c.readAnswer(job.r, job.resp)
		job = streamJob{} // let go of what it held while idle
		idle.Reset(streamIdle)
		select {
		case job = <-c.jobs:
		case <-idle.C:
			return
		case <-c.ctx.Done():
			return
		}
	}
}

// openRequest posts r and interprets the status. It returns the response
// when it has a body to read for r; otherwise nil, and the outcome of the
// POST for Write (nil when the answer has been queued already, or will
// come on another stream).
func (c *Conn) openRequest(r *request, body []byte, hdr http.Header) (*http.Response, error) {
	sid := hdr.Get("Mcp-Session-Id")
	r.session = sid
	resp, err := c.do(r.ctx, http.MethodPost, c.endpoint, body, hdr, r.method)
	if err != nil {
		r.cancel()
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		eb := readErrorBody(resp)
		code := resp.StatusCode
		legacyProbe := code == http.StatusBadRequest || code == http.StatusNotFound || code == http.StatusMethodNotAllowed
		rpcErr := rpcErrorBody(resp, eb)
		defer r.cancel()
		if r.method == mcp.MethodInitialize && legacyProbe && (rpcErr == nil || code != http.StatusBadRequest) {
			// Not a Streamable HTTP server: the 2024-11-05 HTTP+SSE
			// transport may answer at the same URL (checklist §4C.9,
			// §4D). The engine decides, and asks for it (SwitchWire).
			return nil, fmt.Errorf("%w: %w", transport.ErrLegacyWire, &StatusError{Code: code, Body: eb, Method: r.method})
		}
		if code == http.StatusNotFound && sid != "" {
			return nil, statusError(resp, eb, r.method, sid)
		}
		if rpcErr != nil {
			// A JSON-RPC error in an error status (400 with -32022, 404
			// with -32601...) is the answer to this request: the engine
			// reads the code.
			r.answered.Store(true)
			c.in.Put(&mcp.Message{ID: r.id, Error: rpcErr}, nil)
			return nil, nil
		}
		return nil, statusError(resp, eb, r.method, sid)
	}
	if r.method == mcp.MethodInitialize {
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" && validSessionID(sid) {
			c.mu.Lock()
			c.sessionID = sid
			c.mu.Unlock()
		}
	}
	if ct := mediaType(resp.Header.Get("Content-Type")); ct != "text/event-stream" && ct != "application/json" && resp.StatusCode != http.StatusAccepted {
		// Neither of the two answers the protocol has for a request. A
		// body (an HTML page from a portal or the wrong URL) fails the
		// request now: left to wait, it would hold the call, and the
		// handshake's probe, until their deadlines.
		defer r.cancel()
		if b := readErrorBody(resp); strings.TrimSpace(b) != "" {
			return nil, &ContentTypeError{Code: resp.StatusCode, ContentType: ct, Body: b, Method: r.method}
		}
		// An empty 200: the answer comes on another stream (the GET
		// stream, for some servers).
		return nil, nil
	}
	return resp, nil
}

// readAnswer reads the body of r's answer (the stream goroutine of the
// design note).
func (c *Conn) readAnswer(r *request, resp *http.Response) {
	defer c.wg.Done()
	defer r.detach()
	defer r.cancel()
	defer resp.Body.Close()
	ct := mediaType(resp.Header.Get("Content-Type"))
	switch {
	case ct == "text/event-stream":
		c.readPOSTStream(r, resp.Body)
	case ct == "application/json":
		c.readJSONBody(r, resp.Body, resp.ContentLength)
	default:
		// 202 (openRequest has taken every other answer that is neither):
		// the answer will come on another stream (the GET stream, for
		// some servers).
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	}
}

func validSessionID(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
