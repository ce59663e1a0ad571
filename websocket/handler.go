package websocket

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/tako-mcp/tako/internal/localguard"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// Backend connects to the MCP server one WebSocket client is bridged to.
// Handler calls it once per client, after the WebSocket upgrade has
// succeeded: a request that is refused, or whose handshake fails, starts
// nothing. A backend that cannot start closes the new connection at once
// with close code 1011 (internal error) and a reason the client reports.
// ctx lives as long as the bridge: it is cancelled when the bridge ends, so
// a backend may tie goroutines to it. A typical Backend starts a fresh
// stdio server:
//
//	func(ctx context.Context) (transport.Conn, error) {
//		conn, err := stdio.Start(ctx, &stdio.Options{Command: "my-server"})
//		if err != nil {
//			return nil, err
//		}
//		return conn, nil
//	}
//
// Sharing one backend among clients is not a matter of returning the same
// Conn twice: JSON-RPC ids chosen by different clients would collide, and
// each legacy client runs its own initialize. To share a server, put a
// multiplexer in front of it that rewrites ids per client and answers
// initialize itself; Handler deliberately stays a plain pipe, so that what
// a client sees is exactly what its server says.
type Backend func(ctx context.Context) (transport.Conn, error)

// DefaultMaxClients is the number of clients a Handler bridges at once
// when MaxClients is zero: each one is a backend (for a stdio backend, a
// process and an OS thread that waits for it), so the bound is what a
// stranger or a runaway script can make the machine run. It leaves room
// for a load test of a hundred clients.
const DefaultMaxClients = 128

// Handler is an http.Handler that accepts MCP clients over WebSocket and
// bridges each one to a backend MCP server of its own. Messages pass
// through unchanged in both directions, one per text frame; when either
// side ends, the other is closed (for a stdio backend: the process group
// is ended).
//
// A Handler serves the user's machine by default, not the web: it checks
// every request's Host, Origin and (if set) token before anything else, so
// that no web page the user visits can drive the backend through the
// browser, by a cross-origin WebSocket or by DNS rebinding (a page whose
// own name now resolves to 127.0.0.1 sends that name as Host and Origin).
// A request is refused (HTTP 403, or 401 for the token) unless:
//
//   - its Host is a loopback name (localhost, 127.0.0.1, [::1]; with or
//     without the port), the IP address the connection arrived at, or one
//     of AllowedHosts;
//   - its Origin, if it has one (every browser sends it, programs usually
//     do not), is the request's own origin (scheme://Host) or one of
//     AllowedOrigins; "null" is refused;
//   - it carries Token, when set, as "Authorization: Bearer TOKEN" or as
//     the query parameter token=TOKEN (browsers cannot set headers on a
//     WebSocket).
//
// Serving on a name other than localhost (behind a reverse proxy, on a LAN
// name) therefore needs that name in AllowedHosts; Token is what keeps out
// the machine's other users, whom Host and Origin do not stop.
//
// The zero value with a Backend works. Fields must not change once the
// Handler serves. Close ends every bridge; since http.Server.Shutdown does
// not wait for hijacked connections, call Close after Shutdown.
type Handler struct {
	// Backend connects each client to its server. Required.
	Backend Backend

	// AllowedHosts lists the names accepted in Host besides the loopback
	// names and the address the connection arrived at: "mybox.lan" (any
	// port) or "mybox.lan:8765" (that port only), compared without regard
	// to case. "*" accepts any Host, for a Handler behind a proxy that
	// checks it.
	AllowedHosts []string

	// AllowedOrigins lists the Origin header values accepted besides the
	// request's own origin (scheme://host[:port], compared without regard
	// to case), such as a web client served from another port; "*" accepts
	// any, leaving web pages to the Token.
	AllowedOrigins []string

	// Token, when set, is required of every client (see Handler).
	Token string

	// MaxClients bounds the clients bridged at once, counting those whose
	// backend is still shutting down. Past it a client is refused with
	// HTTP 503 before anything starts, and the refusal is logged. Zero
	// means DefaultMaxClients.
	MaxClients int

	// Keepalive sets the read limit for clients' messages, the ping/pong
	// keepalive that finds dead clients (and so ends their backends), and
	// the bound on the closing handshake.
	Keepalive

	// Logger receives a line per bridge at Debug, and refused clients and
	// backend failures at Warn; nil discards them.
	Logger *slog.Logger

	mu      sync.Mutex
	closed  bool
	bridges map[*bridge]struct{}
	wg      sync.WaitGroup
}

