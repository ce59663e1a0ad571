package auth

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/tako-mcp/tako/internal/browser"
	"github.com/tako-mcp/tako/internal/localguard"
)

// UserStep is the part of the authorization code flow that involves the
// user: showing them the authorization URL and receiving the redirect
// back. Start begins one flow and returns where the redirect will arrive.
type UserStep interface {
	Start(ctx context.Context) (Redirect, error)
}

// Redirect is one flow's redirect receiver.
type Redirect interface {
	// URL is the redirect URI, as sent in the request and registered.
	URL() string
	// Wait shows the user authURL and returns the query of the redirect
	// (code, state, iss, or error), or an error when ctx ends or the
	// step times out (ErrTimeout).
	Wait(ctx context.Context, authURL string) (url.Values, error)
	// Close releases what Start took (a listening socket). It is safe to
	// call more than once.
	Close() error
}

// Loopback is the UserStep for command-line programs (RFC 8252 §7.3): it
// listens on a loopback address, opens the system browser at the
// authorization URL ($BROWSER when set, else the platform's opener),
// prints the URL when no browser can be opened, and waits for the
// browser's redirect to http://127.0.0.1:PORT/callback.
//
// The callback takes only the answer to its own request: one with another
// state (a stray or forged request, a page of another site) is refused with
// a page that says so, and the login goes on waiting. A request whose Host
// is not a loopback name (DNS rebinding) is refused the same way. The page
// the browser lands on says how the login ended, once the code has been
// exchanged for a token.
type Loopback struct {
	// Addr is the address to listen on; empty means 127.0.0.1 on a free
	// port (the port of a previous registration's redirect URI when it is
	// free, so that the registration is reused as it is).
	Addr string
	// Out receives the "open this URL" line; nil means os.Stderr.
	Out io.Writer
	// Timeout bounds the wait for the user; zero means 5 minutes. The
	// whole login is bounded by Config.LoginTimeout as well.
	Timeout time.Duration
	// NoBrowser only prints the URL.
	NoBrowser bool
	// Open, when set, shows the user the authorization URL instead of
	// the system browser: a program with a window of its own (tako
	// inspect's page) offers the link there. An error from it means the
	// URL could not be shown, and it is printed as when no browser can be
	// opened. NoBrowser does not apply to it.
	Open func(authURL string) error
}

// Start implements UserStep.
func (l *Loopback) Start(ctx context.Context) (Redirect, error) {
	addr := l.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	return l.listen(ctx, addr)
}

// startOn starts on port when Addr is empty and the port is free, else as
// Start does.
func (l *Loopback) startOn(ctx context.Context, port string) (Redirect, error) {
	if l.Addr == "" {
		if r, err := l.listen(ctx, net.JoinHostPort("127.0.0.1", port)); err == nil {
			return r, nil
		}
	}
	return l.Start(ctx)
}

func (l *Loopback) listen(ctx context.Context, addr string) (Redirect, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("auth: loopback listener: %w", err)
	}
	r := &loopback{l: l, ln: ln, got: make(chan url.Values, 1), result: make(chan error, 1), done: make(chan struct{})}
	r.url = "http://" + ln.Addr().String() + "/callback"
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		_ = r.srv.Serve(ln)
		close(r.done)
	}()
	return r, nil
}

type loopback struct {
	l      *Loopback
	ln     net.Listener
	srv    *http.Server
	url    string
	got    chan url.Values
	result chan error // the login's outcome, for the callback page
	done   chan struct{}

	mu       sync.Mutex
	state    string // the state of the request the user was sent with
	answered bool
}

func (r *loopback) URL() string { return r.url }

// callbackGuard checks the callback's Host and Origin: loopback names only,
// no other site's page.
var callbackGuard = &localguard.Guard{}

// callbackWait bounds how long the callback page waits for the token
// request before it says what it knows.
const callbackWait = 30 * time.Second

func (r *loopback) serve(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	if err := callbackGuard.Check(req); err != nil {
		// DNS rebinding, or a page of another site: the same rules as
		// every listener tako opens (internal/localguard).
		page(w, http.StatusForbidden, "This page is tako's login callback, and it answers only to this computer's own pages and names, not to "+truncateText(req.Host, 100)+".")
		return
	}
	if req.URL.Path != "/callback" {
		http.NotFound(w, req)
		return
	}
	q := req.URL.Query()
	r.mu.Lock()
	mine := !r.answered && r.state != "" && q.Get("state") == r.state
	if mine {
		r.answered = true
	}
	r.mu.Unlock()
	if !mine {
		// Not the answer to the request tako made: a stray request, a
		// forged one, or a second one. The login goes on waiting.
		page(w, http.StatusBadRequest, "This is not the answer tako is waiting for (its state does not match), so it was ignored. If a login is open, finish it in the window tako opened.")
		return
	}
	r.got <- q
	if e := q.Get("error"); e != "" {
		msg := "The authorization server refused the login (" + truncateText(e, 80) + ")"
		if d := q.Get("error_description"); d != "" {
			msg += ": " + truncateText(d, 200)
		}
		page(w, http.StatusOK, msg+". You can close this window.")
		return
	}
	t := time.NewTimer(callbackWait)
	defer t.Stop()
	select {
	case err := <-r.result:
		if err != nil {
			page(w, http.StatusOK, "The login failed: "+truncateText(err.Error(), 300)+". You can close this window; the terminal says more.")
			return
		}
		page(w, http.StatusOK, "You are logged in. You can close this window and return to the terminal.")
	case <-t.C:
		page(w, http.StatusOK, "tako received the authorization and is still finishing the login; the terminal says how it ends. You can close this window.")
	case <-req.Context().Done():
	}
}

