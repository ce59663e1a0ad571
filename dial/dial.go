package dial

// Design note.
//
// One place knows the transports. Dial is one switch over Kind; each case
// turns a Server into the Options of one transport package and runs the
// handshake, so that the CLI, the agent, the bridge and the inspector
// reach servers the same way, with the same names and the same errors, and
// a new transport is one package plus one case here (DESIGN.md). Nothing
// above dial imports a transport package but transport itself.
//
// Dial runs the handshake. The Conns (stdio, Streamable HTTP, WebSocket)
// go through transport.Connect, which closes the Conn when the handshake
// fails; the gRPC Client is a Transport of its own and probes the server
// with a tools/list in mcpgrpc.Dial. Either way Dial returns a Transport
// that is ready, or an error and nothing left running.
//
// The session options are the caller's. transport.Options is the
// template the Transport is built from: its Handlers (sampling,
// elicitation, roots) and CallTimeout reach the gRPC Client too, which has
// no Session, and its Logger is the Conn's logger as well. dial adds
// nothing to them, with one exception: see SSE below.
//
// Auth. dial declares the two methods it needs of an authorization layer
// (Authorizer, the transports' httpauth.Authorizer), which *auth.Client
// has, so that auth does not import dial and dial does not import auth:
// the CLI's stored logins, a program's own token source and a test's fake
// all plug in the same way. Streamable HTTP and the WebSocket upgrade take
// it as their Options.Auth (per request, so that DPoP proofs and refreshes
// work, and a 401 starts a refresh or a step-up); gRPC through per-RPC
// credentials, when the Authorizer implements them (*auth.Client does).
//
// SSE. The 2024-11-05 HTTP+SSE transport is not a Conn of its own: the
// Streamable HTTP Conn switches to it when a server refuses a POST to its
// URL with 400, 404 or 405 (as SSE servers do: their URL is a GET
// stream), and cannot be told to start there. Kind SSE therefore dials
// the same Conn as HTTP; the price is one refused POST before the switch
// (against the npm reference server's SSE endpoint, 13 ms pinned to
// 2024-11-05, 59 ms not). The revision is still the engine's to
// negotiate: that server speaks 2025-11-25 over the old wire, and pinning
// 2024-11-05 would lose what came after. A program that wants the pin
// sets transport.Options.ProtocolVersion.
//
// TLS. A CA given pins: the server's certificate must chain to it, and the
// system's roots are not trusted (that is what a private CA is for).
// Without one the system's roots are. gRPC keeps its package's floor of
// TLS 1.3; HTTPS and WSS accept TLS 1.2, as the web does. An http://
// Conn with TLS options of its own gets a RoundTripper of dial's, whose
// idle connections dial closes when the Conn closes (httpConn), as the
// Conn does for the one it makes itself. So does a Conn whose RoundTripper
// is wrapped (Server.WrapRoundTripper): what is wrapped is dial's own, the
// one the TLS options would have made, so that the wrapper only watches
// and TLS, proxies and idle connections stay dial's.
//
// Errors. Each layer below prefixes its own words, which reads well in a
// log and badly on a terminal ("mcp handshake: initialize: write: mcp
// http: initialize: Post ...: dial tcp ...: connection refused"). *Error
// says once which server, which step and the cause, in the words of the
// innermost error that still says something (summary), and keeps the
// whole chain for errors.Is and errors.As.
//
// Not here: retries and restarts (registry's RestartPolicy calls Dial
// again), logins (auth runs them; dial only plugs an Authorizer in), flags
// and usage errors (the CLI's), and naming policy beyond a default name.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	mcpgrpc "github.com/tako-mcp/tako/grpc"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/streamablehttp"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/transport/httpauth"
	"github.com/tako-mcp/tako/websocket"
)

// Kind is the transport a server is reached over.
type Kind string