type bridge struct {
	cancel context.CancelFunc
}

func (h *Handler) logger() *slog.Logger {
	if h.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return h.Logger
}

// ServeHTTP checks the request (see Handler), upgrades it to a WebSocket
// connection with the "mcp" subprotocol, starts a new backend and bridges
// the two until either side ends.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	log := h.logger()
	guard := localguard.Guard{AllowHosts: h.AllowedHosts, AllowOrigins: h.AllowedOrigins, Token: h.Token}
	if err := guard.Check(r); err != nil {
		log.Warn("websocket: refused a client", "remote", r.RemoteAddr, "err", err)
		localguard.Refuse(w, err)
		return
	}
	if !websocket.IsWebSocketUpgrade(r) {
		w.Header().Set("Upgrade", "websocket")
		http.Error(w, "this endpoint speaks MCP over WebSocket: open a WebSocket connection with subprotocol \"mcp\"", http.StatusUpgradeRequired)
		return
	}
	if !slices.Contains(websocket.Subprotocols(r), Subprotocol) {
		http.Error(w, "the WebSocket subprotocol \"mcp\" is required (Sec-WebSocket-Protocol: mcp)", http.StatusBadRequest)
		return
	}
	if h.Backend == nil {
		http.Error(w, "no backend configured", http.StatusInternalServerError)
		return
	}

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	b := &bridge{cancel: cancel}
	switch err := h.add(b); {
	case errors.Is(err, errShuttingDown):
		http.Error(w, "the server is shutting down", http.StatusServiceUnavailable)
		return
	case err != nil:
		log.Warn("websocket: refused a client", "remote", r.RemoteAddr, "err", err)
		w.Header().Set("Retry-After", "1")
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	defer h.remove(b)

	up := websocket.Upgrader{
		Subprotocols: []string{Subprotocol},
		// Checked above, with the Handler's rules.
		CheckOrigin: func(*http.Request) bool { return true },
	}
	ws, err := up.Upgrade(cuttableWriter{w}, r, nil)
	if err != nil {
		// Upgrade has answered the client, and nothing was started.
		log.Debug("websocket: upgrade failed", "remote", r.RemoteAddr, "err", err)
		return
	}
	backend, err := h.Backend(ctx)
	if err == nil && backend == nil {
		err = errors.New("websocket: Backend returned neither a Conn nor an error")
	}
	if err != nil {
		log.Warn("websocket: backend failed to start", "remote", r.RemoteAddr, "err", err)
		closeAtOnce(ws, websocket.CloseInternalServerErr, "the MCP server could not be started", h.Keepalive.withDefaults().CloseTimeout)
		return
	}
	client := newConn(ws, h.Keepalive, log)
	log.Debug("websocket: bridge started", "remote", r.RemoteAddr)
	err = pipe(ctx, client, backend, log)
	log.Debug("websocket: bridge ended", "remote", r.RemoteAddr, "err", err)
}

// closeAtOnce ends a connection that has just been upgraded: a close frame
// with code and reason, then the peer's close frame awaited (whatever the
// peer sent first is dropped) for at most timeout, so that the client reads
// the reason rather than a reset connection.
func closeAtOnce(ws *websocket.Conn, code int, reason string, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	if err := ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), deadline); err == nil {
		_ = ws.SetReadDeadline(deadline)
		for {
			if _, _, err := ws.NextReader(); err != nil {
				break
			}
		}
	}
	ws.Close()
}

