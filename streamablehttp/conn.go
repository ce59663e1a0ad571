// Package streamablehttp is the MCP Streamable HTTP transport, in every era:
// the stateless 2026-07-28 wire, the legacy session wire of 2025-03-26,
// 2025-06-18 and 2025-11-25, and the 2024-11-05 HTTP+SSE transport as a
// fallback. Dial returns a transport.Conn; transport.Connect runs the
// protocol over it.
//
//	conn, err := streamablehttp.Dial(ctx, "http://127.0.0.1:3001/mcp", nil)
//	if err != nil { ... }
//	s, err := transport.Connect(ctx, conn, nil)
//
// The wire knows, the engine acts (DESIGN.md): the Conn sees status codes,
// session ids, broken streams and header rules, and reports them to the
// engine as typed errors (transport.ErrSessionExpired,
// transport.ErrRequestLost, transport.ErrAuthRequired, *StatusError); the
// engine decides to re-initialize, re-send or give up.
package streamablehttp

// Design note.
//
// Streams. Every message the engine writes is its own POST. The answer to a
// request is a stream: a JSON body (one message, or a 2025-03-26 batch) or an
// SSE stream that carries notifications and server requests tied to that
// request and then its response. Each POST stream is read by one goroutine,
// started by Write, which queues what it reads for Read; streams are per
// request by nature, so this is a goroutine per request in flight, never one
// per message. On the legacy wire one more goroutine holds the standalone
// GET stream, and on the 2024-11-05 wire one holds the SSE stream that
// carries every server message. Nothing else runs.
//
// Write waits only for the POST's response headers: the status decides
// what happens (202, 200 with a body to read, 404 for an expired session,
// 401/403, the era fallback), so it is reported to the caller of Write, and
// the body is left to the stream's goroutine. A request's stream has its own
// context, derived from the Conn's; it ends when the response has been read,
// when the engine cancels the request (notifications/cancelled: on the 2026
// wire the Conn closes the stream instead of posting it), or when the Conn
// closes.
//
// Bookkeeping. The Conn remembers the requests in flight only to know which
// stream a response belongs to and what kind of request it was (initialize:
// read the negotiated version; tools/list: learn x-mcp-header annotations);
// matching responses to callers is the engine's job.
//
// Shutdown. Close cancels the Conn's context, which ends every POST, stream
// and reconnect wait at once (a server that trickles bytes cannot hold a
// body read open), sends DELETE for a legacy session bounded by
// CloseTimeout, and waits, bounded by CloseTimeout, for the goroutines.
//
// Checklist §4, what is left to others, and why. The SHOULDs that need
// protocol state live in the engine, which has it: re-running tools/list
// and retrying after a -32020 HeaderMismatch (§4C.5; the Conn delivers the
// error as the request's answer), comparing the granted subset of a
// subscriptions/listen acknowledgement (§4C.8), and re-opening a listen
// stream (the Conn reports its drop as transport.ErrRequestLost). The
// optional MCP-Protocol-Version header on initialize itself (§4B.4) is not
// sent: some servers validate the header before negotiating and would
// refuse the very request that negotiates it.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tako-mcp/tako/internal/waitgroup"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// DefaultMaxMessageSize is the message cap when Options.MaxMessageSize is
// zero: large enough for any real tool result, small enough that a broken
// server cannot make the client buffer without bound.
const DefaultMaxMessageSize = 64 << 20

// ownIdleConnsPerHost is how many idle connections the Conn's own transport
// keeps to its server.
const ownIdleConnsPerHost = 64

