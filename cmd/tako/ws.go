package main

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tako-mcp/tako/internal/localguard"
	"github.com/tako-mcp/tako/websocket"
)

// shownURL is u for messages: the values of its query (a bridge's
// ?token=) are not shown.
func shownURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.RawQuery == "" {
		return u
	}
	q := p.Query()
	for k := range q {
		q[k] = []string{"REDACTED"}
	}
	p.RawQuery = q.Encode()
	return p.String()
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
// of its own. The websocket.Handler keeps web pages out (Host and Origin,
// against cross-origin pages and DNS rebinding), and --token keeps out the
// machine's other users.
var wsBridgeEnd = bridgeEnd{name: "ws", check: checkWSBridge, serve: serveWSBridge}

// wsBridgeFlags are the flags of --listen-ws.
type wsBridgeFlags struct {
	token        bool   // --token: require a random token, printed in the URL
	tokenEnv     string // --token-env VAR: require the token in $VAR
	allowHosts   []string
	allowOrigins []string
	maxClients   int // --max-clients; 0 leaves the Handler's default
}

func (w *wsBridgeFlags) given() bool {
	return w.token || w.tokenEnv != "" || len(w.allowHosts) > 0 || len(w.allowOrigins) > 0 || w.maxClients != 0
}

// setTokenFlag sets --token, a boolean. --token=VALUE is most likely a
// token someone meant to give, so the message does not repeat it.
func setTokenFlag(o *options, v string) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return usagef("--token takes no value: it makes a random token (to give one, put it in a variable and name it with --token-env VAR)")
	}
	o.bridge.ws.token = b
	return nil
}

func setMaxClients(o *options, v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return usagef("--max-clients wants a number of clients, 1 or more, not %q", v)
	}
	o.bridge.ws.maxClients = n
	return nil
}

// checkWSBridge refuses --client-ca: the WebSocket end does not verify
// client certificates, and a flag that looks like mutual TLS must not be
// ignored in silence. It checks the token flags before anything starts.
func checkWSBridge(o *options) error {
	if o.grpc.clientCA != "" {
		return usagef("--listen-ws does not verify client certificates: --client-ca is for --listen-grpc (serve it from a bridge of its own)")
	}
	w := &o.bridge.ws
	if w.token && w.tokenEnv != "" {
		return usagef("--token makes a token and --token-env takes one: give one of them")
	}
	if w.tokenEnv != "" && os.Getenv(w.tokenEnv) == "" {
		return usagef("--token-env %s: $%s is empty or not set", w.tokenEnv, w.tokenEnv)
	}
	for _, origin := range w.allowOrigins {
		if u, err := url.Parse(origin); origin != "*" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.TrimSuffix(u.Path, "/") != "") {
			return usagef("--allow-origin wants an origin such as http://localhost:5173, not %q", origin)
		}
	}
	return nil
}

// wsFlagsWithoutEnd refuses the flags of --listen-ws on a bridge that
// serves no WebSocket end, where they would do nothing.
func wsFlagsWithoutEnd(o *options) error {
	if o.bridge.ws.given() && !o.bridge.serves("ws") {
		return usagef("--token, --token-env, --allow-host, --allow-origin and --max-clients are for --listen-ws")
	}
	return nil
}

// shutdownGrace bounds how long a bridge end waits, once told to stop, for
// HTTP requests still being answered; open WebSocket connections are then
// closed by the Handler, which waits for their backends to end.
const shutdownGrace = 5 * time.Second

func serveWSBridge(ctx context.Context, addr string, cfg *bridgeConfig, ready func(url string)) error {
	w := &cfg.flags.bridge.ws
	h := &websocket.Handler{
		Backend:        websocket.Backend(cfg.backend),
		AllowedHosts:   w.allowHosts,
		AllowedOrigins: w.allowOrigins,
		MaxClients:     w.maxClients,
		Logger:         cfg.logger,
	}
	// printed is the query of the URL printed: the token only when tako
	// made it, since the user who set $VAR knows theirs.
	printed := ""
	switch {
	case w.token:
		h.Token = localguard.NewToken()
		printed = "?token=" + h.Token
	case w.tokenEnv != "":
		h.Token = os.Getenv(w.tokenEnv)
	}
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
	ready(scheme + "://" + ln.Addr().String() + "/mcp" + printed)

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
