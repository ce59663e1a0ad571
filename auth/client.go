package auth

// Design note.
//
// A Client is the authorization of one MCP server (one resource) for one
// program. It plugs into a transport as two functions, never into its
// core: one that sets a request's Authorization (and, for DPoP, its proof)
// from the current token, and one that is handed the server's 401 or 403
// and either gets new credentials (the request is then sent again) or
// says why not.
//
// The flow is driven by the server's answers, as the specification has
// it: no token, or a stale one, gets a 401 whose challenge names the
// protected resource metadata; that names the authorization server, whose
// metadata names the endpoints; registration, the grant and the token
// request follow. Discovery is done again on every challenge, not cached:
// the resource may have moved to another authorization server, and
// credentials are bound to the server that issued them (a stored Record
// names its issuer and is only used with it), so a move means a new
// registration and never a token or client id shown to the wrong server.
//
// Two clocks. A request's context is the request's clock: a probe of three
// seconds, a call's deadline. A login is a person's: typing a password,
// finding a phone, reading a consent page. So an authorization runs as an
// attempt of its own (attempt.go), on a context that keeps the request's
// values but not its deadline, bounded by Config.LoginTimeout; the
// requests that were refused wait for it as long as their contexts allow.
// One that gives up by its deadline gets a *LoginPendingError, which can
// wait for the login (the engine does, for its own short timeouts), and
// the next refused request joins the attempt instead of starting another;
// one that is cancelled (Ctrl-C), when no other request waits, ends it.
//
// One authorization or refresh runs at a time: in a process through the
// flow lock (a channel, so that waiting for it honours the caller's
// context), and across processes that share a LockingStore through the
// store's lock, under which the store is read again before a refresh: a
// refresh token another process has already redeemed is not sent twice.
//
// Loops are bounded: the transport re-sends one request at most
// streamablehttp.MaxAuthRetries times; the Client runs at most MaxAttempts
// authorizations, or refreshes answering a refusal, for the same scopes at
// the same server within AttemptWindow, and at most MaxAttempts step-ups
// per resource, then returns ErrStepUpLimit; a refresh token the server
// refused is not sent again; discovery fetches a bounded number of
// documents per challenge; every document and answer has a size limit.
//
// The token endpoint is spoken to directly (token.go), so that its answers
// are parsed as strictly as a hostile server requires; golang.org/x/oauth2
// builds the authorization URL and the PKCE verifier. JWTs (client
// assertions, DPoP proofs) are signed with go-jose.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultLoginTimeout bounds one authorization, the user's part included,
// when Config.LoginTimeout is zero.
const DefaultLoginTimeout = 5 * time.Minute

// Client authorizes requests to one MCP server. Create it with New; it is
// safe for concurrent use. It is an httpauth.Authorizer (AuthorizeRequest
// and HandleUnauthorized): plug it into streamablehttp.Options.Auth and
// websocket.Options.Auth, or a dial.Server's Auth; and into gRPC as a
// credentials.PerRPCCredentials (it implements the interface too). The
// auth package imports no transport: the seam is the transports'.
type Client struct {
	cfg       Config
	server    *url.URL
	canonical string // the store key: the canonical server URI
	f         *fetcher
	dp        atomic.Pointer[dpop] // nil without DPoP
	store     TokenStore
	log       *slog.Logger

	// flow holds one token: taken (lockFlow) by the authorization or
	// refresh in progress.
	flow chan struct{}

	mu       sync.Mutex
	loaded   bool
	rec      *Record
	md       *ServerMetadata // of rec.Issuer, once discovered
	scopes   []string        // the scopes last requested
	attempts map[string][]time.Time
	stepUps  []time.Time
	pending  *attempt // the authorization under way, if any

	failed      error // the last authorization's error, if it failed
	failedToken string
	failedAt    time.Time

	// deadRefresh is the digest of the refresh token the server last
	// refused, and deadErr why: it is not sent again.
	deadRefresh string
	deadErr     error
}