// Options configure a Conn. The zero value works.
type Options struct {
	// HTTPClient sends every request. Its Timeout is ignored (a copy
	// without it is used): a timeout on the whole exchange would cut every
	// long-lived stream. Contexts bound everything instead. Nil means a
	// client of the Conn's own, over RoundTripper when set.
	//
	// Calls run concurrently, each on its own POST: give the client's
	// transport a MaxIdleConnsPerHost of at least the number of calls you
	// run at once (Go's default is 2), or it will keep opening new TCP
	// connections. The Conn's own transport keeps 64.
	HTTPClient *http.Client
	// RoundTripper is used when HTTPClient is nil. Nil means a clone of
	// http.DefaultTransport owned (and closed) by the Conn.
	RoundTripper http.RoundTripper

	// Header is added to every request (POST, GET, DELETE).
	Header http.Header
	// HeaderFunc, when set, is called for every request with its context
	// and its result added after Header; it can carry per-call values such
	// as a trace id.
	HeaderFunc func(ctx context.Context) http.Header

	// MaxMessageSize caps one incoming message (a JSON body or one SSE
	// event) in bytes. Zero means DefaultMaxMessageSize.
	MaxMessageSize int

	// Reconnect governs re-opening dropped SSE streams (the standalone GET
	// stream and the resumption of a POST stream).
	Reconnect ReconnectPolicy

	// Auth is the seam for authorization; the zero value sends none.
	Auth Auth

	// CloseTimeout bounds the DELETE that ends a legacy session and the
	// wait for the Conn's goroutines in Close. Zero means 2 seconds.
	CloseTimeout time.Duration

	// Logger receives diagnostics (dropped tools, reconnects). Nil
	// discards them.
	Logger *slog.Logger
}

// ReconnectPolicy says how often and how fast a dropped SSE stream is
// re-opened. A server's SSE retry field overrides the delay.
type ReconnectPolicy struct {
	// Attempts is the number of consecutive failed attempts after which
	// the stream is given up. Zero means 5; negative means never reconnect.
	Attempts int
	// Backoff is the first delay; it doubles after each failure. Zero
	// means 1 second.
	Backoff time.Duration
	// MaxBackoff caps the delay. Zero means 30 seconds.
	MaxBackoff time.Duration
}

// Auth is the seam through which an authorization layer (OAuth 2.1) plugs
// in without the transport knowing how tokens are obtained.
type Auth struct {
	// TokenSource, when set, gives the bearer token for each request
	// (sent as Authorization: Bearer <token>). An error fails the request.
	TokenSource func(ctx context.Context) (string, error)
	// OnUnauthorized is called on a 401 or 403 with the response (its body
	// already read and closed; headers such as WWW-Authenticate intact).
	// Returning nil means credentials were refreshed: the request is sent
	// once more, up to MaxAuthRetries times (a DPoP server nonce, then a
	// step-up, can each take one). An error, or a refusal past that,
	// fails the request with an *AuthError wrapping
	// transport.ErrAuthRequired and the hook's error.
	OnUnauthorized func(ctx context.Context, resp *http.Response) error
	// Authorize, when set, is called for every request instead of
	// TokenSource and sets its authorization headers itself. It exists
	// for schemes whose header depends on the request: DPoP (RFC 9449)
	// signs a proof of the method and URL into a DPoP header per request.
	Authorize func(req *http.Request) error
}

// MaxAuthRetries bounds how often one request is re-sent after
// Auth.OnUnauthorized reports new credentials.
const MaxAuthRetries = 3

// Conn is a transport.Conn over Streamable HTTP. See the package
// documentation and the design note in conn.go.
type Conn struct {
	endpoint *url.URL
	client   *http.Client
	own      *http.Transport // closed on Close when the Conn made it
	opts     Options
	log      *slog.Logger
	maxSize  int

	ctx    context.Context // the Conn's life: cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	q      queue

	mu            sync.Mutex
	closed        bool
	sessionID     string
	version       string // legacy: the negotiated version, from the initialize result
	modernVersion string // 2026: the version of the last 2026 request
	reqs          map[string]*request
	tools         map[string][]paramHeader
	getCancel     context.CancelFunc // the standalone GET stream, if running
	old           *oldSSE            // set once switched to 2024-11-05 HTTP+SSE
}

// request is a request in flight on its own POST stream.
type request struct {
	id      mcp.ID
	method  string
	modern  bool
	session string // the session id the request carried
	ctx     context.Context
	cancel  context.CancelFunc
}

var _ transport.Conn = (*Conn)(nil)