// finish implements finisher: the outcome the callback page waits for.
func (r *loopback) finish(err error) {
	select {
	case r.result <- err:
	default:
	}
}

func page(w http.ResponseWriter, status int, msg string) {
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><meta charset=utf-8><title>tako</title><p>%s</p>\n", html.EscapeString(msg))
}

// expect makes the callback take the answer to authURL (its state) only.
func (r *loopback) expect(authURL string) {
	if u, err := url.Parse(authURL); err == nil {
		r.mu.Lock()
		r.state = u.Query().Get("state")
		r.mu.Unlock()
	}
}

func (r *loopback) Wait(ctx context.Context, authURL string) (url.Values, error) {
	r.expect(authURL) // before the browser can answer
	out := r.l.Out
	if out == nil {
		out = os.Stderr
	}
	opened := false
	switch {
	case r.l.Open != nil:
		opened = r.l.Open(authURL) == nil
	case !r.l.NoBrowser:
		opened = browser.Open(authURL) == nil
	}
	if opened {
		fmt.Fprintf(out, "Opened a browser to authorize. If it did not open, visit:\n%s\n", authURL)
	} else {
		fmt.Fprintf(out, "Open this URL in a browser to authorize:\n%s\n", authURL)
	}
	timeout := r.l.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case q := <-r.got:
		return q, nil
	case <-t.C:
		return nil, fmt.Errorf("%w after %s", ErrTimeout, timeout)
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

func (r *loopback) Close() error {
	r.finish(errors.New("the login ended"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := r.srv.Shutdown(ctx)
	<-r.done
	return err
}

// Headless is the UserStep for tests and automated clients whose
// authorization server answers the authorization request without a
// person: at once with a redirect (as the conformance suite's does), or
// through redirects of its own (a login page that approves a test user,
// then the server's callback), as long as they stay at the authorization
// endpoint's origin. Headless GETs the authorization URL, follows those
// redirects (at most MaxHeadlessRedirects, with a cookie jar of its own
// when the HTTPClient has none) and reads code, state and iss from the
// Location that goes to the redirect URI. Nothing needs to listen there.
type Headless struct {
	// RedirectURL is the redirect URI to use; nothing needs to listen
	// there. Empty means http://localhost:3000/callback.
	RedirectURL string
	// HTTPClient sends the requests; nil means http.DefaultClient. Its
	// redirect policy is replaced.
	HTTPClient *http.Client
}

// MaxHeadlessRedirects bounds the redirects Headless follows within the
// authorization server before the one to the redirect URI.
const MaxHeadlessRedirects = 10

// Start implements UserStep.
func (h *Headless) Start(context.Context) (Redirect, error) { return headless{h}, nil }

type headless struct{ h *Headless }

func (r headless) URL() string {
	if r.h.RedirectURL != "" {
		return r.h.RedirectURL
	}
	return "http://localhost:3000/callback"
}

func (r headless) Close() error { return nil }

func (r headless) Wait(ctx context.Context, authURL string) (url.Values, error) {
	base := r.h.HTTPClient
	if base == nil {
		base = http.DefaultClient
	}
	c := *base
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if c.Jar == nil {
		// A login step may set a session cookie for the next hop.
		c.Jar, _ = cookiejar.New(nil)
	}
	want, err := url.Parse(r.URL())
	if err != nil {
		return nil, err
	}
	start, err := url.Parse(authURL)
	if err != nil {
		return nil, fmt.Errorf("auth: authorization URL: %w", err)
	}
	next := start
	for range MaxHeadlessRedirects + 1 {
		loc, err := headlessHop(ctx, &c, next)
		if err != nil {
			return nil, err
		}
		if sameOrigin(loc, want) && strings.TrimSuffix(loc.Path, "/") == strings.TrimSuffix(want.Path, "/") {
			return loc.Query(), nil
		}
		if !sameOrigin(loc, start) {
			// Somewhere else than the server and the redirect URI: a
			// person's step (an identity provider's login) that no
			// headless client can take.
			return nil, fmt.Errorf("auth: authorization redirect goes to %s, not the redirect URI", redactURL(loc.String()))
		}
		next = loc
	}
	return nil, fmt.Errorf("auth: authorization at %s: more than %d redirects", redactURL(authURL), MaxHeadlessRedirects)
}

// headlessHop GETs u and returns where its redirect goes.
func headlessHop(ctx context.Context, c *http.Client, u *url.URL) (*url.URL, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("auth: authorization URL: %w", err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("auth: authorization request to %s: %w", redactURL(u.String()), err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode < 300 || resp.StatusCode > 399 {
		return nil, fmt.Errorf("auth: authorization request to %s: HTTP %d, not a redirect", redactURL(u.String()), resp.StatusCode)
	}
	loc, err := resp.Location()
	if err != nil {
		return nil, fmt.Errorf("auth: authorization redirect: %w", err)
	}
	return loc, nil
}
