// Package localguard keeps web pages from driving an HTTP server that runs on
// the user's own machine: the WebSocket bridge (tako bridge --listen-ws), the
// loopback callback of a login, an inspector's web page (DESIGN.md rule 7).
//
// # The attacks
//
// A server bound to 127.0.0.1 cannot be reached from the network, but it can
// be reached from every web page the user's browser shows, in two ways.
//
// Cross-origin requests. A page at https://evil.example can open
// ws://127.0.0.1:8765/mcp: browsers apply no same-origin policy to
// WebSocket, and send simple GETs and form POSTs to any address. What gives
// such a request away is its Origin header, which browsers set to the page's
// origin on every WebSocket handshake and every POST, and which a page cannot
// forge.
//
// DNS rebinding. The page's own name, evil.example, is served by a DNS server
// the attacker runs with a very short TTL; once the page has loaded, the name
// is made to resolve to 127.0.0.1. The page then talks to
// http://evil.example:8765, which the browser treats as the page's own origin
// (no CORS, readable answers), but whose packets reach the local server. Now
// Origin is http://evil.example:8765 and Host is evil.example:8765: the two
// agree, so a server that compares them (as the WebSocket bridge did) lets
// the page in. What gives this one away is the Host header: it carries the
// attacker's name, never a name of this machine. (MCP Inspector had this
// class of hole: CVE-2025-49596.)
//
// # The rules
//
// A Guard refuses a request unless:
//
//   - its Host is a loopback name (localhost, or a loopback IP such as
//     127.0.0.1 or [::1]), the IP address the connection arrived at, or one
//     of AllowHosts, with or without a port. An IP literal is never a
//     rebound name; a DNS name is accepted only when the user listed it.
//   - its Origin, when there is one, is the request's own origin (its host
//     and port are the Host's, which passed the rule above) or one of
//     AllowOrigins. "null", the origin of sandboxed frames, file: pages and
//     redirected requests, is refused. A request without Origin comes from
//     a program, not from a web page, and passes.
//   - it carries the Token, when one is set, as "Authorization: Bearer
//     TOKEN" or as the query parameter token=TOKEN (a browser cannot set
//     headers on a WebSocket, so a URL with the token is the way to hand it
//     to one). This is what keeps out other local users, whom Host and
//     Origin do not stop: any account on the machine can connect to a
//     loopback port.
//
// What it does not stop: a foreign page can still make the browser navigate
// to, or load an image from, a loopback URL (a GET without Origin whose
// answer the page cannot read). A handler must not change state on such a
// GET, or must require the token.
package localguard