// The kinds Dial knows.
const (
	// Stdio runs Command as a child process and speaks newline-delimited
	// JSON-RPC on its stdin and stdout.
	Stdio Kind = "stdio"
	// HTTP is Streamable HTTP, in every era, with the 2024-11-05 HTTP+SSE
	// transport as a fallback.
	HTTP Kind = "http"
	// SSE is the 2024-11-05 HTTP+SSE transport asked for by name: URL is
	// the SSE endpoint (often /sse). It dials the same Conn as HTTP, which
	// switches to the old wire when the server refuses the first POST (see
	// the design note in dial.go).
	SSE Kind = "sse"
	// WebSocket is MCP over WebSocket (subprotocol "mcp"), ws:// or wss://.
	WebSocket Kind = "ws"
	// GRPC is the model_context_protocol.Mcp gRPC service; URL is its
	// target, host:port.
	GRPC Kind = "grpc"
)

// Server says how to reach one MCP server: a command to run, or a URL of
// some [Kind] with its headers, authorization and [TLS]. The zero value of
// every field but Command or URL works. [Dial] reaches it, [Server.Check]
// checks it, [LoadConfig] reads servers from a file.
type Server struct {
	// Name names the server in errors, tool prefixes and menus. Empty
	// means [Server.DefaultName].
	Name string

	// Kind is the transport. Empty means the one the other fields imply:
	// Stdio for a Command, HTTP for an http:// or https:// URL, WebSocket
	// for ws:// or wss://, GRPC for grpc://. A host:port target is gRPC
	// only when Kind says so.
	Kind Kind

	// Command, Args, Env and Dir start a stdio server. The command is
	// run directly, never through a shell, and found in PATH if it has no
	// slash. Env holds KEY=VALUE entries added to the inherited
	// environment (they win over inherited ones); Dir empty means ours.
	Command string
	Args    []string
	Env     []string
	Dir     string

	// URL is the server's endpoint (http, sse, ws) or target (grpc:
	// host:port, or grpc://host:port).
	URL string

	// Header is sent with every HTTP request, with the WebSocket opening
	// handshake, and as gRPC metadata (keys lowercased, values joined
	// with ", "): API keys, tenant ids.
	Header http.Header

	// Auth authorizes the requests (usually an *auth.Client). AuthFunc,
	// when Auth is nil, makes one for the server at each Dial: what a
	// program that stores logins per URL gives every server of a config
	// file. Neither is used by stdio, whose servers take credentials in
	// their environment.
	Auth     Authorizer
	AuthFunc func(ctx context.Context, s *Server) (Authorizer, error)

	// TLS configures the TLS of https, wss and grpc. Nil means the
	// system's roots (and, for grpc, TLS 1.3).
	TLS *TLS

	// WrapRoundTripper, when set, wraps the http.RoundTripper that carries
	// an http or sse server's requests (TLS applied), so that a program
	// can watch each request and its response without taking the
	// transport over: an inspector's network view, a request counter. It
	// is called once per Dial; what it returns must be safe for concurrent
	// use and pass every request on, bodies unread. Nil means none. The
	// other kinds have no RoundTripper and ignore it.
	WrapRoundTripper func(http.RoundTripper) http.RoundTripper
}

// TLS is a server's TLS settings.
type TLS struct {
	// CAFile is a PEM file of the CA certificates the server's
	// certificate must chain to. It pins: the system's roots are then not
	// trusted. Empty means the system's roots.
	CAFile string
	// CertFile and KeyFile are this client's certificate chain and key,
	// for servers that require mutual TLS. They go together. The files
	// are read again when they change, on the next connection.
	CertFile, KeyFile string
	// ServerName is the name expected in the server's certificate. Empty
	// means the URL's host.
	ServerName string
	// Plaintext dials a grpc server without TLS. It must be asked for by
	// name: tool arguments and tokens then cross the network in the
	// clear. http:// and ws:// URLs say the same by their scheme.
	Plaintext bool
}

// Authorizer is what dial needs of an authorization layer, the
// transports' own seam (httpauth.Authorizer); *auth.Client implements it.
// AuthorizeRequest sets a request's credentials (a bearer token, or a DPoP
// token and its proof); HandleUnauthorized is told of a 401 or 403 and
// returns nil when new credentials are in place, so that the request is
// sent once more. For grpc, the Authorizer must also implement
// credentials.PerRPCCredentials (as *auth.Client does).
type Authorizer = httpauth.Authorizer

