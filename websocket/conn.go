// Package websocket is tako's WebSocket transport, both ends of it.
//
// WebSocket is not a transport of the MCP specification (checklist §8C:
// SEP-1288 is an open draft). tako speaks it as the TypeScript SDK 1.x
// (WebSocketClientTransport) and the Python SDK do: the subprotocol is
// "mcp", every text message holds exactly one JSON-RPC message with no
// newline framing and no envelope, there is no session id, and the legacy
// lifecycle applies (initialize, then requests in both directions).
//
// [Dial] returns a client [*Conn], a [transport.Conn]; [transport.Connect]
// runs the handshake over it and returns a [transport.Session], whose
// methods are the MCP operations: [transport.Session.ListTools],
// [transport.Session.CallTool] and the rest.
//
//	conn, err := websocket.Dial(ctx, "wss://mcp.example.com/mcp", nil)
//	if err != nil { ... }
//	s, err := transport.Connect(ctx, conn, nil)
//	if err != nil { ... }
//	defer s.Close()
//	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"message":"hi"}`)})
//
// [Options] carry the upgrade's headers, the TLS configuration and the
// [Keepalive] (ping interval, read limit, closing handshake).
//
// [Handler] is the other end: an [net/http.Handler] that accepts WebSocket
// clients and bridges each one to an MCP server tako can reach (a fresh
// stdio subprocess per client, for instance, through its [Backend]), so
// that any server can be served over WebSocket. It serves the user's
// machine, not the web: web pages of other sites are refused (Host and
// Origin, against DNS rebinding too), a Token keeps out other local
// users, and MaxClients bounds the backends.
package websocket

// Design note.
//
// Goroutines. A Conn runs two: the reader, which reads frames with
// gorilla's ReadMessage and hands each decoded message to Read (or, once
// the engine has asked, to the engine itself: transport.Pusher, through
// the hand-off stdio and Streamable HTTP use too, internal/inbox), and the
// keepalive, which pings the peer. The reader tells the keepalive that the peer is
// alive by storing the time of each frame, not by waking it: a wake per
// frame was a tenth of a client's CPU per call (futex wake-ups of an idle
// thread to run a goroutine that only re-armed a timer). The keepalive is
// woken by a frame only while it waits for a pong.
//
// gorilla allows one reader and one writer at a time; the reader
// goroutine is the only reader, data writes are serialized by a
// one-slot semaphore that a waiting Write can leave when its context ends,
// and control frames (ping, close) go through WriteControl, which gorilla
// allows concurrently with everything else.
//
// Why a reader goroutine rather than reading in Read: gorilla's reads
// cannot be interrupted by a context without poisoning the connection (a
// read deadline that fires is a permanent error), and the reader must keep
// reading control frames (pongs, the peer's close) even while nobody calls
// Read.
//
// Death. The first fatal condition wins and is recorded once: the peer's
// close frame, a network error, a frame past the read limit, or a ping left
// unanswered. The recorded error wraps transport.ErrConnectionLost (and
// transport.ErrMessageTooLarge for the read limit); every later Read and
// Write returns it.
//
// Close. Close is the WebSocket closing handshake, bounded: it fails pending
// Reads and Writes with ErrClosed at once, sends a close frame, waits up to
// CloseTimeout for the peer's close frame (the reader sees it), then closes
// the TCP connection and waits for both goroutines to end.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/tako-mcp/tako/internal/inbox"
	"github.com/tako-mcp/tako/internal/writelock"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/transport/httpauth"
)

// Subprotocol is the WebSocket subprotocol MCP clients and servers agree
// on (Sec-WebSocket-Protocol: mcp), as the TypeScript and Python SDKs use it.
const Subprotocol = "mcp"

// Defaults for the zero values of Options and Handler.
const (
	// DefaultMaxMessageSize caps one incoming message, as every tako
	// transport's default does (transport.DefaultMaxMessageSize).
	DefaultMaxMessageSize = transport.DefaultMaxMessageSize
	// DefaultPingInterval is how often a Conn pings a quiet peer.
	DefaultPingInterval = 30 * time.Second
	// DefaultPongTimeout is how long a ping may go unanswered before the
	// peer is declared dead.
	DefaultPongTimeout = 15 * time.Second
	// DefaultCloseTimeout bounds the closing handshake.
	DefaultCloseTimeout = 2 * time.Second
)

