// Package streamablehttp is the MCP Streamable HTTP transport, in every era:
// the stateless 2026-07-28 wire, the legacy session wire of 2025-03-26,
// 2025-06-18 and 2025-11-25, and the 2024-11-05 HTTP+SSE transport as a
// fallback.
//
// [Dial] returns a [*Conn], a [transport.Conn]; it does not touch the
// network. [transport.Connect] runs the handshake over it, which picks the
// era the server speaks, and returns a [transport.Session], whose methods
// are the MCP operations: [transport.Session.ListTools],
// [transport.Session.CallTool] and the rest.
//
//	conn, err := streamablehttp.Dial(ctx, "https://mcp.example.com/mcp", nil)
//	if err != nil { ... }
//	s, err := transport.Connect(ctx, conn, nil)
//	if err != nil { ... }
//	defer s.Close()
//	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"message":"hi"}`)})
//
// [Options] carry the caller's headers ([Options.Header],
// [Options.HeaderFunc]), the HTTP client, the message cap and the
// authorization seam ([Options.Auth], which the auth package's client plugs
// into). Credentials and session ids stay
// on the origin given to Dial: a redirect elsewhere is a [*RedirectError],
// a 2024-11-05 endpoint elsewhere an [*EndpointOriginError].
//
// The wire knows, the engine acts (DESIGN.md): the Conn sees status codes,
// session ids, broken streams and header rules, and reports them to the
// engine as typed errors ([transport.ErrSessionExpired],
// [transport.ErrRequestLost], [transport.ErrAuthRequired],
// [transport.ErrLegacyWire], [*StatusError]); the engine decides to
// re-initialize, re-send, fall back to the 2024-11-05 wire or give up. In
// the other direction the engine tells the Conn what the protocol
// established (the Conn implements [transport.Informed]): the revision,
// each request's name and arguments, each tool's x-mcp-header parameters,
// and its decision to fall back ([Conn.SwitchWire]). The Conn never parses
// a request's params or a result's body, and never rewrites a result.
package streamablehttp

// Design note.
//
// Streams. Every message the engine writes is its own POST. The answer to a
// request is a stream: a JSON body (one message, or a 2025-03-26 batch) or an
// SSE stream that carries notifications and server requests tied to that
// request and then its response. Each POST is sent by Write on the caller's
// goroutine, and its stream read by one stream goroutine, which hands what
// it reads to the engine (Push) or queues it for Read; streams are per
// request by nature, so this is a goroutine per answer being read, never
// one per message (and a goroutine that has read a stream waits a while for
// the next, which then costs no new goroutine: see startStream). On the
// legacy wire one more goroutine holds the standalone GET stream, and on the
// 2024-11-05 wire one holds the SSE stream that carries every server
// message. Nothing else runs.
//
// Write waits only for the POST's response headers: the status decides
// what happens (202, 200 with a body to read, 404 for an expired session,
// 401/403, an initialize refused by a 2024-11-05 server), so it is reported to the caller of Write, and
// the body is left to the stream's goroutine.
//
// A request's stream lives until its response has been read, and is tied to
// the context the engine wrote the request with (the call's context) until
// then: when the call is abandoned, the stream closes, which on the 2026 wire
// is the cancellation itself (checklist §4C.7), so the Conn drops the
// notifications/cancelled the engine also writes there. Once the response is
// in, the stream is let go of the call's context and read to its end,
// briefly and bounded: net/http reuses a connection only when the body was
// read to EOF before it was closed, and a caller cancels its context the
// moment its call returns.
//
// No bookkeeping of requests. Each stream knows the one request it answers
// and stops when that response has passed; matching responses to callers is
// the engine's job, so the Conn holds no map of requests in flight
// (DESIGN.md rule 1).
//
// Sessions. The Conn latches Mcp-Session-Id from the initialize answer and
// sends it on everything else. A 404 on a message that carried a session id,
// whatever the message was, is reported as transport.ErrSessionExpired, and
// the id is kept: the engine decides, and renews the session (NewSession,
// then initialize, which never carries the old id). Keeping it means every
// message sent before the renewal completes meets the same 404 and joins the
// same renewal, instead of going out with no session and earning a 400.
//
// Redirects. A redirect to another origin (scheme, host or port) is refused
// with *RedirectError: a 307 replays the POST with every header, and the
// caller's credentials, API keys and the session id must never reach a host
// they were not meant for (DESIGN.md rule 6). Same-origin redirects are
// followed. The 2024-11-05 endpoint event is held to the same rule
// (oldsse.go).
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
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tako-mcp/tako/internal/inbox"
	"github.com/tako-mcp/tako/internal/waitgroup"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/transport/httpauth"
)