// New returns a Client for the MCP server at serverURL.
func New(serverURL string, cfg *Config) (*Client, error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return nil, err
	}
	// A WebSocket server's metadata and tokens are its HTTP origin's.
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "ws":
		u = withScheme(u, "http")
	case "wss":
		u = withScheme(u, "https")
	default:
		return nil, fmt.Errorf("auth: %q is not an http(s) or ws(s) URL", serverURL)
	}
	canon, err := CanonicalResource(u.String())
	if err != nil {
		return nil, err
	}
	c := &Client{server: u, canonical: canon, attempts: map[string][]time.Time{}, flow: make(chan struct{}, 1)}
	if cfg != nil {
		c.cfg = *cfg
	}
	c.f = newFetcher(c.cfg.HTTPClient, c.cfg.MaxDocumentSize)
	c.store = c.cfg.Store
	if c.store == nil {
		c.store = &MemoryStore{}
	}
	c.log = c.cfg.Logger
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.cfg.MaxAttempts <= 0 {
		c.cfg.MaxAttempts = 3
	}
	if c.cfg.AttemptWindow <= 0 {
		c.cfg.AttemptWindow = time.Minute
	}
	if c.cfg.RefreshBefore <= 0 {
		c.cfg.RefreshBefore = 30 * time.Second
	}
	if c.cfg.LoginTimeout <= 0 {
		c.cfg.LoginTimeout = DefaultLoginTimeout
	}
	if c.cfg.ApplicationType == "" {
		c.cfg.ApplicationType = "native"
	}
	if c.cfg.ClientName == "" {
		c.cfg.ClientName = "tako"
	}
	if c.cfg.LegacyProtocolVersion == "" {
		c.cfg.LegacyProtocolVersion = "2025-03-26"
	}
	if c.cfg.DPoP {
		d, err := newDPoP(c.cfg.DPoPKey)
		if err != nil {
			return nil, err
		}
		c.dp.Store(d)
	}
	return c, nil
}

func withScheme(u *url.URL, scheme string) *url.URL {
	v := *u
	v.Scheme = scheme
	return &v
}

// Format prints the Client without a token or secret, for every verb.
func (c *Client) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "auth.Client{%s}", c.canonical)
}

// LogValue logs the Client without a token or secret.
func (c *Client) LogValue() slog.Value { return slog.StringValue(fmt.Sprint(c)) }

// Resource is the canonical URI of the server, the key tokens are stored
// under.
func (c *Client) Resource() string { return c.canonical }

// lockFlow takes the flow lock, or returns when ctx ends first.
func (c *Client) lockFlow(ctx context.Context) error {
	select {
	case c.flow <- struct{}{}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (c *Client) tryLockFlow() bool {
	select {
	case c.flow <- struct{}{}:
		return true
	default:
		return false
	}
}

func (c *Client) unlockFlow() { <-c.flow }

// margin is how long before its expiry tok is refreshed: RefreshBefore,
// but never more than a quarter of the token's lifetime, so that a token
// that lives 20 seconds is refreshed after 15, not on every request.
func (c *Client) margin(tok *Token) time.Duration {
	m := c.cfg.RefreshBefore
	if life := tok.lifetime(); life > 0 && m > life/4 {
		m = life / 4
	}
	return m
}

// Token returns the current token, refreshed first when it is about to
// expire and can be; nil when there is none yet (the server's 401 will
// start the flow). It never starts an interactive flow. It waits for a
// refresh (its own or another's) only when the token has expired, and
// then only as long as ctx allows.
func (c *Client) Token(ctx context.Context) (*Token, error) {
	rec := c.current(ctx)
	if rec == nil || rec.Token == nil {
		return nil, nil
	}
	if rec.Token.validFor(c.margin(rec.Token)) {
		return rec.Token, nil
	}
	if rec.Token.RefreshToken != "" && !c.refreshRefused(rec.Token) {
		// A token that still works is used while someone else refreshes
		// (or logs in); an expired one waits for the lock.
		if rec.Token.validFor(0) {
			if !c.tryLockFlow() {
				return rec.Token, nil
			}
		} else if err := c.lockFlow(ctx); err != nil {
			return nil, err
		}
		err := c.refreshCurrent(ctx, rec)
		c.unlockFlow()
		if err == nil {
			if cur := c.current(ctx); cur != nil && cur.Token != nil {
				return cur.Token, nil
			}
			return nil, nil
		}
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		c.log.Debug("auth: refresh failed", "err", err)
	}
	if rec.Token.validFor(0) {
		return rec.Token, nil
	}
	return nil, nil
}

// current returns the record in use, loading it from the store the first
// time.
func (c *Client) current(ctx context.Context) *Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.currentLocked(ctx)
}

func (c *Client) currentLocked(ctx context.Context) *Record {
	if !c.loaded {
		c.loaded = true
		if rec, err := c.store.Load(ctx, c.canonical, ""); err == nil {
			c.adoptLocked(rec, nil)
		} else if !errors.Is(err, ErrNotStored) {
			c.log.Warn("auth: token store", "err", err)
		}
	}
	return c.rec
}

// adoptLocked makes rec the record in use, with md its issuer's metadata
// when known, and the DPoP key its token is bound to.
func (c *Client) adoptLocked(rec *Record, md *ServerMetadata) {
	if c.rec == nil || rec.Issuer != c.rec.Issuer {
		c.md = nil
	}
	c.rec = rec
	if md != nil {
		c.md = md
	}
	if rec.DPoPKey != "" && c.cfg.DPoPKey == nil {
		if d := c.dp.Load(); d == nil || d.jwk() != rec.DPoPKey.Reveal() {
			if d, err := dpopFromJWK(rec.DPoPKey.Reveal()); err == nil {
				c.dp.Store(d)
			} else {
				c.log.Warn("auth: the stored DPoP key does not load; the token bound to it cannot be used", "err", err)
			}
		}
	}
}

// AuthorizeRequest sets req's authorization from the current token:
// "Authorization: Bearer", or for a DPoP-bound token "Authorization: DPoP"
// and a fresh DPoP proof. Without a token it sets nothing; nor does it to
// a plain-http request to a host that is not loopback, where the token
// would travel in clear.
func (c *Client) AuthorizeRequest(req *http.Request) error {
	tok, err := c.Token(req.Context())
	if err != nil || tok == nil {
		return err
	}
	if err := checkEndpoint(req.URL.String(), "MCP server"); err != nil {
		return err
	}
	at := tok.AccessToken.Reveal()
	if strings.EqualFold(tok.TokenType, "DPoP") {
		d := c.dp.Load()
		if d == nil {
			return fmt.Errorf("auth: the token is DPoP-bound and its key is not here")
		}
		p, err := d.proof(req.Method, req.URL, at)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "DPoP "+at)
		req.Header.Set("DPoP", p)
		return nil
	}
	req.Header.Set("Authorization", "Bearer "+at)
	return nil
}

