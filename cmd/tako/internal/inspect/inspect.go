// Package inspect is `tako inspect`: a web page, served by tako itself on
// loopback, that shows a person what MCP servers do, on every transport
// tako speaks, several servers side by side.
//
// # Design note
//
// One process, one page. Run listens on 127.0.0.1 (a port the kernel
// picks unless Config.Addr says otherwise), prints the page's URL with a
// random session token in it, opens the browser, and serves until its
// context ends; then it closes every server (each within its transport's
// bounded Close) and every event stream, and returns. The page is
// vanilla HTML, CSS and JavaScript embedded with embed (assets/): no Node
// toolchain builds or serves it, nothing is fetched from the network, and
// it works offline.
//
// Security first (SECURITY.md, "tako inspect"). The page can start
// processes on the user's machine and talk to their servers with their
// tokens, so every request passes one gate (gate in http.go): Host and
// Origin are checked with internal/localguard against loopback names (DNS
// rebinding, other sites' pages), and the session token must come with
// the request, as "Authorization: Bearer" (the page's fetches) or
// ?token= (its EventSource, downloads and the page itself). Nothing
// changes state on a GET. A server command typed in the page runs only
// after a second request that confirms that very command (connect.go),
// so that the person sees what will run. The frames that show a server's
// HTML (MCP Apps, HTML content) are sandboxed without same-origin and
// loaded from a single-use capability rather than the token, so that a
// page a server wrote never holds the token (frames.go).
//
// Servers are reached through dial and nothing else. A message Conn
// (stdio, Streamable HTTP, WebSocket) comes from dial.DialConn and is
// wrapped (record.go) so that every message both ways lands in the
// history, in order, before the engine sees it: Read, Write, WriteRequest
// and the Pusher path, with the optional interfaces the engine looks for
// passed through. The Session is then made by transport.Connect, as dial
// would. gRPC has no messages: its Transport comes from dial.Dial, and the
// history shows the operations the page asked for instead. HTTP servers
// get a RoundTripper wrapper (dial.Server.WrapRoundTripper, network.go)
// for the network view, and an auth.Client of the inspector's own
// (oauth.go), whose requests go through a recording client for the
// step-by-step OAuth view and whose user step hands the authorization
// URL to the page (auth.Loopback.Open).
//
// State flows one way. The page asks with JSON requests (api.go, ops.go)
// and learns everything else from one server-sent event stream
// (events.go): server states, messages, progress, notifications, the
// server's requests to the person, network entries, OAuth steps. The
// stream's ring of recent events lets a reconnecting page catch up; one
// that fell too far behind is told to load the state again. Everything
// kept is bounded: the history and the runs' results by bytes, the event
// ring and each page's queue by count (limits.go).
package inspect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/tako-mcp/tako/auth"
	"github.com/tako-mcp/tako/dial"
	"github.com/tako-mcp/tako/internal/browser"
	"github.com/tako-mcp/tako/internal/localguard"
	"github.com/tako-mcp/tako/mcp"
)

// Config configures Run. The zero value serves a connect page on a free
// loopback port and opens the browser.
type Config struct {
	// Servers are connected as the page opens, side by side.
	Servers []Target
	// Addr is the address to listen on; empty means 127.0.0.1 on a port
	// the kernel picks. A non-loopback address is refused unless
	// AllowRemote is set.
	Addr        string
	AllowRemote bool
	// NoBrowser only prints the URL. Open, when set, opens the page
	// instead of the system browser ($BROWSER, else the platform's
	// opener).
	NoBrowser bool
	Open      func(url string) error
	// Out receives the line with the page's URL; nil means os.Stdout.
	Out io.Writer
	// Logger receives diagnostics: refused requests, servers that fail.
	// Nil discards them.
	Logger *slog.Logger
	// AuthStore keeps the OAuth logins made in the page (and finds the
	// ones `tako login` made); nil keeps them in memory.
	AuthStore auth.TokenStore
	// LogLevel, when set, asks every server for its log messages from the
	// start.
	LogLevel mcp.LoggingLevel
	// OpTimeout bounds each short operation (a list, a read, a ping);
	// zero means a minute. Tool calls run until they end or the person
	// cancels them.
	OpTimeout time.Duration
	// Split splits a command typed in the page into its words, as the
	// command line's --stdio does; nil splits at blanks.
	Split func(string) ([]string, error)
}