// Errors a Server can be refused with before anything starts, each wrapped
// in an [*Error].
var (
	// ErrInvalid: the Server is incomplete or contradicts itself (no
	// Command and no URL, both, a URL that does not parse, TLS options for
	// a plain-text URL).
	ErrInvalid = errors.New("dial: invalid server")
	// ErrUnsupported: a Kind, or a URL scheme, that dial does not reach.
	ErrUnsupported = errors.New("dial: not supported")
)

// Error reports a server that could not be reached: which server, which
// step and why. Its message says each of them once; Err keeps the whole
// chain, for errors.Is and errors.As.
type Error struct {
	// Server is the server's name (Name, else DefaultName), and Target
	// what was reached: the command's base name, or the URL without its
	// query and credentials.
	Server, Target string
	// Op is the step that failed: "check" (the Server itself), "auth"
	// (its Authorizer), "start" (a command), "connect" (a WebSocket or
	// gRPC connection) or "handshake" (the MCP handshake).
	Op  string
	Err error
}

func (e *Error) Error() string {
	return fmt.Sprintf("server %q (%s): %s: %s", e.Server, e.Target, e.Op, summary(e.Err))
}

func (e *Error) Unwrap() error { return e.Err }

// Dial reaches s and runs the MCP handshake with the session options opts
// (nil means the defaults), and returns the connected Transport: a
// transport.Session for stdio, http, sse and ws, the gRPC Client for grpc.
// ctx bounds the start and the handshake only; the Transport lives until
// its Close. Every failure is an [*Error], and leaves nothing running.
// [Server.Check] reports, without dialing, the failures that need no
// network.
func Dial(ctx context.Context, s Server, opts *transport.Options) (transport.Transport, error) {
	d, p, err := start(&s, opts)
	if err != nil {
		return nil, err
	}
	if p.kind == GRPC {
		return d.grpc(ctx, p)
	}
	conn, err := d.conn(ctx, p)
	if err != nil {
		return nil, err
	}
	return d.handshake(ctx, conn)
}

// DialConn reaches s and returns its message Conn, before any handshake:
// for a program that speaks the protocol through the Conn itself (a bridge
// forwarding another client's messages, an inspector that records every
// message), or wraps it before transport.Connect. opts gives the Conn its
// Logger; nil means none. A grpc server, whose wire is no message Conn, is
// refused with ErrUnsupported. Every failure is an [*Error].
func DialConn(ctx context.Context, s Server, opts *transport.Options) (transport.Conn, error) {
	d, p, err := start(&s, opts)
	if err != nil {
		return nil, err
	}
	if p.kind == GRPC {
		return nil, d.fail("check", fmt.Errorf("%w: a grpc server has no message Conn; use Dial", ErrUnsupported))
	}
	return d.conn(ctx, p)
}

// conn is the Conn of a stdio, http, sse or ws server.
func (d *dialer) conn(ctx context.Context, p *plan) (transport.Conn, error) {
	switch p.kind {
	case Stdio:
		return d.stdio(ctx)
	case HTTP, SSE:
		return d.http(ctx, p)
	default: // WebSocket: plan knows no other
		return d.websocket(ctx, p)
	}
}

// Check reports what Dial would refuse s for before it starts or reaches
// anything (an *Error of Op "check", wrapping ErrInvalid or
// ErrUnsupported): no Command and no URL, a bad URL or scheme, TLS options
// that contradict each other or whose files do not load. A program checks
// its flags or its config file's entries with it, and says what is wrong
// before it starts the first server. The Authorizer is not consulted.
func (s Server) Check() error {
	_, _, err := start(&s, nil)
	return err
}

// dialer is one Dial's state.
type dialer struct {
	s    *Server
	opts *transport.Options
	name string
}