// maxKeptBuffer is the largest write buffer a Conn keeps between writes;
// a larger one (after a huge message) is dropped so it can be collected.
const maxKeptBuffer = 1 << 20

// Keepalive configures the ping/pong keepalive and the closing handshake of
// a Conn, on either end.
type Keepalive struct {
	// MaxMessageSize caps one incoming message in bytes. A message past it
	// ends the connection (gorilla sends close code 1009, "message too
	// big") with an error wrapping transport.ErrMessageTooLarge. Zero means
	// DefaultMaxMessageSize; negative means no limit.
	MaxMessageSize int

	// PingInterval is how long the connection may stay without a ping
	// from us; PongTimeout is how long a ping may wait for its pong (any
	// frame from the peer counts as an answer). A peer that does not answer
	// in time is declared dead: the connection ends with an error wrapping
	// transport.ErrConnectionLost, so a dead peer is found within
	// PingInterval+PongTimeout. Zero means DefaultPingInterval and
	// DefaultPongTimeout; a negative PingInterval turns the keepalive off.
	PingInterval, PongTimeout time.Duration

	// CloseTimeout bounds the closing handshake: how long Close waits for
	// the peer's close frame before it closes the TCP connection. Zero
	// means DefaultCloseTimeout.
	CloseTimeout time.Duration
}

func (k Keepalive) withDefaults() Keepalive {
	if k.MaxMessageSize == 0 {
		k.MaxMessageSize = DefaultMaxMessageSize
	}
	if k.PingInterval == 0 {
		k.PingInterval = DefaultPingInterval
	}
	if k.PongTimeout <= 0 {
		k.PongTimeout = DefaultPongTimeout
	}
	if k.CloseTimeout <= 0 {
		k.CloseTimeout = DefaultCloseTimeout
	}
	return k
}

// Options configure Dial. The zero value (or nil) works.
type Options struct {
	// Header is sent with the opening handshake, e.g. Authorization.
	// Sec-WebSocket-Protocol is set by Dial and must not be in it.
	Header http.Header

	// TLSClientConfig is used for wss:// URLs; nil means the defaults.
	TLSClientConfig *tls.Config

	// Proxy picks the proxy for a request; nil means no proxy. Use
	// http.ProxyFromEnvironment to honour HTTPS_PROXY and NO_PROXY.
	Proxy func(*http.Request) (*url.URL, error)

	// NetDialContext, if set, makes the TCP connection (to the server or
	// the proxy); nil means a net.Dialer.
	NetDialContext func(ctx context.Context, network, addr string) (net.Conn, error)

	// Auth authorizes the opening handshake, an HTTP GET of the URL's
	// http(s) twin, and is told when the server refuses it with 401 or
	// 403: when it reports new credentials (a refresh, a login, a DPoP
	// nonce) the handshake is tried again, at most MaxAuthRetries times.
	// An *auth.Client plugs in here as it does into Streamable HTTP. Nil
	// sends what Header holds, and nothing else.
	Auth httpauth.Authorizer

	// Keepalive sets the read limit, the ping/pong keepalive and the close
	// bound.
	Keepalive

	// Logger receives diagnostics at Debug; nil discards them.
	Logger *slog.Logger
}

// HandshakeError reports an opening handshake the server refused: it
// answered with an HTTP status instead of switching protocols. Body holds
// the start of its answer, which usually says why.
type HandshakeError struct {
	URL        string
	StatusCode int
	Body       string
	// AuthCause is why Options.Auth could not answer a 401 or 403 (no
	// login, a refused refresh), when it was asked; errors.Is and
	// errors.As reach it, and a 401 or 403 wraps transport.ErrAuthRequired.
	AuthCause error
}

func (e *HandshakeError) Error() string {
	msg := fmt.Sprintf("websocket: %s refused the handshake: HTTP %d", e.URL, e.StatusCode)
	if e.Body != "" {
		msg += ": " + e.Body
	}
	if e.AuthCause != nil {
		msg += ": " + e.AuthCause.Error()
	}
	return msg
}