// DefaultMaxMessageSize is the message cap when Options.MaxMessageSize is
// zero (transport.DefaultMaxMessageSize).
const DefaultMaxMessageSize = transport.DefaultMaxMessageSize

// ownIdleConnsPerHost is how many idle connections the Conn's own transport
// keeps to its server.
const ownIdleConnsPerHost = 64

// ownIdleConnTimeout is how long the Conn's own transport keeps a
// connection no request uses. Node's HTTP server, which the TypeScript
// SDK's servers run on, closes a kept-alive connection idle for 5 s
// (keepAliveTimeout), so a connection kept longer is mostly dead on
// arrival and costs the stale-connection retry of post.go; and an idle
// session kept its calls' connection for http.DefaultTransport's 90 s,
// two net/http goroutines and their buffers (about 15 KB) more than a
// session on a shared client: 5 goroutines and 37 KB per idle session
// in bench/'s sessions suite, against go-sdk's 4 and 25 KB. A session
// that calls more often than this keeps its connection.
const ownIdleConnTimeout = 4 * time.Second

// ownBufferSize is the read and the write buffer of each connection of the
// Conn's own transport, where net/http's default is 4 KB each. A
// connection holds both for as long as it is open, and the standalone GET
// stream's is open for the whole session: 8 KB of an idle session's heap
// at the default, which an MCP message rarely needs. A request's headers
// and a small call fit in 2 KB; a larger body or answer is written and
// read past the buffer in large pieces, as with the default.
const ownBufferSize = 2 << 10

