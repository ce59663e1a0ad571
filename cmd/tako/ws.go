package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/websocket"
)

// wsDialer reaches an MCP server over WebSocket (subprotocol "mcp", one
// message per text frame, the legacy lifecycle), sending the --header
// headers with the opening handshake.
func wsDialer(o *options, logger *slog.Logger, sessionOpts *transport.Options) (dialer, error) {
	u, err := checkWSURL(o.server.value)
	if err != nil {
		return nil, usagef("--ws: %v", err)
	}
	opts := &websocket.Options{
		Header: headerFlags(o.headers),
		Proxy:  http.ProxyFromEnvironment,
		Logger: logger,
	}
	ac, err := storedAuth(u) // the tokens of `tako login` (login.go)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (transport.Transport, error) {
		if h, err := ac.Header(ctx); err == nil && h.Get("Authorization") != "" && opts.Header.Get("Authorization") == "" {
			opts.Header.Set("Authorization", h.Get("Authorization"))
		}
		conn, err := websocket.Dial(ctx, u, opts)
		if err != nil {
			return nil, &stageError{stage: "reach " + u, err: err}
		}
		return connect(ctx, conn, sessionOpts)
	}, nil
}

// checkWSURL rejects what cannot be a WebSocket URL before anything starts.
func checkWSURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", err
	}
	if u.Scheme != "ws" && u.Scheme != "wss" {
		return "", fmt.Errorf("the URL must start with ws:// or wss://, not %q", s)
	}
	if u.Host == "" {
		return "", fmt.Errorf("the URL %q has no host", s)
	}
	return u.String(), nil
}

// headerFlags turns the --header values ("K:V", as addHeader keeps them)
// into a header.
func headerFlags(kvs []string) http.Header {
	h := http.Header{}
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, ":")
		h.Add(k, v)
	}
	return h
}

// wsBridgeEnd serves the bridge's server over WebSocket (--listen-ws ADDR):
// each client that connects to ws://ADDR/mcp (or ws://ADDR/) gets a backend
// of its own.
var wsBridgeEnd = bridgeEnd{name: "ws", check: checkWSBridge, serve: serveWSBridge}

// checkWSBridge refuses --client-ca: the WebSocket end does not verify
// client certificates, and a flag that looks like mutual TLS must not be
// ignored in silence.
func checkWSBridge(o *options) error {
	if o.grpc.clientCA != "" {
		return usagef("--listen-ws does not verify client certificates: --client-ca is for --listen-grpc (serve it from a bridge of its own)")
	}
	return nil
}

// shutdownGrace bounds how long a bridge end waits, once told to stop, for
// HTTP requests still being answered; open WebSocket connections are then
// closed by the Handler, which waits for their backends to end.
const shutdownGrace = 5 * time.Second

func serveWSBridge(ctx context.Context, addr string, cfg *bridgeConfig, ready func(url string)) error {
	h := &websocket.Handler{Backend: websocket.Backend(cfg.backend), Logger: cfg.logger}
	mux := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/mcp" && r.URL.Path != "/" {
			http.Error(w, "not found: the MCP endpoint is /mcp", http.StatusNotFound)
			return
		}
		h.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	scheme := "ws"
	if cfg.tls != nil {
		ln = tls.NewListener(ln, cfg.tls)
		scheme = "wss"
	}
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(cfg.logger.Handler(), slog.LevelDebug),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	ready(scheme + "://" + ln.Addr().String() + "/mcp")

	select {
	case <-ctx.Done():
	case err := <-errc:
		h.Close()
		return err
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	srv.Shutdown(sctx) // stops accepting; hijacked connections are the Handler's
	h.Close()          // ends every bridge: clients closed, subprocesses ended
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