// Unwrap makes errors.Is(err, transport.ErrAuthRequired) true for 401 and
// 403, so callers can ask for credentials the same way on every transport,
// and reaches the AuthCause.
func (e *HandshakeError) Unwrap() []error {
	if e.StatusCode != http.StatusUnauthorized && e.StatusCode != http.StatusForbidden {
		return nil
	}
	return []error{transport.ErrAuthRequired, e.AuthCause}
}

// Dial opens a WebSocket connection to an MCP server at rawURL (ws:// or
// wss://) with the "mcp" subprotocol, and returns it as a [Conn]. ctx bounds
// the opening handshake only. It fails if the server does not select the
// "mcp" subprotocol, since a server that does not know it may frame
// messages differently.
func Dial(ctx context.Context, rawURL string, opts *Options) (*Conn, error) {
	if opts == nil {
		opts = &Options{}
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("websocket: bad URL: %w", err)
	}
	if u.Scheme != "ws" && u.Scheme != "wss" {
		return nil, fmt.Errorf("websocket: URL %q: scheme must be ws or wss", redact(u))
	}
	header := opts.Header.Clone()
	if header == nil {
		header = http.Header{}
	}
	header.Del("Sec-WebSocket-Protocol")
	d := &websocket.Dialer{
		Proxy:           opts.Proxy,
		TLSClientConfig: opts.TLSClientConfig,
		NetDialContext:  cuttableDial(opts.NetDialContext),
		Subprotocols:    []string{Subprotocol},
	}
	ws, resp, err := dialAuthorized(ctx, d, u, header, opts.Auth)
	if err != nil {
		if errors.Is(err, websocket.ErrBadHandshake) && resp != nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			resp.Body.Close()
			he := &HandshakeError{URL: redact(u), StatusCode: resp.StatusCode, Body: strings.TrimSpace(string(body))}
			if cause, ok := authCause(err); ok {
				he.AuthCause = cause
			}
			return nil, he
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("websocket: dial %s: %w", redact(u), ctxErr)
		}
		// gorilla bounds the handshake by the context's deadline through
		// the socket's deadline, which may fire a moment before the
		// context's own timer: report it as the context's expiry.
		var ne net.Error
		if _, ok := ctx.Deadline(); ok && errors.As(err, &ne) && ne.Timeout() {
			return nil, fmt.Errorf("websocket: dial %s: %w (%v)", redact(u), context.DeadlineExceeded, err)
		}
		return nil, fmt.Errorf("websocket: dial %s: %w", redact(u), err)
	}
	if got := ws.Subprotocol(); got != Subprotocol {
		ws.Close()
		if got == "" {
			return nil, fmt.Errorf("websocket: %s did not select the %q subprotocol (it selected none): %w", redact(u), Subprotocol, transport.ErrProtocol)
		}
		return nil, fmt.Errorf("websocket: %s selected subprotocol %q, not %q: %w", redact(u), got, Subprotocol, transport.ErrProtocol)
	}
	return newConn(ws, opts.Keepalive, opts.Logger), nil
}

// redact drops the user information and the query values from a URL for
// error messages.
func redact(u *url.URL) string {
	if u.User == nil && u.RawQuery == "" {
		return u.String()
	}
	c := *u
	c.User = nil
	// A query may carry a token (tako bridge --token prints its URL with
	// ?token=): keep the names, not the values.
	if q := c.Query(); len(q) > 0 {
		for k := range q {
			q[k] = []string{"REDACTED"}
		}
		c.RawQuery = q.Encode()
	}
	return c.String()
}