// Options configure a Conn. The zero value works.
type Options struct {
	// HTTPClient sends every request. Its Timeout is ignored (a copy
	// without it is used): a timeout on the whole exchange would cut every
	// long-lived stream. Contexts bound everything instead. Its
	// CheckRedirect, if any, runs after the Conn's own, which refuses a
	// redirect to another origin. Nil means a client of the Conn's own,
	// over RoundTripper when set.
	//
	// Calls run concurrently, each on its own POST: give the client's
	// transport a MaxIdleConnsPerHost of at least the number of calls you
	// run at once (Go's default is 2), or it will keep opening new TCP
	// connections. The Conn's own transport keeps 64.
	HTTPClient *http.Client
	// RoundTripper is used when HTTPClient is nil. Nil means a clone of
	// http.DefaultTransport owned (and closed) by the Conn, which keeps up
	// to 64 idle connections to the server and closes one that no request
	// has used for 4 s, as a Node server would.
	RoundTripper http.RoundTripper

	// Header is added to every request (POST, GET, DELETE).
	Header http.Header
	// HeaderFunc, when set, is called for every request with its context
	// and its result added after Header; it can carry per-call values such
	// as a trace id.
	HeaderFunc func(ctx context.Context) http.Header

	// MaxMessageSize caps one incoming message (a JSON body or one SSE
	// event) in bytes. It is also the Conn's budget for the bytes all its
	// streams have read and not yet turned into messages: past it, a
	// stream waits for the others (see budget.go), so concurrent calls
	// with large answers hold about twice this at most, not this many
	// times over. Zero means DefaultMaxMessageSize.
	MaxMessageSize int

	// Reconnect governs re-opening dropped SSE streams (the standalone GET
	// stream and the resumption of a POST stream).
	Reconnect ReconnectPolicy

	// Auth authorizes every request, and is told of every 401 and 403
	// (the request is then sent again when it says so, at most
	// MaxAuthRetries times): the seam an *auth.Client plugs into, or a
	// httpauth.TokenSource. Nil sends no credentials.
	Auth httpauth.Authorizer

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

// MaxAuthRetries bounds how often one request is re-sent after
// Options.Auth's HandleUnauthorized reports new credentials (a DPoP server
// nonce, then a step-up, can each take one).
const MaxAuthRetries = 3

// Conn is a [transport.Conn] over Streamable HTTP, and a
// [transport.Informed] and [transport.Pusher]: hand it to
// [transport.Connect]. See the package documentation and the design note
// in conn.go.
type Conn struct {
	endpoint *url.URL
	// endpointStr is endpoint as a string, made once: each request is made
	// from one.
	endpointStr string
	client      *http.Client
	own         *http.Transport // closed on Close when the Conn made it
	opts        Options
	log         *slog.Logger
	maxSize     int

	ctx    context.Context // the Conn's life: cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	in     inbox.Inbox    // what the streams read, for Read or (Push) the engine
	budget *budget        // for the bytes every stream has read and not yet delivered
	jobs   chan streamJob // to an idle stream goroutine (startStream)
	// lingers records a server that keeps streams open after their
	// response (see finish).
	lingers atomic.Bool

	mu        sync.Mutex
	closed    bool
	sessionID string
	version   string // what the engine speaks (SetProtocol)
	// sidValue and versionValue are the header values of sessionID and
	// version, shared by every request (see headers).
	sidValue, versionValue []string
	tools                  map[string][]paramHeader // 2026: x-mcp-header parameters by tool
	getCancel              context.CancelFunc       // the standalone GET stream, if running
	old                    *oldSSE                  // set once switched to 2024-11-05 HTTP+SSE
}

var (
	_ transport.Conn     = (*Conn)(nil)
	_ transport.Informed = (*Conn)(nil)
)

// Dial returns a [Conn] for the MCP endpoint at rawURL. It does not touch
// the network: the first Write does, so the handshake's context
// ([transport.Connect]'s) bounds it.
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
	c := &Conn{endpoint: u, endpointStr: u.String(), tools: make(map[string][]paramHeader)}
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
		c.own.IdleConnTimeout = ownIdleConnTimeout
		c.own.ReadBufferSize, c.own.WriteBufferSize = ownBufferSize, ownBufferSize
		if u.Scheme == "http" {
			// HTTP/2 is negotiated only over TLS, and every request of
			// this transport stays on the endpoint's origin (redirects
			// and the HTTP+SSE endpoint event are held to it): set up
			// for http://, the HTTP/2 side was 1.6 KB of each idle
			// session's heap that nothing would ever use.
			var p http.Protocols
			p.SetHTTP1(true)
			c.own.Protocols = &p
		}
		c.client = &http.Client{Transport: c.own}
	}
	c.client.CheckRedirect = sameOrigin(c.client.CheckRedirect)
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
	c.budget = newBudget(c.maxSize)
	c.jobs = make(chan streamJob)
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.in.Init()
	return c, nil
}

// RedirectError is a redirect the Conn refused: to another origin than the
// endpoint's, where the request's credentials, headers and session id must
// not go.
type RedirectError struct {
	From, To string // origins, scheme://host:port
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("mcp http: refusing a redirect from %s to another origin, %s: credentials and session ids stay with their origin", e.From, e.To)
}

// sameOrigin wraps a CheckRedirect: a redirect to another origin is
// refused, others go to next (or Go's default of 10 hops).
func sameOrigin(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if from, to := origin(via[0].URL), origin(req.URL); from != to {
			return &RedirectError{From: from, To: to}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
}

// origin is scheme://host:port, with the scheme's default port made
// explicit so that http://h and http://h:80 compare equal.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return u.Scheme + "://" + u.Hostname() + ":" + port
}

