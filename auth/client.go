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
// One authorization runs at a time (flow): concurrent requests that all
// get a 401 wait for the first one's authorization and then find a token
// that differs from the one they were refused with, and are retried
// without a second flow. A refresh takes the same lock.
//
// Loops are bounded twice: the transport re-sends one request at most
// streamablehttp.MaxAuthRetries times, and the Client runs at most
// MaxAttempts authorizations for the same scopes at the same server within
// AttemptWindow (the conformance suite's scope-retry-limit), then returns
// ErrStepUpLimit.
//
// Token mechanics are golang.org/x/oauth2's: the authorization URL with
// PKCE, the code exchange, the token response's parsing and error type,
// client authentication in the header or the body. Requests x/oauth2 has
// no call for (refresh with a resource indicator, client credentials with
// an assertion, token exchange, JWT bearer) go through its
// clientcredentials package, whose endpoint parameters may set the grant
// type. JWTs (client assertions, DPoP proofs) are signed with go-jose.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tako-mcp/tako/streamablehttp"
)

// Client authorizes requests to one MCP server. Create it with New; it is
// safe for concurrent use. Plug it into Streamable HTTP with
// StreamableHTTP, into a WebSocket dial with Header, into gRPC as a
// credentials.PerRPCCredentials (it implements the interface).
type Client struct {
	cfg       Config
	server    *url.URL
	canonical string // the store key: the canonical server URI
	f         *fetcher
	dp        *dpop // nil without Config.DPoP
	store     TokenStore
	log       *slog.Logger

	flow sync.Mutex // one authorization or refresh at a time

	mu       sync.Mutex
	loaded   bool
	rec      *Record
	md       *ServerMetadata // of rec.Issuer, once discovered
	scopes   []string        // the scopes last requested
	attempts map[string][]time.Time

	failed      error // the last authorization's error, if it failed
	failedToken string
	failedAt    time.Time
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
	c := &Client{server: u, canonical: canon, attempts: map[string][]time.Time{}}
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
		if c.dp, err = newDPoP(c.cfg.DPoPKey); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func withScheme(u *url.URL, scheme string) *url.URL {
	v := *u
	v.Scheme = scheme
	return &v
}

// Resource is the canonical URI of the server, the key tokens are stored
// under.
func (c *Client) Resource() string { return c.canonical }

// StreamableHTTP returns the hooks for streamablehttp.Options.Auth.
func (c *Client) StreamableHTTP() streamablehttp.Auth {
	return streamablehttp.Auth{Authorize: c.AuthorizeRequest, OnUnauthorized: c.HandleUnauthorized}
}

// Token returns the current token, refreshed first when it is about to
// expire and can be; nil when there is none yet (the server's 401 will
// start the flow). It never starts an interactive flow.
func (c *Client) Token(ctx context.Context) (*Token, error) {
	rec := c.current(ctx)
	if rec == nil || rec.Token == nil {
		return nil, nil
	}
	if rec.Token.validFor(c.cfg.RefreshBefore) {
		return rec.Token, nil
	}
	if rec.Token.RefreshToken != "" {
		c.flow.Lock()
		err := c.refreshCurrent(ctx, rec)
		c.flow.Unlock()
		if err == nil {
			return c.current(ctx).Token, nil
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
	if !c.loaded {
		c.loaded = true
		if rec, err := c.store.Load(ctx, c.canonical, ""); err == nil {
			c.rec = rec
		} else if !errors.Is(err, ErrNotStored) {
			c.log.Warn("auth: token store", "err", err)
		}
	}
	return c.rec
}

// AuthorizeRequest sets req's authorization from the current token:
// "Authorization: Bearer", or for a DPoP-bound token "Authorization: DPoP"
// and a fresh DPoP proof. Without a token it sets nothing.
func (c *Client) AuthorizeRequest(req *http.Request) error {
	tok, err := c.Token(req.Context())
	if err != nil || tok == nil {
		return err
	}
	at := tok.AccessToken.Reveal()
	if strings.EqualFold(tok.TokenType, "DPoP") && c.dp != nil {
		p, err := c.dp.proof(req.Method, req.URL, at)
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
// or an empty header when there is none.
func (c *Client) Header(ctx context.Context) (http.Header, error) {
	h := http.Header{}
	tok, err := c.Token(ctx)
	if err != nil || tok == nil {
		return h, err
	}
	h.Set("Authorization", "Bearer "+tok.AccessToken.Reveal())
	return h, nil
}

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

// HandleUnauthorized acts on a 401 or 403 from the MCP server (resp's body
// may already be closed; its header and Request are read). It returns nil
// when new credentials were obtained and the request should be sent
// again: a DPoP nonce learnt, another request's authorization finished
// meanwhile, a refresh, or a complete authorization. Otherwise the error
// says why (errors.Is with the package's sentinels, errors.As with
// *ProtocolError).
func (c *Client) HandleUnauthorized(ctx context.Context, resp *http.Response) error {
	ch, err := ParseResourceChallenge(resp.Header)
	if err != nil {
		return err
	}
	var reqURL *url.URL
	if resp.Request != nil {
		reqURL = resp.Request.URL
	}
	if c.dp != nil && reqURL != nil {
		learnt := c.dp.learnNonce(reqURL, resp.Header)
		if ch.Error == "use_dpop_nonce" {
			if learnt {
				return nil
			}
			return fmt.Errorf("auth: the server asks for a DPoP nonce and gives none (or the same again)")
		}
	}
	stepUp := resp.StatusCode == http.StatusForbidden && ch.Error == "insufficient_scope"
	if resp.StatusCode == http.StatusForbidden && !stepUp {
		return fmt.Errorf("auth: the server refuses the request (403, %q)", ch.Error)
	}
	refused := usedToken(resp.Request)

	c.flow.Lock()
	defer c.flow.Unlock()
	c.mu.Lock()
	lastErr := c.failed
	recent := lastErr != nil && c.failedToken == refused && time.Since(c.failedAt) < failureMemory
	c.mu.Unlock()
	if recent {
		// The same refusal right after a failed authorization (the
		// engine trying another handshake on the same server): the
		// answer has not changed, and the user is not asked twice.
		return lastErr
	}
	if rec := c.current(ctx); !stepUp && rec != nil && rec.Token != nil && rec.Token.AccessToken.Reveal() != refused && rec.Token.validFor(0) {
		return nil // authorized meanwhile
	}
	err = c.authorize(ctx, ch, stepUp, refused)
	c.mu.Lock()
	c.failed, c.failedToken, c.failedAt = err, refused, time.Now()
	c.mu.Unlock()
	return err
}

// failureMemory is how long a failed authorization is the answer to the
// same refusal, so that a transport's or engine's immediate retry (a
// second handshake) does not start a second flow.
const failureMemory = 5 * time.Second

// usedToken is the access token a request carried.
func usedToken(req *http.Request) string {
	if req == nil {
		return ""
	}
	_, tok, _ := strings.Cut(req.Header.Get("Authorization"), " ")
	return strings.TrimSpace(tok)
}

// Logout forgets every registration and token stored for the server.
func (c *Client) Logout(ctx context.Context) error {
	c.mu.Lock()
	c.rec, c.md, c.loaded = nil, nil, true
	c.mu.Unlock()
	return c.store.Delete(ctx, c.canonical, "")
}

// save makes rec the current record and stores it.
func (c *Client) save(ctx context.Context, rec *Record, md *ServerMetadata) error {
	rec.Saved = time.Now()
	c.mu.Lock()
	c.rec, c.md, c.loaded = rec, md, true
	c.mu.Unlock()
	if err := c.store.Save(ctx, rec); err != nil {
		return err
	}
	return nil
}

// countAttempt records one authorization for key and reports whether it
// is within the limit.
func (c *Client) countAttempt(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	var keep []time.Time
	for _, t := range c.attempts[key] {
		if now.Sub(t) < c.cfg.AttemptWindow {
			keep = append(keep, t)
		}
	}
	if len(keep) >= c.cfg.MaxAttempts {
		c.attempts[key] = keep
		return false
	}
	c.attempts[key] = append(keep, now)
	return true
}