// Conn is one WebSocket connection carrying MCP messages, one per text
// frame. It implements [transport.Conn]; see that interface for the
// concurrency rules. [Dial] returns the client end, for [transport.Connect];
// [Handler] makes the server end of each connection it accepts.
type Conn struct {
	ws  *websocket.Conn
	cc  *cutConn // under ws, to cut a write short; nil if not found
	ka  Keepalive
	log *slog.Logger

	// in takes what the reader reads, for Read or, after Push, for the
	// engine (internal/inbox).
	in inbox.Inbox

	// Keepalive. epoch is when the Conn was made; lastFrame is when the
	// last frame from the peer arrived, in nanoseconds since epoch on the
	// monotonic clock. While awaitingPong is set, the next frame also
	// wakes the keepalive through alive (1 slot).
	epoch        time.Time
	lastFrame    atomic.Int64
	awaitingPong atomic.Bool
	alive        chan struct{}
	// handing is true while the reader waits for Read to take a message.
	handing atomic.Bool

	wlock writelock.Lock // taken by each data write
	wbuf  []byte         // guarded by wlock

	mu       sync.Mutex
	err      error         // the first fatal error; set once
	dead     chan struct{} // closed when err is set
	closing  chan struct{} // closed when Close starts
	readDone chan struct{} // closed when the reader ends
	pingDone chan struct{} // closed when the keepalive ends

	diedBeforeClose bool // guarded by mu; set when Close starts

	closeOnce sync.Once
}

func newConn(ws *websocket.Conn, ka Keepalive, logger *slog.Logger) *Conn {
	ka = ka.withDefaults()
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &Conn{
		ws:       ws,
		cc:       cutConnOf(ws),
		ka:       ka,
		log:      logger,
		epoch:    time.Now(),
		alive:    make(chan struct{}, 1),
		wlock:    writelock.New(),
		dead:     make(chan struct{}),
		closing:  make(chan struct{}),
		readDone: make(chan struct{}),
		pingDone: make(chan struct{}),
	}
	c.in.Init()
	if ka.MaxMessageSize > 0 {
		ws.SetReadLimit(int64(ka.MaxMessageSize))
	}
	ws.SetPongHandler(func(string) error { c.sawFrame(); return nil })
	// The default ping handler answers with a pong; wrap it to note that
	// the peer is alive.
	ping := ws.PingHandler()
	ws.SetPingHandler(func(data string) error { c.sawFrame(); return ping(data) })
	go c.readLoop()
	if ka.PingInterval > 0 {
		go c.keepalive()
	} else {
		close(c.pingDone)
	}
	return c
}

// sawFrame records that the peer is alive, and wakes the keepalive if it
// waits for a pong.
func (c *Conn) sawFrame() {
	c.lastFrame.Store(int64(time.Since(c.epoch)))
	if c.awaitingPong.Load() && c.awaitingPong.CompareAndSwap(true, false) {
		select {
		case c.alive <- struct{}{}:
		default:
		}
	}
}

// sinceFrame is how long ago the last frame from the peer arrived (or the
// Conn was made, if none has).
func (c *Conn) sinceFrame() time.Duration {
	return time.Since(c.epoch) - time.Duration(c.lastFrame.Load())
}

// fail records the first fatal error and closes the TCP connection, which
// ends the reader and any write in progress.
func (c *Conn) fail(err error) {
	c.mu.Lock()
	first := c.err == nil
	if first {
		c.err = err
		close(c.dead)
	}
	c.mu.Unlock()
	if first {
		c.log.Debug("websocket: connection ended", "err", err)
		c.in.Stop(c.finalErr())
		c.ws.NetConn().Close()
	}
}

// finalErr is what Read and Write return once the connection is over:
// after Close, ErrClosed, unless the peer had died before Close began, which
// is the more useful story.
func (c *Conn) finalErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.closing:
		if c.diedBeforeClose {
			return c.err
		}
		return fmt.Errorf("websocket: %w", transport.ErrClosed)
	default:
	}
	return c.err
}

func (c *Conn) readLoop() {
	defer close(c.readDone)
	// The reader always ends once the connection is over (every end closes
	// the socket under it), and gives the final error as it ends.
	defer func() { c.in.End(c.finalErr()) }()
	for {
		typ, data, err := c.ws.ReadMessage()
		if err != nil {
			c.fail(c.readErr(err))
			return
		}
		c.sawFrame()
		if typ != websocket.TextMessage {
			// The TypeScript and Python SDKs send text frames only; a
			// binary frame is one bad message, not a broken connection.
			if !c.give(nil, &transport.MessageError{Err: errors.New("websocket: binary frame where a text frame with one JSON-RPC message was expected")}) {
				return
			}
			continue
		}
		msg, err := mcp.DecodeMessage(data)
		if err != nil {
			// A response gone wrong fails its call at once (mcp.ResponseID
			// recovers its id from bytes that did not decode).
			id, _ := mcp.ResponseID(data)
			err = &transport.MessageError{ID: id, Err: fmt.Errorf("%w: %w", transport.ErrProtocol, err)}
		}
		if !c.give(msg, err) {
			return
		}
	}
}