// Target is one server to connect at start (a stdio server given here
// runs at once: the person typed it on the command line): how to reach it, and the
// flags that name it on a tako command line (for "copy as a tako
// command"); nil Flags are derived from Server.
type Target struct {
	Server dial.Server
	Flags  []string
}

// Run serves the inspector until ctx ends, then closes every server and
// returns nil; it returns an error when it cannot listen.
func Run(ctx context.Context, cfg *Config) error {
	if cfg == nil {
		cfg = &Config{}
	}
	ins, err := newInspector(cfg)
	if err != nil {
		return err
	}
	addr := cfg.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	if err := checkAddr(addr, cfg.AllowRemote); err != nil {
		return err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("inspect: %w", err)
	}
	return ins.serve(ctx, ln)
}

// checkAddr refuses to listen beyond loopback unless asked to.
func checkAddr(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("inspect: listen address %q: %w", addr, err)
	}
	if allowRemote || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("inspect: %q is not a loopback address: the page can start programs on this machine, so it is served to this machine only", addr)
}

// Inspector is one running inspector: its page's session, its servers,
// their history and the events the page follows.
type Inspector struct {
	cfg    *Config
	token  string
	guard  *localguard.Guard
	log    *slog.Logger
	events *hub
	hist   *history
	net    *netLog
	steps  *authLog
	frames *frames
	// base is the page's origin, http://HOST:PORT, once listening.
	base    string
	started time.Time

	// ctx lives as long as Run: servers, runs and logins hang off it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	servers  []*server // in the order they were added
	nextID   int
	confirms map[string]*confirm
	runs     *runStore
	closed   bool
}

func newInspector(cfg *Config) (*Inspector, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ins := &Inspector{
		cfg:      cfg,
		token:    localguard.NewToken(),
		log:      log,
		events:   newHub(maxEvents),
		hist:     newHistory(maxHistoryBytes, maxHistoryEntries),
		net:      newNetLog(maxNetEntries),
		steps:    newAuthLog(maxAuthSteps),
		frames:   newFrames(),
		confirms: map[string]*confirm{},
		runs:     newRunStore(maxRunBytes),
	}
	ins.guard = &localguard.Guard{Token: ins.token, Logger: log}
	return ins, nil
}

// serve serves the page on ln until ctx ends.
func (ins *Inspector) serve(ctx context.Context, ln net.Listener) error {
	ins.ctx, ins.cancel = context.WithCancel(context.Background())
	defer ins.cancel()
	ins.base = "http://" + ln.Addr().String()
	ins.started = time.Now()
	srv := &http.Server{Handler: ins.handler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(ins.log.Handler(), slog.LevelDebug)}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	for _, t := range ins.cfg.Servers {
		ins.addServer(t)
	}
	pageURL := ins.base + "/?token=" + ins.token
	out := ins.cfg.Out
	if out == nil {
		out = os.Stdout
	}
	fmt.Fprintf(out, "tako inspect: %s\n", pageURL)
	if f, ok := out.(interface{ Sync() error }); ok {
		_ = f.Sync()
	}
	if !ins.cfg.NoBrowser {
		open := ins.cfg.Open
		if open == nil {
			open = browser.Open
		}
		if err := open(pageURL); err != nil {
			fmt.Fprintf(out, "tako inspect: could not open a browser (%v): open the URL above\n", err)
		}
	}

	var err error
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	ins.shutdown()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if serr := srv.Shutdown(sctx); serr != nil {
		srv.Close()
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// shutdown ends every event stream, run, login and server, and waits for
// their goroutines.
func (ins *Inspector) shutdown() {
	ins.mu.Lock()
	ins.closed = true
	servers := append([]*server(nil), ins.servers...)
	ins.mu.Unlock()
	ins.events.close()
	ins.cancel()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.close()
		}()
	}
	wg.Wait()
	ins.wg.Wait()
}

// opCtx bounds a short operation made for the page's request r.
func (ins *Inspector) opCtx(r *http.Request) (context.Context, context.CancelFunc) {
	d := ins.cfg.OpTimeout
	if d <= 0 {
		d = time.Minute
	}
	ctx, cancel := context.WithTimeout(r.Context(), d)
	stop := context.AfterFunc(ins.ctx, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}

// goBackground runs f on a goroutine that shutdown waits for.
func (ins *Inspector) goBackground(f func()) {
	ins.wg.Add(1)
	go func() {
		defer ins.wg.Done()
		f()
	}()
}