// start checks s (Dial, DialConn and Check alike) and returns the plan
// with the dialer that carries it out; nil opts are the defaults.
func start(s *Server, opts *transport.Options) (*dialer, *plan, error) {
	if opts == nil {
		opts = &transport.Options{}
	}
	d := &dialer{s: s, opts: opts, name: nameOf(s)}
	p, err := d.plan()
	return d, p, err
}

// plan is what checking a Server found out: its kind, its URL or target,
// and its TLS configuration (nil: the defaults, or none).
type plan struct {
	kind      Kind
	u         *url.URL
	target    string // grpc
	tls       *tls.Config
	plaintext bool // grpc
}

func (d *dialer) fail(op string, err error) error {
	return &Error{Server: d.name, Target: d.s.target(), Op: op, Err: err}
}

func (d *dialer) invalid(format string, args ...any) error {
	return d.fail("check", fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...))
}

// plan checks s for its kind, as far as that can be done without the
// network.
func (d *dialer) plan() (*plan, error) {
	s := d.s
	kind, err := s.kind()
	if err != nil {
		return nil, d.fail("check", err)
	}
	p := &plan{kind: kind}
	switch kind {
	case Stdio:
		if s.URL != "" {
			return nil, d.invalid("a stdio server has a Command, not a URL")
		}
		if s.Command == "" {
			return nil, d.invalid("a stdio server needs a Command")
		}
		if len(s.Header) > 0 || s.TLS != nil {
			return nil, d.invalid("Header and TLS are for a server reached at a URL; a stdio server takes its settings in Args and Env")
		}
	case HTTP, SSE, WebSocket:
		plain, secure := "http", "https"
		if kind == WebSocket {
			plain, secure = "ws", "wss"
		}
		if p.u, err = d.checkURL(plain, secure); err != nil {
			return nil, err
		}
		if s.TLS != nil {
			if p.tls, err = d.tlsConfig(p.u.Scheme == secure, tls.VersionTLS12); err != nil {
				return nil, err
			}
		}
	case GRPC:
		if s.Command != "" {
			return nil, d.invalid("a grpc server has a URL (its target), not a Command")
		}
		if p.target = strings.TrimPrefix(s.URL, "grpc://"); p.target == "" {
			return nil, d.invalid("a grpc server needs its target in URL (host:port)")
		}
		if t := s.TLS; t != nil && t.Plaintext {
			if t.CAFile != "" || t.CertFile != "" || t.KeyFile != "" || t.ServerName != "" {
				return nil, d.invalid("TLS.Plaintext goes without CAFile, CertFile, KeyFile and ServerName")
			}
			p.plaintext = true
		} else if p.tls, err = d.tlsConfig(true, 0); err != nil {
			return nil, err
		}
		if _, ok := s.Auth.(credentials.PerRPCCredentials); s.Auth != nil && !ok {
			return nil, d.fail("check", fmt.Errorf("%w: the Authorizer (%T) cannot authorize gRPC calls: it does not implement credentials.PerRPCCredentials", ErrUnsupported, s.Auth))
		}
	}
	return p, nil
}

func (d *dialer) handshake(ctx context.Context, conn transport.Conn) (transport.Transport, error) {
	sess, err := transport.Connect(ctx, conn, d.opts)
	if err != nil {
		return nil, d.fail("handshake", err)
	}
	return sess, nil
}

func (d *dialer) stdio(ctx context.Context) (transport.Conn, error) {
	s := d.s
	conn, err := stdio.Start(ctx, &stdio.Options{Command: s.Command, Args: s.Args, Env: s.Env, Dir: s.Dir, Logger: d.opts.Logger})
	if err != nil {
		return nil, d.fail("start", err)
	}
	return conn, nil
}