// give hands one result to Read, or to the engine after Push. It reports
// false when the connection is dead; after Close the result is dropped and
// the reader goes on, so that the peer's close frame is seen.
func (c *Conn) give(msg *mcp.Message, err error) bool {
	c.handing.Store(true)
	c.in.Give(msg, err)
	c.handing.Store(false)
	select {
	case <-c.dead:
		return false
	default:
		return true
	}
}

// Push implements transport.Pusher: the reader hands each message to
// deliver itself, with no hand-off through Read.
func (c *Conn) Push(deliver func(*mcp.Message, error)) { c.in.Push(deliver) }

// readErr turns an error from gorilla's reader into the Conn's final error.
func (c *Conn) readErr(err error) error {
	select {
	case <-c.closing:
		return fmt.Errorf("websocket: %w", transport.ErrClosed)
	default:
	}
	var ce *websocket.CloseError
	switch {
	case errors.Is(err, websocket.ErrReadLimit):
		return fmt.Errorf("websocket: a message exceeded the read limit of %d bytes (%w); the connection was closed: %w",
			c.ka.MaxMessageSize, transport.ErrMessageTooLarge, transport.ErrConnectionLost)
	case errors.As(err, &ce):
		return fmt.Errorf("websocket: the peer closed the connection (code %d%s): %w", ce.Code, closeText(ce.Text), transport.ErrConnectionLost)
	}
	// A keepalive failure closes the TCP connection, so the reader sees a
	// network error; fail keeps the keepalive's error, which came first.
	return fmt.Errorf("websocket: %v: %w", err, transport.ErrConnectionLost)
}

func closeText(s string) string {
	if s == "" {
		return ""
	}
	return ", " + s
}

// keepalive pings the peer once PingInterval has passed without a frame
// from it, and declares it dead if no frame arrives within PongTimeout of
// the ping.
func (c *Conn) keepalive() {
	defer close(c.pingDone)
	t := time.NewTimer(c.ka.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-c.closing:
			return
		case <-c.dead:
			return
		}
		if quiet := c.sinceFrame(); quiet < c.ka.PingInterval {
			// Traffic proves the peer alive: wait out the rest of the
			// quiet period from its last frame.
			t.Reset(c.ka.PingInterval - quiet)
			continue
		}
		// Only frames that arrive after this point answer the ping.
		select {
		case <-c.alive:
		default:
		}
		c.awaitingPong.Store(true)
		deadline := time.Now().Add(c.ka.PongTimeout)
		if err := c.ws.WriteControl(websocket.PingMessage, nil, deadline); err != nil {
			c.fail(fmt.Errorf("websocket: ping: %v: %w", err, transport.ErrConnectionLost))
			return
		}
		t.Reset(c.ka.PongTimeout)
		select {
		case <-c.alive:
			resetTimer(t, c.ka.PingInterval)
		case <-t.C:
			if !c.awaitingPong.CompareAndSwap(true, false) {
				// A frame arrived just as the timer fired.
				t.Reset(c.ka.PingInterval)
				continue
			}
			if c.handing.Load() {
				// The reader is waiting for Read to take a message, so
				// the pong may be unread in the socket: back-pressure from
				// our side, not a dead peer. Ask again later.
				t.Reset(c.ka.PingInterval)
				continue
			}
			c.fail(fmt.Errorf("websocket: the peer did not answer a ping within %v: %w", c.ka.PongTimeout, transport.ErrConnectionLost))
			return
		case <-c.closing:
			return
		case <-c.dead:
			return
		}
	}
}

func resetTimer(t *time.Timer, d time.Duration) {
	t.Stop()
	t.Reset(d)
}

// Read returns the next message from the peer. It blocks until one
// arrives, ctx is done, or the connection ends. A text frame that does not
// hold one JSON-RPC message gives a *transport.MessageError and the
// connection goes on.
func (c *Conn) Read(ctx context.Context) (*mcp.Message, error) { return c.in.Read(ctx) }