// pipe copies messages both ways until one side ends or ctx is done, then
// closes both: the client first, so it learns at once, then the backend,
// whose Close may take its grace periods.
func pipe(ctx context.Context, client, backend transport.Conn, log *slog.Logger) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		errc <- copyMessages(ctx, backend, client, log, false)
		cancel()
	}()
	err := copyMessages(ctx, client, backend, log, true)
	cancel()
	client.Close()
	backend.Close()
	// The side that ended first says why; the other merely saw the cancel.
	if err2 := <-errc; errors.Is(err, context.Canceled) {
		err = err2
	}
	return err
}

// copyMessages reads from src and writes to dst until either fails. A bad
// message from the backend that belongs to a request is answered with a
// JSON-RPC error, so the client's call fails instead of hanging; other bad
// messages are logged and dropped.
//
// The client's requests are written to the backend each on a goroutine of
// its own, at most maxInFlight at once: a backend's Write may return only
// once the server has begun to answer (Streamable HTTP waits for the
// response's headers, and a server that answers a long tool call with one
// JSON body sends them at the end), and one slow request must not hold up
// the client's others, its notifications (a cancellation) or its answers.
func copyMessages(ctx context.Context, dst, src transport.Conn, log *slog.Logger, fromBackend bool) error {
	var (
		wg     sync.WaitGroup
		failed = make(chan error, 1)
		slots  = make(chan struct{}, maxInFlight)
	)
	defer wg.Wait()
	// Registered after wg.Wait, so run before it: writes still waiting
	// for an answer end with the copy.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for {
		select {
		case err := <-failed:
			return err
		default:
		}
		m, err := src.Read(ctx)
		if err != nil {
			var me *transport.MessageError
			if !errors.As(err, &me) {
				return err
			}
			log.Warn("websocket: bridge dropped a bad message", "from_backend", fromBackend, "err", err)
			if !fromBackend || !me.ID.IsValid() {
				continue
			}
			m = &mcp.Message{ID: me.ID, Error: &mcp.Error{
				Code:    mcp.CodeInternalError,
				Message: "the bridged server's answer could not be delivered: " + me.Err.Error(),
			}}
		}
		// initialize is written in turn: what follows it (the
		// initialized notification, the first requests) needs the
		// session it opens.
		if fromBackend || !m.IsRequest() || m.Method == mcp.MethodInitialize {
			if err := dst.Write(ctx, m); err != nil {
				return err
			}
			continue
		}
		select {
		case slots <- struct{}{}:
		case err := <-failed:
			return err
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			if err := dst.Write(ctx, m); err != nil {
				select {
				case failed <- err:
				default:
				}
			}
		}()
	}
}

// maxInFlight bounds the client's requests being written to its backend
// at once (copyMessages); past it, the bridge reads no more of the
// client's messages until one is written.
const maxInFlight = 32

// errShuttingDown is add's refusal once Close has begun.
var errShuttingDown = errors.New("websocket: the Handler is closed")

// add counts b among the bridges, or refuses it: past MaxClients, or once
// Close has begun.
func (h *Handler) add(b *bridge) error {
	limit := h.MaxClients
	if limit <= 0 {
		limit = DefaultMaxClients
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return errShuttingDown
	}
	if len(h.bridges) >= limit {
		return fmt.Errorf("too many clients: this server bridges at most %d at once", limit)
	}
	if h.bridges == nil {
		h.bridges = make(map[*bridge]struct{})
	}
	h.bridges[b] = struct{}{}
	h.wg.Add(1)
	return nil
}

func (h *Handler) remove(b *bridge) {
	h.mu.Lock()
	delete(h.bridges, b)
	h.mu.Unlock()
	h.wg.Done()
}

// Close refuses new clients, ends every bridge (closing both its client and
// its backend) and waits until they are all gone. It is idempotent.
func (h *Handler) Close() error {
	h.mu.Lock()
	h.closed = true
	for b := range h.bridges {
		b.cancel()
	}
	h.mu.Unlock()
	h.wg.Wait()
	return nil
}