// Dial returns a Conn for the MCP endpoint at rawURL. It does not touch the
// network: the first Write does, so the handshake's context bounds it.
func Dial(ctx context.Context, rawURL string, opts *Options) (*Conn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("mcp http: bad URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("mcp http: URL scheme %q is not http or https", u.Scheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("mcp http: URL %q has no host", rawURL)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := &Conn{
		endpoint: u,
		reqs:     make(map[string]*request),
		tools:    make(map[string][]paramHeader),
	}
	if opts != nil {
		c.opts = *opts
	}
	switch {
	case c.opts.HTTPClient != nil:
		cl := *c.opts.HTTPClient
		cl.Timeout = 0
		c.client = &cl
	case c.opts.RoundTripper != nil:
		c.client = &http.Client{Transport: c.opts.RoundTripper}
	default:
		if dt, ok := http.DefaultTransport.(*http.Transport); ok {
			c.own = dt.Clone()
		} else {
			c.own = &http.Transport{Proxy: http.ProxyFromEnvironment}
		}
		// One Conn talks to one host with many calls in flight. Go's
		// default of 2 idle connections per host closes every other
		// connection as concurrent answers come back, and the next calls
		// open new ones: 7,108 TCP connections for 25k calls from 16
		// callers in bench/, against the floor's 142.
		c.own.MaxIdleConnsPerHost = ownIdleConnsPerHost
		c.client = &http.Client{Transport: c.own}
	}
	c.maxSize = c.opts.MaxMessageSize
	if c.maxSize <= 0 {
		c.maxSize = DefaultMaxMessageSize
	}
	if c.opts.CloseTimeout <= 0 {
		c.opts.CloseTimeout = 2 * time.Second
	}
	rp := &c.opts.Reconnect
	if rp.Attempts == 0 {
		rp.Attempts = 5
	}
	if rp.Backoff <= 0 {
		rp.Backoff = time.Second
	}
	if rp.MaxBackoff <= 0 {
		rp.MaxBackoff = 30 * time.Second
	}
	c.log = c.opts.Logger
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.q.init()
	return c, nil
}

// SessionID returns the legacy session id the server assigned, or "".
func (c *Conn) SessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

// Read returns the next message from any of the Conn's streams.
func (c *Conn) Read(ctx context.Context) (*mcp.Message, error) {
	return c.q.pop(ctx, c.ctx)
}

// Write sends msg as one POST and waits for the response headers (see the
// design note). Errors: *StatusError for an unexpected status,
// *AuthError (wrapping transport.ErrAuthRequired) for 401/403 the Auth
// hooks did not resolve, an error wrapping transport.ErrSessionExpired for
// a 404 on a legacy session, transport.ErrClosed after Close.
func (c *Conn) Write(ctx context.Context, msg *mcp.Message) error {
	mi := inspect(msg)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return fmt.Errorf("mcp http: write %s: %w", msg.Method, transport.ErrClosed)
	}
	old := c.old
	if mi.version != "" {
		c.modernVersion = mi.version
	}
	c.mu.Unlock()

	if msg.Method == mcp.NotificationCancelled {
		if r := c.cancelled(msg); r != nil && r.modern {
			// 2026-07-28: closing the response stream is the
			// cancellation (checklist §4C.7); nothing is posted.
			r.cancel()
			return nil
		} else if r != nil {
			// Legacy: tell the server, then stop reading a stream whose
			// answer nobody waits for.
			defer r.cancel()
		}
	}
	body := msg.AppendJSON(nil)
	if old != nil {
		return old.post(ctx, c, msg, body)
	}
	if !msg.IsRequest() {
		return c.postOneWay(ctx, msg, mi, body)
	}

	rctx, cancel := context.WithCancel(c.ctx)
	r := &request{id: msg.ID, method: msg.Method, modern: mi.version != "", ctx: rctx, cancel: cancel}
	key := msg.ID.String()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		cancel()
		return fmt.Errorf("mcp http: write %s: %w", msg.Method, transport.ErrClosed)
	}
	c.reqs[key] = r
	c.wg.Add(1)
	c.mu.Unlock()

	hdr := c.headers(ctx, msg, mi)
	ready := make(chan error, 1)
	go c.runRequest(r, body, hdr, ready)
	select {
	case err := <-ready:
		if err != nil {
			c.forget(key, r)
		}
		return err
	case <-ctx.Done():
		c.forget(key, r)
		cancel()
		return context.Cause(ctx)
	}
}