// SessionID returns the legacy session id the server assigned, or "".
func (c *Conn) SessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

// SetProtocol implements transport.Informed: version is sent as
// MCP-Protocol-Version (on the 2026 wire with the other Mcp-* headers).
func (c *Conn) SetProtocol(version string) {
	c.mu.Lock()
	c.version = version
	c.mu.Unlock()
}

// NewSession implements transport.Informed: the engine renews an expired
// legacy session. The old session's GET stream stops; its id is replaced
// when the initialize that follows is answered (initialize never carries
// it).
func (c *Conn) NewSession() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.getCancel != nil {
		c.getCancel()
		c.getCancel = nil
	}
}

// ToolsListed implements transport.Informed: it records each tool's
// x-mcp-header parameters and rejects the tools whose annotations break
// the rules of checklist §4C.4.
func (c *Conn) ToolsListed(tools []mcp.Tool) map[string]error {
	var rejected map[string]error
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range tools {
		t := &tools[i]
		specs, err := toolHeaders(t.InputSchema)
		switch {
		case err != nil:
			if rejected == nil {
				rejected = map[string]error{}
			}
			rejected[t.Name] = err
			delete(c.tools, t.Name)
		case len(specs) > 0:
			c.tools[t.Name] = specs
		default:
			delete(c.tools, t.Name)
		}
	}
	return rejected
}

// Read returns the next message from any of the Conn's streams.
func (c *Conn) Read(ctx context.Context) (*mcp.Message, error) {
	return c.in.Read(ctx)
}

// Push implements transport.Pusher: each stream's goroutine hands what it
// reads to deliver itself, one at a time across streams, with no hand-off
// through Read.
func (c *Conn) Push(deliver func(*mcp.Message, error)) { c.in.Push(deliver) }

// Write sends msg as one POST and waits for the response headers (see the
// design note). A request written with Write rather than WriteRequest
// carries only the headers its envelope gives (no Mcp-Name, no
// Mcp-Param-*). Errors: *StatusError for an unexpected status, *AuthError
// (wrapping transport.ErrAuthRequired) for 401/403 the Auth hooks did not
// resolve, an error wrapping transport.ErrSessionExpired for a 404 on a
// legacy session, one wrapping transport.ErrLegacyWire (and a
// *StatusError) for an initialize refused with 400, 404 or 405, where the
// 2024-11-05 HTTP+SSE transport may answer (SwitchWire), *RedirectError for
// a redirect to another origin, transport.ErrClosed after Close.
func (c *Conn) Write(ctx context.Context, msg *mcp.Message) error {
	return c.WriteRequest(ctx, msg, nil)
}

// WriteRequest implements transport.Informed: Write, with what the engine
// knows of the request for its headers. info may be nil.
func (c *Conn) WriteRequest(ctx context.Context, msg *mcp.Message, info *transport.RequestInfo) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return fmt.Errorf("mcp http: write %s: %w", msg.Method, transport.ErrClosed)
	}
	old, modern := c.old, mcp.IsModernVersion(c.version)
	c.mu.Unlock()
	if modern && msg.Method == mcp.NotificationCancelled {
		// 2026-07-28: closing the response stream is the cancellation
		// (checklist §4C.7); the call's context already closed it, and
		// the wire has no client notifications to post.
		return nil
	}
	body := msg.AppendJSON(nil)
	if old != nil {
		return old.post(ctx, c, msg, body)
	}
	if !msg.IsRequest() {
		return c.postOneWay(ctx, msg, body)
	}
	return c.postRequest(ctx, msg, info, body)
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
	c.in.Close(errReadClosed)

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

var errReadClosed = fmt.Errorf("mcp http: read: %w", transport.ErrClosed)