import (
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// The reasons a Guard refuses a request; a *RefusedError wraps one.
var (
	ErrHost   = errors.New("the Host header does not name this machine")
	ErrOrigin = errors.New("the request comes from a web page of another origin")
	ErrToken  = errors.New("the request does not carry the right token")
)

// RefusedError is a request a Guard refused. errors.Is tells the reason
// (ErrHost, ErrOrigin or ErrToken).
type RefusedError struct {
	Reason error
	// Value is the Host or the Origin refused; empty for a token (which is
	// never shown, right or wrong).
	Value string
}

func (e *RefusedError) Error() string {
	if e.Value == "" {
		return "localguard: " + e.Reason.Error()
	}
	return fmt.Sprintf("localguard: %v (%q)", e.Reason, e.Value)
}

func (e *RefusedError) Unwrap() error { return e.Reason }

// StatusCode is the HTTP status of the refusal: 401 for the token, 403
// otherwise.
func (e *RefusedError) StatusCode() int {
	if errors.Is(e.Reason, ErrToken) {
		return http.StatusUnauthorized
	}
	return http.StatusForbidden
}

// Guard checks the Host, Origin and token of requests to a local server.
// The zero value enforces the Host and Origin rules with no token. A Guard
// must not be changed while it checks requests.
type Guard struct {
	// AllowHosts names hosts accepted in Host besides the loopback names
	// and the address the connection arrived at: "mybox.lan" (any port),
	// "mybox.lan:8765" (that port only). "*" accepts every Host, for a
	// server behind a proxy that checks it.
	AllowHosts []string

	// AllowOrigins names origins accepted besides the request's own
	// (scheme://host[:port], compared without regard to case), such as
	// "http://localhost:5173" for a web client served from another port.
	// "*" accepts every origin; with it, only the token keeps web pages
	// out.
	AllowOrigins []string

	// Token, when set, must come with every request (see the package
	// doc). NewToken makes one.
	Token string

	// Logger, when set, receives a line at Warn for each refusal made by
	// Wrap: who was refused and why (never the token).
	Logger *slog.Logger
}

// NewToken returns a random token of 128 bits, in base32 (26 characters
// that need no escaping in a URL or a header).
func NewToken() string { return rand.Text() }

// Check applies the rules to r. It returns nil or a *RefusedError.
func (g *Guard) Check(r *http.Request) error {
	if !g.hostAllowed(r, r.Host) {
		return &RefusedError{Reason: ErrHost, Value: r.Host}
	}
	if origin, ok := r.Header["Origin"]; ok && !g.originAllowed(r, origin) {
		return &RefusedError{Reason: ErrOrigin, Value: strings.Join(origin, ", ")}
	}
	if g.Token != "" && !g.tokenGiven(r) {
		return &RefusedError{Reason: ErrToken}
	}
	return nil
}

// Wrap returns a handler that answers a request Check refuses with its
// status and a one-line reason, and passes the others to h.
func (g *Guard) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := g.Check(r); err != nil {
			if g.Logger != nil {
				g.Logger.Warn("refused a request", "remote", r.RemoteAddr, "err", err)
			}
			Refuse(w, err)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Refuse answers a request that Check refused with err: the status, and the
// reason as a one-line plain text body. A refused token is told to retry
// with one (WWW-Authenticate: Bearer).
func Refuse(w http.ResponseWriter, err error) {
	status := http.StatusForbidden
	var re *RefusedError
	if errors.As(err, &re) {
		status = re.StatusCode()
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", "Bearer")
	}
	// The client is told why, not which package said so.
	http.Error(w, strings.TrimPrefix(err.Error(), "localguard: "), status)
}

// hostAllowed applies the Host rule to hostport, a Host header or the
// host[:port] of an origin.
func (g *Guard) hostAllowed(r *http.Request, hostport string) bool {
	if hostport == "" {
		return false // HTTP/1.0 without Host: no browser sends that
	}
	host, port := splitHostPort(hostport)
	for _, a := range g.AllowHosts {
		if a == "*" {
			return true
		}
		ah, ap := splitHostPort(a)
		if strings.EqualFold(ah, host) && (ap == "" || ap == port) {
			return true
		}
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false // a DNS name nobody listed: maybe a rebound one
	}
	if ip.IsLoopback() {
		return true
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	lip := net.ParseIP(addrHost(local.String()))
	return lip != nil && !lip.IsUnspecified() && lip.Equal(ip)
}

// originAllowed applies the Origin rule to the Origin header's values.
func (g *Guard) originAllowed(r *http.Request, values []string) bool {
	if len(values) != 1 {
		return false // an empty or repeated Origin is no browser's
	}
	origin := strings.TrimSuffix(values[0], "/")
	for _, a := range g.AllowOrigins {
		if a == "*" || strings.EqualFold(strings.TrimSuffix(a, "/"), origin) {
			return true
		}
	}
	if origin == "null" {
		return false
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Path != "" || u.RawQuery != "" {
		return false
	}
	// The request's own origin: the Host it was sent to, already checked.
	return strings.EqualFold(u.Host, r.Host)
}

func (g *Guard) tokenGiven(r *http.Request) bool {
	want := []byte(g.Token)
	if scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), want) == 1 {
			return true
		}
	}
	for _, tok := range r.URL.Query()["token"] {
		if subtle.ConstantTimeCompare([]byte(tok), want) == 1 {
			return true
		}
	}
	return false
}

// splitHostPort splits "host:port", "[v6]:port", "host" and "[v6]"; the
// host comes back without brackets, the port empty when there is none.
func splitHostPort(s string) (host, port string) {
	if h, p, err := net.SplitHostPort(s); err == nil {
		return h, p
	}
	return strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"), ""
}

func addrHost(s string) string {
	h, _ := splitHostPort(s)
	return h
}