func (d *dialer) http(ctx context.Context, p *plan) (transport.Conn, error) {
	ho := &streamablehttp.Options{Header: d.s.Header.Clone(), Logger: d.opts.Logger}
	a, err := d.authorizer(ctx)
	if err != nil {
		return nil, err
	}
	if a != nil {
		ho.Auth = a
	}
	var rt *http.Transport
	if p.tls != nil || d.s.WrapRoundTripper != nil {
		rt = newRoundTripper(p.tls)
		ho.RoundTripper = rt
		if d.s.WrapRoundTripper != nil {
			ho.RoundTripper = d.s.WrapRoundTripper(rt)
		}
	}
	c, err := streamablehttp.Dial(ctx, p.u.String(), ho)
	if err != nil {
		if rt != nil {
			rt.CloseIdleConnections()
		}
		return nil, d.fail("check", fmt.Errorf("%w: %w", ErrInvalid, err))
	}
	if rt != nil {
		return httpConn{c, rt}, nil
	}
	return c, nil
}

// newRoundTripper is what the HTTP Conn would make for itself, with cfg
// (nil: the system's roots).
func newRoundTripper(cfg *tls.Config) *http.Transport {
	var t *http.Transport
	if dt, ok := http.DefaultTransport.(*http.Transport); ok {
		t = dt.Clone()
	} else {
		t = &http.Transport{Proxy: http.ProxyFromEnvironment, ForceAttemptHTTP2: true}
	}
	t.TLSClientConfig = cfg
	t.MaxIdleConnsPerHost = 64 // as the Conn's own: one host, many calls at once
	return t
}

// httpConn is a Streamable HTTP Conn over a RoundTripper of dial's: its
// Close also closes the RoundTripper's idle connections, whose goroutines
// would otherwise outlive the Conn. Every other method, the optional
// interfaces the engine looks for included, is the Conn's.
type httpConn struct {
	*streamablehttp.Conn
	rt *http.Transport
}

func (c httpConn) Close() error {
	err := c.Conn.Close()
	c.rt.CloseIdleConnections()
	return err
}

func (d *dialer) websocket(ctx context.Context, p *plan) (transport.Conn, error) {
	wo := &websocket.Options{Header: d.s.Header.Clone(), Proxy: http.ProxyFromEnvironment, TLSClientConfig: p.tls, Logger: d.opts.Logger}
	if wo.Header == nil {
		wo.Header = http.Header{}
	}
	a, err := d.authorizer(ctx)
	if err != nil {
		return nil, err
	}
	if a != nil && wo.Header.Get("Authorization") == "" {
		// The upgrade's seam: authorized as the GET it is, and a 401 or
		// 403 on it starts a refresh or a login as over HTTP.
		wo.Auth = a
	}
	conn, err := websocket.Dial(ctx, p.u.String(), wo)
	if err != nil {
		return nil, d.fail("connect", err)
	}
	return conn, nil
}

func (d *dialer) grpc(ctx context.Context, p *plan) (transport.Transport, error) {
	s := d.s
	o := &mcpgrpc.Options{TLS: p.tls, InsecurePlaintext: p.plaintext, Handlers: d.opts.Handlers, CallTimeout: d.opts.CallTimeout, Logger: d.opts.Logger}
	if len(s.Header) > 0 {
		o.Metadata = map[string]string{}
		for k, v := range s.Header {
			o.Metadata[strings.ToLower(k)] = strings.Join(v, ", ")
		}
	}
	a, err := d.authorizer(ctx)
	if err != nil {
		return nil, err
	}
	if a != nil {
		creds, ok := a.(credentials.PerRPCCredentials)
		if !ok {
			return nil, d.fail("auth", fmt.Errorf("%w: the Authorizer (%T) cannot authorize gRPC calls: it does not implement credentials.PerRPCCredentials", ErrUnsupported, a))
		}
		o.DialOptions = []grpc.DialOption{grpc.WithPerRPCCredentials(creds)}
	}
	c, err := mcpgrpc.Dial(ctx, p.target, o)
	if err != nil {
		return nil, d.fail("connect", err)
	}
	return c, nil
}

