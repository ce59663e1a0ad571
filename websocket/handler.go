package websocket

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/gorilla/websocket"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// Backend connects to the MCP server one WebSocket client is bridged to.
// Handler calls it once per client, before it accepts the WebSocket
// upgrade, so a backend that cannot start gives the client an HTTP 502
// rather than a connection that closes at once. ctx lives as long as the
// bridge: it is cancelled when the bridge ends, so a backend may tie
// goroutines to it. A typical Backend starts a fresh stdio server:
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

// Handler is an http.Handler that accepts MCP clients over WebSocket and
// bridges each one to a backend MCP server of its own. Messages pass
// through unchanged in both directions, one per text frame; when either
// side ends, the other is closed (for a stdio backend: the process group
// is ended).
//
// The zero value with a Backend works. Fields must not change once the
// Handler serves. Close ends every bridge; since http.Server.Shutdown does
// not wait for hijacked connections, call Close after Shutdown.
type Handler struct {
	// Backend connects each client to its server. Required.
	Backend Backend

	// AllowedOrigins, when set, lists the Origin header values accepted
	// (scheme://host[:port], compared without regard to case); "*" accepts
	// any. When it is empty, a request with an Origin header is accepted
	// only if the origin's host is the request's Host (same-origin, as
	// browsers would send it); a request without Origin (a program, not a
	// browser) is accepted either way. This keeps a web page from driving a
	// local server through the visitor's browser.
	AllowedOrigins []string

	// Keepalive sets the read limit for clients' messages, the ping/pong
	// keepalive that finds dead clients (and so ends their backends), and
	// the bound on the closing handshake.
	Keepalive

	// Logger receives a line per bridge at Debug and backend failures at
	// Warn; nil discards them.
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

// ServeHTTP upgrades the request to a WebSocket connection with the "mcp"
// subprotocol and bridges it to a new backend until either side ends.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !websocket.IsWebSocketUpgrade(r) {
		w.Header().Set("Upgrade", "websocket")
		http.Error(w, "this endpoint speaks MCP over WebSocket: open a WebSocket connection with subprotocol \"mcp\"", http.StatusUpgradeRequired)
		return
	}
	if !slices.Contains(websocket.Subprotocols(r), Subprotocol) {
		http.Error(w, "the WebSocket subprotocol \"mcp\" is required (Sec-WebSocket-Protocol: mcp)", http.StatusBadRequest)
		return
	}
	if !h.checkOrigin(r) {
		http.Error(w, "origin not allowed", http.StatusForbidden)
		return
	}
	if h.Backend == nil {
		http.Error(w, "no backend configured", http.StatusInternalServerError)
		return
	}

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	b := &bridge{cancel: cancel}
	if !h.add(b) {
		http.Error(w, "the server is shutting down", http.StatusServiceUnavailable)
		return
	}
	defer h.remove(b)

	log := h.logger()
	backend, err := h.Backend(ctx)
	if err == nil && backend == nil {
		err = errors.New("websocket: Backend returned neither a Conn nor an error")
	}
	if err != nil {
		log.Warn("websocket: backend failed to start", "remote", r.RemoteAddr, "err", err)
		http.Error(w, "the MCP server could not be started", http.StatusBadGateway)
		return
	}
	up := websocket.Upgrader{
		Subprotocols: []string{Subprotocol},
		// Checked above, with the same rule.
		CheckOrigin: func(*http.Request) bool { return true },
	}
	ws, err := up.Upgrade(w, r, nil)
	if err != nil {
		// Upgrade has answered the client.
		log.Debug("websocket: upgrade failed", "remote", r.RemoteAddr, "err", err)
		backend.Close()
		return
	}
	client := newConn(ws, h.Keepalive, log)
	log.Debug("websocket: bridge started", "remote", r.RemoteAddr)
	err = pipe(ctx, client, backend, log)
	log.Debug("websocket: bridge ended", "remote", r.RemoteAddr, "err", err)
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
func copyMessages(ctx context.Context, dst, src transport.Conn, log *slog.Logger, fromBackend bool) error {
	for {
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
		if err := dst.Write(ctx, m); err != nil {
			return err
		}
	}
}

func (h *Handler) add(b *bridge) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	if h.bridges == nil {
		h.bridges = make(map[*bridge]struct{})
	}
	h.bridges[b] = struct{}{}
	h.wg.Add(1)
	return true
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

// checkOrigin applies AllowedOrigins (see Handler).
func (h *Handler) checkOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	if len(h.AllowedOrigins) == 0 {
		u, err := url.Parse(origin)
		return err == nil && strings.EqualFold(u.Host, r.Host)
	}
	for _, o := range h.AllowedOrigins {
		if o == "*" || strings.EqualFold(strings.TrimSuffix(o, "/"), origin) {
			return true
		}
	}
	return false
}