// Header returns the Authorization header for a request that cannot be
// signed per request (a WebSocket upgrade): the current token as Bearer,
// or an empty header when there is none. For a plain ws:// server that is
// not on loopback, where the token would travel in clear, it is an error
// wrapping ErrInsecureEndpoint.
func (c *Client) Header(ctx context.Context) (http.Header, error) {
	h := http.Header{}
	tok, err := c.Token(ctx)
	if err != nil || tok == nil {
		return h, err
	}
	if err := checkEndpoint(c.server.String(), "MCP server"); err != nil {
		return h, err
	}
	if strings.EqualFold(tok.TokenType, "DPoP") {
		// A bound token is useless as Bearer, and its proof signs one
		// request's method and URL, which a header for any request
		// cannot: AuthorizeRequest signs it.
		return h, errDPoPHeader
	}
	h.Set("Authorization", "Bearer "+tok.AccessToken.Reveal())
	return h, nil
}

var errDPoPHeader = errors.New("auth: the token is DPoP-bound: authorize the request itself with AuthorizeRequest, which signs its proof")

// GetRequestMetadata implements google.golang.org/grpc/credentials'
// PerRPCCredentials: the token goes in the authorization metadata of
// every RPC.
func (c *Client) GetRequestMetadata(ctx context.Context, _ ...string) (map[string]string, error) {
	tok, err := c.Token(ctx)
	if err != nil || tok == nil {
		return nil, err
	}
	return map[string]string{"authorization": "Bearer " + tok.AccessToken.Reveal()}, nil
}

// RequireTransportSecurity implements PerRPCCredentials: tokens go over
// TLS only, unless Config.GRPCInsecurePlaintext says otherwise.
func (c *Client) RequireTransportSecurity() bool { return !c.cfg.GRPCInsecurePlaintext }

// save makes rec the current record and stores it.
func (c *Client) save(ctx context.Context, rec *Record, md *ServerMetadata) error {
	rec.Saved = time.Now()
	if d := c.dp.Load(); d != nil && rec.Token != nil && strings.EqualFold(rec.Token.TokenType, "DPoP") {
		rec.DPoPKey = Secret(d.jwk())
	} else {
		rec.DPoPKey = ""
	}
	c.mu.Lock()
	c.loaded = true
	c.adoptLocked(rec, md)
	c.mu.Unlock()
	return c.store.Save(ctx, rec)
}

// countAttempt records one authorization for key and reports whether it
// is within the limit.
func (c *Client) countAttempt(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	keep, ok := c.within(c.attempts[key])
	c.attempts[key] = keep
	return ok
}

// within drops the times outside AttemptWindow and, when fewer than
// MaxAttempts remain, adds now.
func (c *Client) within(ts []time.Time) ([]time.Time, bool) {
	now := time.Now()
	var keep []time.Time
	for _, t := range ts {
		if now.Sub(t) < c.cfg.AttemptWindow {
			keep = append(keep, t)
		}
	}
	if len(keep) >= c.cfg.MaxAttempts {
		return keep, false
	}
	return append(keep, now), true
}