// cancelled finds the request a notifications/cancelled names.
func (c *Conn) cancelled(msg *mcp.Message) *request {
	var p mcp.CancelledParams
	if json.Unmarshal(msg.Params, &p) != nil || !p.RequestID.IsValid() {
		return nil
	}
	key := p.RequestID.String()
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.reqs[key]
	if r != nil {
		delete(c.reqs, key)
	}
	return r
}

func (c *Conn) forget(key string, r *request) {
	c.mu.Lock()
	if c.reqs[key] == r {
		delete(c.reqs, key)
	}
	c.mu.Unlock()
}

// pending reports whether r still waits for its response.
func (c *Conn) pending(r *request) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reqs[r.id.String()] == r
}

// headers builds the headers of one POST (checklist §4A, §4B.1, §4B.4,
// §4C.2).
func (c *Conn) headers(ctx context.Context, msg *mcp.Message, mi modernInfo) http.Header {
	h := c.baseHeaders(ctx)
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	c.mu.Lock()
	sid, version, modernVersion := c.sessionID, c.version, c.modernVersion
	var specs []paramHeader
	if mi.version != "" && msg.Method == mcp.MethodToolsCall {
		specs = c.tools[mi.name]
	}
	c.mu.Unlock()
	switch {
	case mi.version != "":
		h.Set("Mcp-Protocol-Version", mi.version)
		h.Set("Mcp-Method", msg.Method)
		if mi.hasName {
			h.Set("Mcp-Name", encodeHeaderValue(mi.name))
		}
		setParamHeaders(h, specs, mi.args)
	case sid == "" && version == "" && modernVersion != "" && msg.Method != mcp.MethodInitialize:
		// A notification on the 2026 wire.
		h.Set("Mcp-Protocol-Version", modernVersion)
		h.Set("Mcp-Method", msg.Method)
	default:
		if sid != "" {
			h.Set("Mcp-Session-Id", sid)
		}
		if version != "" && msg.Method != mcp.MethodInitialize {
			h.Set("Mcp-Protocol-Version", version)
		}
	}
	return h
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
		req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
		if err != nil {
			return nil, fmt.Errorf("mcp http: %w", err)
		}
		req.Header = hdr
		if az := c.opts.Auth.Authorize; az != nil {
			if err := az(req); err != nil {
				return nil, fmt.Errorf("mcp http: authorization: %w", err)
			}
		} else if ts := c.opts.Auth.TokenSource; ts != nil {
			tok, err := ts(ctx)
			if err != nil {
				return nil, fmt.Errorf("mcp http: token: %w", err)
			}
			if tok != "" {
				req.Header.Set("Authorization", "Bearer "+tok)
			}
		}
		var reused bool
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
		}))
		resp, err := c.client.Do(req)
		if err != nil && reused && !staleRetried && ctx.Err() == nil && staleConn(err) {
			// A kept-alive connection the server had closed (it
			// restarted, or timed the connection out) before reading the
			// request: net/http retries that only for idempotent
			// methods. The request died with the connection before any
			// answer, which on a kept-alive connection almost always means
			// the server never read it: send it once more.
			staleRetried = true
			attempt--
			continue
		}
		if err != nil {
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
		if fn := c.opts.Auth.OnUnauthorized; fn != nil && attempt < MaxAuthRetries {
			if cause = fn(ctx, resp); cause == nil {
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

// statusError interprets a non-2xx answer to a POST that carried session
// id sid.
func (c *Conn) statusError(resp *http.Response, body, what, sid string) error {
	se := &StatusError{Code: resp.StatusCode, Body: body, Method: what}
	if resp.StatusCode == http.StatusNotFound && sid != "" {
		c.expire(sid)
		return fmt.Errorf("%w: %w", transport.ErrSessionExpired, se)
	}
	return se
}

// expire forgets session sid (if it is still the current one) and stops
// its GET stream, so the next initialize starts afresh (checklist §4B.2).
func (c *Conn) expire(sid string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sessionID != sid {
		return
	}
	c.log.Info("mcp http: session expired", "session", sid)
	c.sessionID = ""
	if c.getCancel != nil {
		c.getCancel()
		c.getCancel = nil
	}
}

// rpcErrorBody returns the JSON-RPC error an error response carries, if any.
func rpcErrorBody(resp *http.Response, body string) *mcp.Error {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
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
func (c *Conn) postOneWay(ctx context.Context, msg *mcp.Message, mi modernInfo, body []byte) error {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel)
	defer stop()
	hdr := c.headers(ctx, msg, mi)
	what := msg.Method
	if what == "" {
		what = "response"
	}
	resp, err := c.do(rctx, http.MethodPost, c.endpoint, body, hdr, what)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return c.statusError(resp, readErrorBody(resp), what, hdr.Get("Mcp-Session-Id"))
	}
	// Drain a little so the connection can be reused, then let it go.
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	if msg.Method == mcp.NotificationInitialized {
		// Wait (briefly) until the GET stream is open, so that what the
		// server pushes right after the handshake is not missed, and a
		// stream the server opens later is not taken for a resumption.
		opened := c.startGET()
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

// runRequest posts one request and reads its answer (the stream goroutine
// of the design note). ready receives the outcome of the POST itself.
func (c *Conn) runRequest(r *request, body []byte, hdr http.Header, ready chan<- error) {
	defer c.wg.Done()
	sid := hdr.Get("Mcp-Session-Id")
	r.session = sid
	resp, err := c.do(r.ctx, http.MethodPost, c.endpoint, body, hdr, r.method)
	if err != nil {
		ready <- err
		r.cancel()
		return
	}
	if resp.StatusCode/100 != 2 {
		eb := readErrorBody(resp)
		code := resp.StatusCode
		legacyProbe := code == http.StatusBadRequest || code == http.StatusNotFound || code == http.StatusMethodNotAllowed
		rpcErr := rpcErrorBody(resp, eb)
		if r.method == mcp.MethodInitialize && legacyProbe && (rpcErr == nil || code != http.StatusBadRequest) {
			// Not a Streamable HTTP server: try the 2024-11-05 HTTP+SSE
			// transport at the same URL (checklist §4C.9, §4D).
			c.log.Debug("mcp http: initialize refused; trying the 2024-11-05 HTTP+SSE transport", "status", code)
			ready <- c.fallbackToOldSSE(r, body, &StatusError{Code: code, Body: eb, Method: r.method})
			return
		}
		if code == http.StatusNotFound && sid != "" {
			ready <- c.statusError(resp, eb, r.method, sid)
			r.cancel()
			return
		}
		if rpcErr != nil {
			// A JSON-RPC error in an error status (400 with -32022, 404
			// with -32601...) is the answer to this request: the engine
			// reads the code.
			ready <- nil
			c.deliver(&mcp.Message{ID: r.id, Error: rpcErr})
			r.cancel()
			return
		}
		ready <- c.statusError(resp, eb, r.method, sid)
		r.cancel()
		return
	}
	if r.method == mcp.MethodInitialize {
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" && validSessionID(sid) {
			c.mu.Lock()
			c.sessionID = sid
			c.mu.Unlock()
		}
	}
	ready <- nil
	defer r.cancel()
	defer resp.Body.Close()
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case ct == "text/event-stream":
		c.readPOSTStream(r, resp.Body)
	case ct == "application/json":
		c.readJSONBody(r, resp.Body)
	default:
		// 202 or an empty 200: the answer will come on another stream
		// (the GET stream, for some servers). Leave r registered.
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

// readJSONBody reads an application/json answer: one message or a batch.
func (c *Conn) readJSONBody(r *request, body io.Reader) {
	b, err := io.ReadAll(io.LimitReader(body, int64(c.maxSize)+1))
	switch {
	case err != nil:
		if c.pending(r) && c.ctx.Err() == nil && r.ctx.Err() == nil {
			c.fail(r, fmt.Errorf("reading the response body: %w (%w)", err, c.lostErr(r)))
		}
		return
	case len(b) > c.maxSize:
		c.fail(r, fmt.Errorf("response body over %d bytes: %w", c.maxSize, transport.ErrMessageTooLarge))
		return
	}
	msgs, err := mcp.DecodeMessages(b)
	if err != nil {
		c.fail(r, fmt.Errorf("%w: response body: %v", transport.ErrProtocol, err))
		return
	}
	for _, m := range msgs {
		c.deliver(m)
	}
	if c.pending(r) {
		c.fail(r, fmt.Errorf("%w: the JSON answer to %s held no response to it", transport.ErrProtocol, r.method))
	}
}

// lostErr is the sentinel for a request whose answer was cut off: on the
// 2026 wire the engine re-sends it (checklist §4C.1).
func (c *Conn) lostErr(r *request) error {
	if r.modern {
		return transport.ErrRequestLost
	}
	return transport.ErrConnectionLost
}

// fail delivers an error for request r, if it still waits.
func (c *Conn) fail(r *request, err error) {
	key := r.id.String()
	c.mu.Lock()
	if c.reqs[key] != r {
		c.mu.Unlock()
		return
	}
	delete(c.reqs, key)
	c.mu.Unlock()
	c.q.push(item{err: &transport.MessageError{ID: r.id, Err: err}})
}

// readPOSTStream reads the SSE answer to r. If it breaks before the
// response: on the 2026 wire the request is lost (the engine re-sends it);
// on the legacy wire it is resumed with GET and Last-Event-ID when the
// server gave event ids (checklist §4B.8).
func (c *Conn) readPOSTStream(r *request, body io.Reader) {
	st := &streamState{}
	stop := func() bool { return !c.pending(r) }
	err := c.readEvents(r.ctx, body, st, stop, nil)
	if !c.pending(r) || r.ctx.Err() != nil {
		return
	}
	if errors.Is(err, transport.ErrMessageTooLarge) {
		c.fail(r, err)
		return
	}
	if r.modern || st.lastID == "" {
		c.fail(r, fmt.Errorf("the response stream ended before the response: %w", c.lostErr(r)))
		return
	}
	c.resume(r, st)
}

// resume re-opens the stream of r with GET + Last-Event-ID until the
// response arrives or the attempts run out.
func (c *Conn) resume(r *request, st *streamState) {
	failures := 0
	for c.pending(r) {
		if !sleep(r.ctx, c.delay(st, failures)) {
			return
		}
		resp, err := c.get(r.ctx, st.lastID, r.session)
		if err != nil {
			failures++
			var se *StatusError
			if r.ctx.Err() != nil {
				return
			}
			if errors.As(err, &se) && (se.Code == http.StatusMethodNotAllowed || se.Code == http.StatusNotFound) || failures > c.opts.Reconnect.Attempts {
				c.fail(r, fmt.Errorf("resuming the response stream: %w (%w)", err, transport.ErrConnectionLost))
				return
			}
			continue
		}
		failures = 0
		err = c.readEvents(r.ctx, resp.Body, st, func() bool { return !c.pending(r) }, nil)
		resp.Body.Close()
		if errors.Is(err, transport.ErrMessageTooLarge) {
			c.fail(r, err)
			return
		}
	}
}

// delay is how long to wait before reconnect attempt number failures+1:
// the server's retry field when it sent one (checklist §4B.8, a MUST since
// 2025-11-25), else exponential backoff.
func (c *Conn) delay(st *streamState, failures int) time.Duration {
	if st.retry > 0 && failures == 0 {
		return st.retry
	}
	d := c.opts.Reconnect.Backoff
	for i := 0; i < failures && d < c.opts.Reconnect.MaxBackoff; i++ {
		d *= 2
	}
	if st.retry > d {
		d = st.retry
	}
	return min(d, c.opts.Reconnect.MaxBackoff)
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// get opens a GET stream (the standalone stream, or a resumption).
func (c *Conn) get(ctx context.Context, lastID, sid string) (*http.Response, error) {
	h := c.baseHeaders(ctx)
	h.Set("Accept", "text/event-stream")
	c.mu.Lock()
	version := c.version
	c.mu.Unlock()
	if sid != "" {
		h.Set("Mcp-Session-Id", sid)
	}
	if version != "" {
		h.Set("Mcp-Protocol-Version", version)
	}
	if lastID != "" {
		h.Set("Last-Event-ID", lastID)
	}
	resp, err := c.do(ctx, http.MethodGet, c.endpoint, nil, h, "GET")
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &StatusError{Code: resp.StatusCode, Body: readErrorBody(resp), Method: "GET"}
	}
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct != "text/event-stream" {
		resp.Body.Close()
		return nil, &StatusError{Code: resp.StatusCode, Body: "Content-Type " + ct + ", not text/event-stream", Method: "GET"}
	}
	return resp, nil
}

// startGET opens the standalone GET stream of a legacy session, after
// notifications/initialized (checklist §4B.7).
// The returned channel is closed once the first GET has been answered (or
// has failed).
func (c *Conn) startGET() <-chan struct{} {
	opened := make(chan struct{})
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.old != nil || c.version == "" {
		close(opened)
		return opened
	}
	if c.getCancel != nil {
		c.getCancel()
	}
	ctx, cancel := context.WithCancel(c.ctx)
	c.getCancel = cancel
	sid := c.sessionID
	c.wg.Add(1)
	go c.runGET(ctx, sid, opened)
	return opened
}

// runGET holds the standalone GET stream: 405 means the server offers
// none (never retried); a drop is re-opened after the server's retry delay
// or with backoff, resuming from the last event id.
func (c *Conn) runGET(ctx context.Context, sid string, opened chan struct{}) {
	defer c.wg.Done()
	var once sync.Once
	signal := func() { once.Do(func() { close(opened) }) }
	defer signal()
	st := &streamState{}
	failures := 0
	for {
		resp, err := c.get(ctx, st.lastID, sid)
		signal()
		if ctx.Err() != nil {
			if err == nil {
				resp.Body.Close()
			}
			return
		}
		if err != nil {
			var se *StatusError
			if errors.As(err, &se) && (se.Code == http.StatusMethodNotAllowed || se.Code == http.StatusNotFound) {
				c.log.Debug("mcp http: no standalone GET stream", "status", se.Code)
				return
			}
			failures++
			if c.opts.Reconnect.Attempts < 0 || failures > c.opts.Reconnect.Attempts {
				c.log.Warn("mcp http: giving up the GET stream", "err", err)
				return
			}
			c.log.Debug("mcp http: GET stream failed; retrying", "err", err, "attempt", failures)
			if !sleep(ctx, c.delay(&streamState{}, failures-1)) {
				return
			}
			continue
		}
		failures = 0
		c.readEvents(ctx, resp.Body, st, nil, nil)
		resp.Body.Close()
		if ctx.Err() != nil || c.opts.Reconnect.Attempts < 0 {
			return
		}
		if !sleep(ctx, c.delay(st, 0)) {
			return
		}
	}
}

// streamState is what survives a reconnect: the last event id and the
// server's retry delay.
type streamState struct {
	lastID string
	retry  time.Duration
}

// readEvents reads one SSE stream to its end (or until stop says the
// stream's purpose is served), delivering its messages.
// onEvent, when set, sees every non-message event first (the 2024-11-05
// endpoint event).
func (c *Conn) readEvents(ctx context.Context, body io.Reader, st *streamState, stop func() bool, onEvent func(event)) error {
	er := newEventReader(body, c.maxSize+4096)
	for {
		ev, err := er.Next()
		if err != nil {
			if errors.Is(err, transport.ErrMessageTooLarge) {
				return fmt.Errorf("an event over %d bytes: %w", c.maxSize, err)
			}
			return err
		}
		if ev.hasID {
			st.lastID = ev.id
		}
		if ev.hasRetry {
			st.retry = ev.retry
		}
		if ev.typ != "" && ev.typ != "message" {
			if onEvent != nil {
				onEvent(ev)
			}
			continue
		}
		if len(bytes.TrimSpace(ev.data)) == 0 {
			continue // a priming event
		}
		msgs, err := mcp.DecodeMessages(ev.data)
		if err != nil {
			c.q.push(item{err: &transport.MessageError{Err: fmt.Errorf("%w: SSE event: %v", transport.ErrProtocol, err)}})
			continue
		}
		for _, m := range msgs {
			c.deliver(m)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if stop != nil && stop() {
			// The response has arrived: the server should end the
			// stream now (§4B.5); do not wait for it to.
			return nil
		}
	}
}

// deliver queues a message for Read, after the bookkeeping the wire needs.
func (c *Conn) deliver(m *mcp.Message) {
	if m.IsResponse() && m.ID.IsValid() {
		key := m.ID.String()
		c.mu.Lock()
		r := c.reqs[key]
		delete(c.reqs, key)
		c.mu.Unlock()
		if r != nil && m.Error == nil {
			switch r.method {
			case mcp.MethodInitialize:
				var res struct {
					ProtocolVersion string `json:"protocolVersion"`
				}
				if json.Unmarshal(m.Result, &res) == nil && res.ProtocolVersion != "" {
					c.mu.Lock()
					if c.old == nil {
						c.version = res.ProtocolVersion
					}
					c.mu.Unlock()
				}
			case mcp.MethodToolsList:
				if r.modern {
					c.mu.Lock()
					m.Result = filterTools(m.Result, c.tools, func(tool string, err error) {
						c.log.Warn("mcp http: dropping a tool with an invalid x-mcp-header", "tool", tool, "err", err)
					})
					c.mu.Unlock()
				}
			}
		}
	}
	c.q.push(item{msg: m})
}

// Close ends the Conn: every stream and POST in flight is cut, a legacy
// session is ended with DELETE (405 ignored), and the goroutines are
// awaited, each step bounded by Options.CloseTimeout. It is idempotent.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	sid := c.sessionID
	version := c.version
	old := c.old
	c.mu.Unlock()
	c.cancel()
	c.q.close()

	if sid != "" && old == nil {
		ctx, cancel := context.WithTimeout(context.Background(), c.opts.CloseTimeout)
		h := c.baseHeaders(ctx)
		h.Set("Mcp-Session-Id", sid)
		if version != "" {
			h.Set("Mcp-Protocol-Version", version)
		}
		resp, err := c.do(ctx, http.MethodDelete, c.endpoint, nil, h, "DELETE")
		if err == nil {
			b := readErrorBody(resp)
			if resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusMethodNotAllowed {
				c.log.Debug("mcp http: DELETE of the session refused", "status", resp.StatusCode, "body", b)
			}
		} else {
			c.log.Debug("mcp http: DELETE of the session failed", "err", err)
		}
		cancel()
	}

	if !waitgroup.WaitTimeout(&c.wg, c.opts.CloseTimeout) {
		c.log.Warn("mcp http: streams still running after the close timeout", "timeout", c.opts.CloseTimeout)
	}
	if c.own != nil {
		c.own.CloseIdleConnections()
	}
	return nil
}

// item is one thing for Read: a message or a per-message error.
type item struct {
	msg *mcp.Message
	err error
}

// queue is an unbounded FIFO between the stream goroutines and Read: a
// stream goroutine never blocks on a slow reader, so one stream cannot stall
// another.
type queue struct {
	mu     sync.Mutex
	items  []item
	final  error // a fatal error, returned once the items are drained
	closed bool
	wake   chan struct{}
}

func (q *queue) init() { q.wake = make(chan struct{}, 1) }

func (q *queue) push(it item) {
	q.mu.Lock()
	if !q.closed {
		q.items = append(q.items, it)
	}
	q.mu.Unlock()
	q.signal()
}

// fail ends the queue with a fatal error (the 2024-11-05 stream is gone).
func (q *queue) fail(err error) {
	q.mu.Lock()
	if q.final == nil {
		q.final = err
	}
	q.mu.Unlock()
	q.signal()
}

func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.items = nil
	q.mu.Unlock()
	q.signal()
}

func (q *queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *queue) pop(ctx, life context.Context) (*mcp.Message, error) {
	for {
		q.mu.Lock()
		switch {
		case q.closed:
			q.mu.Unlock()
			return nil, fmt.Errorf("mcp http: read: %w", transport.ErrClosed)
		case len(q.items) > 0:
			it := q.items[0]
			q.items[0] = item{}
			q.items = q.items[1:]
			more := len(q.items) > 0
			q.mu.Unlock()
			if more {
				q.signal()
			}
			if it.err != nil {
				return nil, it.err
			}
			return it.msg, nil
		case q.final != nil:
			err := q.final
			q.mu.Unlock()
			return nil, err
		}
		q.mu.Unlock()
		select {
		case <-q.wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-life.Done():
			return nil, fmt.Errorf("mcp http: read: %w", transport.ErrClosed)
		}
	}
}