// checkURL parses the URL of a URL kind and checks its scheme.
func (d *dialer) checkURL(plain, secure string) (*url.URL, error) {
	s := d.s
	if s.Command != "" {
		return nil, d.invalid("a server has a Command or a URL, not both")
	}
	if s.URL == "" {
		return nil, d.invalid("no URL")
	}
	u, err := url.Parse(s.URL)
	if err != nil {
		return nil, d.invalid("%v", err)
	}
	if u.Scheme != plain && u.Scheme != secure {
		return nil, d.fail("check", fmt.Errorf("%w: the URL must start with %s:// or %s://, not %q", ErrUnsupported, plain, secure, u.Scheme+":"))
	}
	if u.Host == "" {
		return nil, d.invalid("the URL has no host")
	}
	if s.TLS != nil && s.TLS.Plaintext {
		return nil, d.invalid("TLS.Plaintext is for grpc; an %s URL is plain text by its scheme", plain)
	}
	return u, nil
}

// tlsConfig builds the client TLS configuration of s.TLS; secure is false
// for a plain-text URL, which TLS options cannot apply to.
func (d *dialer) tlsConfig(secure bool, minVersion uint16) (*tls.Config, error) {
	t := d.s.TLS
	if t == nil {
		t = &TLS{}
	}
	if !secure {
		return nil, d.invalid("TLS options for a plain-text URL")
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return nil, d.invalid("TLS.CertFile and TLS.KeyFile go together")
	}
	cfg, err := mcpgrpc.ClientTLSConfig(mcpgrpc.TLSOptions{
		CAFile: t.CAFile, CertFile: t.CertFile, KeyFile: t.KeyFile, ServerName: t.ServerName,
		UseSystemRoots: t.CAFile == "", MinVersion: minVersion,
	})
	if err != nil {
		return nil, d.invalid("%w", err)
	}
	return cfg, nil
}

// authorizer is s.Auth, else what s.AuthFunc makes, else nil.
func (d *dialer) authorizer(ctx context.Context) (Authorizer, error) {
	if d.s.Auth != nil {
		return d.s.Auth, nil
	}
	if d.s.AuthFunc == nil {
		return nil, nil
	}
	a, err := d.s.AuthFunc(ctx, d.s)
	if err != nil {
		return nil, d.fail("auth", err)
	}
	return a, nil
}

// kind is s.Kind, or the one its fields imply.
func (s *Server) kind() (Kind, error) {
	if s.Kind != "" {
		switch s.Kind {
		case Stdio, HTTP, SSE, WebSocket, GRPC:
			return s.Kind, nil
		}
		return "", fmt.Errorf("%w: kind %q (stdio, http, sse, ws, grpc)", ErrUnsupported, s.Kind)
	}
	switch {
	case s.Command != "" && s.URL != "":
		return "", fmt.Errorf("%w: a server has a Command or a URL, not both", ErrInvalid)
	case s.Command != "":
		return Stdio, nil
	case s.URL == "":
		return "", fmt.Errorf("%w: a server needs a Command or a URL", ErrInvalid)
	}
	scheme, _, ok := strings.Cut(s.URL, "://")
	switch strings.ToLower(scheme) {
	case "http", "https":
		return HTTP, nil
	case "ws", "wss":
		return WebSocket, nil
	case "grpc":
		return GRPC, nil
	}
	if !ok {
		return "", fmt.Errorf("%w: %q has no scheme (http://, https://, ws://, wss://; a gRPC target needs Kind grpc)", ErrInvalid, s.URL)
	}
	return "", fmt.Errorf("%w: URL scheme %q (http, https, ws, wss, grpc)", ErrUnsupported, scheme)
}

// target is what an *Error names: the command's base name, or the URL
// without credentials, query and fragment, which may hold secrets.
func (s *Server) target() string {
	if s.Command != "" {
		return baseName(s.Command)
	}
	u, err := url.Parse(s.URL)
	if err != nil || u.Host == "" {
		if i := strings.IndexAny(s.URL, "?#@"); i >= 0 {
			return s.URL[:i]
		}
		return s.URL
	}
	u.User, u.RawQuery, u.Fragment, u.RawFragment, u.ForceQuery = nil, "", "", "", false
	return u.String()
}