// Write sends msg as one text frame. Concurrent writes are serialized; a
// Write waiting for its turn gives up when ctx ends. A Write whose context
// ends while its frame is on the wire ends the connection, since a frame
// cut short leaves the stream unusable.
func (c *Conn) Write(ctx context.Context, msg *mcp.Message) error {
	if err := c.wlock.Acquire(ctx, c.closing, c.dead); err != nil {
		if err == writelock.ErrClosing {
			return c.finalErr()
		}
		return err
	}
	defer c.wlock.Release()
	select {
	case <-c.dead:
		return c.finalErr()
	case <-c.closing:
		return c.finalErr()
	default:
	}

	c.wbuf = msg.AppendJSON(c.wbuf[:0])
	data := c.wbuf
	if cap(c.wbuf) > maxKeptBuffer {
		c.wbuf = nil
	}
	deadline, _ := ctx.Deadline()
	c.ws.SetWriteDeadline(deadline)
	var err error
	if ctx.Done() == nil {
		err = c.ws.WriteMessage(websocket.TextMessage, data)
	} else {
		err = c.writeCancellable(ctx, data)
	}
	if err == nil {
		return nil
	}
	select {
	case <-c.closing:
		return c.finalErr()
	default:
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		c.fail(fmt.Errorf("websocket: a write was interrupted by its context (%v): %w", ctxErr, transport.ErrConnectionLost))
		return ctxErr
	}
	if errors.Is(err, websocket.ErrCloseSent) {
		// The reader has just answered the peer's close frame and is about
		// to record why the peer closed (its code and reason), which says
		// more than "close sent": wait for that, a moment at most.
		t := time.NewTimer(c.ka.CloseTimeout)
		select {
		case <-c.dead:
		case <-t.C:
		}
		t.Stop()
	}
	c.fail(fmt.Errorf("websocket: write: %v: %w", err, transport.ErrConnectionLost))
	return c.finalErr()
}

// writeCancellable writes one message and lets ctx's cancellation cut it
// short through the connection's write deadline (cutconn.go). The lock and
// flags make sure a cancellation that races with the end of the write
// cannot cut the connection after writeCancellable returns, and that a cut
// that came after the last byte, when the message is whole, is lifted.
func (c *Conn) writeCancellable(ctx context.Context, data []byte) error {
	var (
		mu        sync.Mutex
		done, cut bool
	)
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return
		}
		cut = true
		if c.cc != nil {
			c.cc.setCut(true)
		} else {
			c.ws.NetConn().SetWriteDeadline(past)
		}
	})
	err := c.ws.WriteMessage(websocket.TextMessage, data)
	if !stop() {
		mu.Lock()
		done = true
		if cut && err == nil && c.cc != nil {
			c.cc.setCut(false)
		}
		mu.Unlock()
	}
	return err
}

// Close runs the closing handshake, bounded by Keepalive.CloseTimeout,
// then closes the TCP connection and waits for the Conn's goroutines. It
// fails pending Reads and Writes with an error wrapping transport.ErrClosed
// at once. Close is idempotent and safe to call concurrently; it returns
// nil.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.diedBeforeClose = c.err != nil
		c.mu.Unlock()
		close(c.closing)
		c.in.Stop(c.finalErr())
		timer := time.NewTimer(c.ka.CloseTimeout)
		defer timer.Stop()
		select {
		case <-c.dead:
		default:
			msg := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")
			if err := c.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(c.ka.CloseTimeout)); err == nil {
				// The peer answers with its own close frame, which ends
				// the reader.
				select {
				case <-c.readDone:
				case <-timer.C:
				}
			}
		}
		c.fail(fmt.Errorf("websocket: %w", transport.ErrClosed))
		<-c.readDone
		<-c.pingDone
	})
	return nil
}

// Subprotocol returns the subprotocol the two ends agreed on ("mcp").
func (c *Conn) Subprotocol() string { return c.ws.Subprotocol() }

// RemoteAddr returns the peer's network address.
func (c *Conn) RemoteAddr() net.Addr { return c.ws.RemoteAddr() }

var _ transport.Conn = (*Conn)(nil)
