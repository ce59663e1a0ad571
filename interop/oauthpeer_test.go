package interop

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/client/rp"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// The OAuth peers: an authorization server on github.com/zitadel/oidc/v3's
// op package (an OpenID provider that is also an OAuth 2.0 authorization
// server), in front of an MCP server on the official Go SDK guarded by the
// SDK's bearer-token middleware. Both run in the test process, on
// 127.0.0.1.
//
// zitadel's provider does the protocol: the authorization endpoint and its
// parameter checks, PKCE, the code, refresh and client credentials grants,
// refresh token rotation, signing JWT access tokens and serving their keys.
// Its example storage keeps auth requests, codes and tokens. What it lacks
// for MCP is added here, as an operator of such a server would:
//
//   - RFC 7591 registration: /register, into a client table of this file's
//     (the library has no registration endpoint);
//   - RFC 8414 metadata at /.well-known/oauth-authorization-server, the
//     library's own discovery document plus the registration endpoint
//     (the library serves only /.well-known/openid-configuration);
//   - a login page that approves a fixed test user at once;
//   - the "scope" claim in JWT access tokens (RFC 9068; the library puts
//     only the standard claims there) and a configurable lifetime.
//
// The library ignores the RFC 8707 resource parameter, so the server
// records what tako sent instead.

const (
	scopeTools = "mcp:tools" // every MCP request
	scopeAdmin = "mcp:admin" // the admin tool, for step-up
	// The client credentials client configured ahead of time.
	serviceClientID     = "tako-service"
	serviceClientSecret = "service-secret-for-tests"
)

// oauthPeer is a running authorization server and MCP server.
type oauthPeer struct {
	Issuer string // the authorization server
	MCPURL string // the MCP endpoint
	store  *asStorage

	mu       sync.Mutex
	requests []asRequest // authorization and token requests, in order
	mcpAuth  []string    // Authorization headers the MCP server saw
}

// asRequest is one authorization or token request as the AS saw it.
type asRequest struct {
	Endpoint  string // "authorize" or "token"
	GrantType string
	Scope     string
	Resource  string
	ClientID  string
}

// startOAuthPeer starts both servers; they stop when the test ends.
func startOAuthPeer(t *testing.T) *oauthPeer {
	t.Helper()
	p := &oauthPeer{}
	asLn := listen(t)
	p.Issuer = "http://" + asLn.Addr().String()
	users := storage.NewUserStore(p.Issuer)
	p.store = &asStorage{
		Storage: storage.NewStorageWithClients(users, map[string]*storage.Client{}),
		clients: map[string]*asClient{serviceClientID: {
			id: serviceClientID, secret: serviceClientSecret,
			authMethod: oidc.AuthMethodBasic, grants: []oidc.GrantType{oidc.GrantTypeClientCredentials},
		}},
	}
	p.store.ttl.Store(int64(time.Hour))
	provider, err := op.NewProvider(&op.Config{
		CryptoKey:             sha256.Sum256([]byte("tako interop")),
		CodeMethodS256:        true,
		AuthMethodPost:        true,
		GrantTypeRefreshToken: true,
		SupportedScopes:       []string{oidc.ScopeOpenID, oidc.ScopeOfflineAccess, scopeTools, scopeAdmin},
	}, p.store, op.StaticIssuer(p.Issuer), op.WithAllowInsecure())
	if err != nil {
		t.Fatal(err)
	}
	callback := op.AuthCallbackURL(provider)
	user := "test-user@127.0.0.1" // the example user store's first user, for this issuer

	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		md := op.CreateDiscoveryConfig(op.ContextWithIssuer(r.Context(), p.Issuer), provider, p.store)
		md.RegistrationEndpoint = p.Issuer + "/register"
		writeJSON(w, http.StatusOK, md)
	})
	mux.HandleFunc("POST /register", p.register)
	// The login page: the fixed test user, approved at once, so that
	// anything that follows redirects (tako's Headless step, a browser)
	// completes the flow.
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("authRequestID")
		if err := p.store.CheckUsernamePassword(user, "verysecure", id); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		http.Redirect(w, r, callback(op.ContextWithIssuer(r.Context(), p.Issuer), id), http.StatusFound)
	})
	mux.Handle("/", p.record(provider, provider.AuthorizationEndpoint().Relative(), provider.TokenEndpoint().Relative()))
	serve(t, asLn, mux)

	// The MCP server: the go-sdk's Streamable HTTP handler behind its
	// RequireBearerToken, which checks each JWT with the AS's keys
	// (fetched from its jwks_uri, as a separate resource server would).
	mcpLn := listen(t)
	base := "http://" + mcpLn.Addr().String()
	p.MCPURL = base + "/mcp"
	prm := base + "/.well-known/oauth-protected-resource/mcp"
	keys := rp.NewRemoteKeySet(http.DefaultClient, p.Issuer+"/keys")
	verifier := op.NewAccessTokenVerifier(p.Issuer, keys)
	verify := func(ctx context.Context, token string, _ *http.Request) (*sdkauth.TokenInfo, error) {
		claims, err := op.VerifyAccessToken[*oidc.AccessTokenClaims](ctx, token, verifier)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", sdkauth.ErrInvalidToken, err)
		}
		return &sdkauth.TokenInfo{Scopes: claims.Scopes, Expiration: claims.Expiration.AsTime(), UserID: claims.Subject}, nil
	}
	guard := sdkauth.RequireBearerToken(verify, &sdkauth.RequireBearerTokenOptions{ResourceMetadataURL: prm, Scopes: []string{scopeTools}})
	srv := mcp.NewServer(&mcp.Implementation{Name: "tako-oauth-peer", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "The token's subject and scopes (mcp:tools)."}, whoami)
	mcp.AddTool(srv, &mcp.Tool{Name: "admin", Description: "Needs the mcp:admin scope."}, whoami)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	mmux := http.NewServeMux()
	mmux.Handle("/.well-known/oauth-protected-resource/mcp", sdkauth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: p.MCPURL, AuthorizationServers: []string{p.Issuer}, ScopesSupported: []string{scopeTools},
	}))
	mmux.Handle("/mcp", p.seen(guard(stepUp(prm, h))))
	serve(t, mcpLn, mmux)
	return p
}

// whoami answers both tools with what the token says.
func whoami(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	ti := req.Extra.TokenInfo
	if ti == nil {
		return nil, nil, fmt.Errorf("no token info")
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: ti.UserID + " " + strings.Join(ti.Scopes, " ")}}}, nil, nil
}

// stepUp refuses a call of the admin tool without mcp:admin with 403
// insufficient_scope (RFC 6750 §3.1), naming every scope the call needs.
// The go-sdk middleware guards a whole handler, not one tool, and its 403
// names the scope but not the error code, so a per-tool check is the
// server's own.
func stepUp(prm string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
				Params struct {
					Name string `json:"name"`
				} `json:"params"`
			}
			_ = json.Unmarshal(body, &msg)
			ti := sdkauth.TokenInfoFromContext(r.Context())
			if msg.Method == "tools/call" && msg.Params.Name == "admin" && (ti == nil || !slices.Contains(ti.Scopes, scopeAdmin)) {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="%s %s", resource_metadata="%s", error_description="the admin tool needs %s"`,
					scopeTools, scopeAdmin, prm, scopeAdmin))
				http.Error(w, "insufficient scope", http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// record notes the authorization and token requests before the provider
// handles them (ParseForm keeps the form for the provider's own parse).
func (p *oauthPeer) record(next http.Handler, authPath, tokenPath string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rq asRequest
		switch strings.TrimPrefix(r.URL.Path, "/") {
		case strings.TrimPrefix(authPath, "/"):
			rq.Endpoint = "authorize"
		case strings.TrimPrefix(tokenPath, "/"):
			rq.Endpoint = "token"
		}
		if rq.Endpoint != "" {
			if err := r.ParseForm(); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			rq.GrantType, rq.Scope, rq.Resource, rq.ClientID = r.Form.Get("grant_type"), r.Form.Get("scope"), r.Form.Get("resource"), r.Form.Get("client_id")
			p.mu.Lock()
			p.requests = append(p.requests, rq)
			p.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

// seen records the Authorization header of every MCP request.
func (p *oauthPeer) seen(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.mcpAuth = append(p.mcpAuth, r.Header.Get("Authorization"))
		p.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// Requests returns the authorization and token requests so far.
func (p *oauthPeer) Requests() []asRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.requests)
}

// count is how many recorded requests match endpoint and grant type ("" for any).
func (p *oauthPeer) count(endpoint, grant string) int {
	n := 0
	for _, r := range p.Requests() {
		if r.Endpoint == endpoint && (grant == "" || r.GrantType == grant) {
			n++
		}
	}
	return n
}

// register is RFC 7591 dynamic client registration, for native and web
// clients alike: a public client ("none") gets no secret.
func (p *oauthPeer) register(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs            []string `json:"redirect_uris"`
		GrantTypes              []string `json:"grant_types"`
		TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
		ClientName              string   `json:"client_name"`
		ApplicationType         string   `json:"application_type"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&req); err != nil || len(req.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	c := &asClient{id: "dyn-" + rand.Text()[:12], redirectURIs: req.RedirectURIs, authMethod: oidc.AuthMethod(req.TokenEndpointAuthMethod)}
	switch c.authMethod {
	case "":
		c.authMethod = oidc.AuthMethodBasic
	case oidc.AuthMethodNone, oidc.AuthMethodBasic, oidc.AuthMethodPost:
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata", "error_description": "unsupported token_endpoint_auth_method"})
		return
	}
	if c.authMethod != oidc.AuthMethodNone {
		c.secret = rand.Text()
	}
	for _, g := range req.GrantTypes {
		if g == string(oidc.GrantTypeCode) || g == string(oidc.GrantTypeRefreshToken) {
			c.grants = append(c.grants, oidc.GrantType(g))
		}
	}
	if len(c.grants) == 0 {
		c.grants = []oidc.GrantType{oidc.GrantTypeCode}
	}
	c.native = req.ApplicationType != "web"
	p.store.mu.Lock()
	p.store.clients[c.id] = c
	p.store.mu.Unlock()
	resp := map[string]any{
		"client_id": c.id, "client_id_issued_at": time.Now().Unix(), "redirect_uris": c.redirectURIs,
		"grant_types": c.grants, "token_endpoint_auth_method": c.authMethod, "client_name": req.ClientName,
	}
	if c.secret != "" {
		resp["client_secret"] = c.secret
	}
	writeJSON(w, http.StatusCreated, resp)
}

// Registrations is how many clients registered dynamically.
func (p *oauthPeer) Registrations() int {
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	return len(p.store.clients) - 1
}

// SetTokenLifetime sets the lifetime of the access tokens issued from now on.
func (p *oauthPeer) SetTokenLifetime(d time.Duration) { p.store.ttl.Store(int64(d)) }

// LastExpiry is when the last access token issued expires.
func (p *oauthPeer) LastExpiry() time.Time {
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	return p.store.lastExp
}

// asStorage is zitadel's example storage with this file's clients, the
// configurable token lifetime and the scope claim.
type asStorage struct {
	*storage.Storage
	ttl atomic.Int64 // access token lifetime

	mu      sync.Mutex
	clients map[string]*asClient
	lastExp time.Time
}

var (
	_ op.Storage                        = (*asStorage)(nil)
	_ op.ClientCredentialsStorage       = (*asStorage)(nil)
	_ op.CanGetPrivateClaimsFromRequest = (*asStorage)(nil)
)

func (s *asStorage) client(id string) (*asClient, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[id]
	if !ok {
		return nil, oidc.ErrInvalidClient().WithDescription("unknown client")
	}
	return c, nil
}

// GetClientByClientID implements op.Storage.
func (s *asStorage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	return s.client(id)
}

// AuthorizeClientIDSecret implements op.Storage.
func (s *asStorage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	c, err := s.client(id)
	if err != nil {
		return err
	}
	if c.secret == "" || c.secret != secret {
		return oidc.ErrInvalidClient().WithDescription("wrong client secret")
	}
	return nil
}

// ClientCredentials implements op.ClientCredentialsStorage.
func (s *asStorage) ClientCredentials(ctx context.Context, id, secret string) (op.Client, error) {
	if err := s.AuthorizeClientIDSecret(ctx, id, secret); err != nil {
		return nil, err
	}
	c, err := s.client(id)
	if err != nil || !slices.Contains(c.grants, oidc.GrantTypeClientCredentials) {
		return nil, oidc.ErrUnauthorizedClient()
	}
	return c, nil
}

// ClientCredentialsTokenRequest implements op.ClientCredentialsStorage: the
// client is the token's subject.
func (s *asStorage) ClientCredentialsTokenRequest(_ context.Context, id string, scopes []string) (op.TokenRequest, error) {
	return &oidc.JWTTokenRequest{Subject: id, Audience: []string{id}, Scopes: scopes}, nil
}

// CreateAccessToken implements op.Storage with the configured lifetime.
func (s *asStorage) CreateAccessToken(ctx context.Context, req op.TokenRequest) (string, time.Time, error) {
	id, _, err := s.Storage.CreateAccessToken(ctx, req)
	return id, s.expiry(), err
}

// CreateAccessAndRefreshTokens implements op.Storage with the configured
// lifetime.
func (s *asStorage) CreateAccessAndRefreshTokens(ctx context.Context, req op.TokenRequest, current string) (string, string, time.Time, error) {
	id, rt, _, err := s.Storage.CreateAccessAndRefreshTokens(ctx, req, current)
	return id, rt, s.expiry(), err
}

func (s *asStorage) expiry() time.Time {
	exp := time.Now().Add(time.Duration(s.ttl.Load()))
	s.mu.Lock()
	s.lastExp = exp
	s.mu.Unlock()
	return exp
}

// GetPrivateClaimsFromRequest implements op.CanGetPrivateClaimsFromRequest:
// the granted scopes, as RFC 9068's scope claim.
func (s *asStorage) GetPrivateClaimsFromRequest(_ context.Context, _ op.TokenRequest, scopes []string) (map[string]any, error) {
	return map[string]any{"scope": strings.Join(scopes, " ")}, nil
}

// asClient is a client of the authorization server: registered
// dynamically, or the service client.
type asClient struct {
	id, secret   string
	redirectURIs []string
	authMethod   oidc.AuthMethod
	grants       []oidc.GrantType
	native       bool
}

var _ op.Client = (*asClient)(nil)

func (c *asClient) GetID() string                    { return c.id }
func (c *asClient) RedirectURIs() []string           { return c.redirectURIs }
func (c *asClient) PostLogoutRedirectURIs() []string { return nil }
func (c *asClient) ApplicationType() op.ApplicationType {
	if c.native {
		return op.ApplicationTypeNative
	}
	return op.ApplicationTypeWeb
}
func (c *asClient) AuthMethod() oidc.AuthMethod { return c.authMethod }
func (c *asClient) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (c *asClient) GrantTypes() []oidc.GrantType         { return c.grants }
func (c *asClient) LoginURL(id string) string            { return "/login?authRequestID=" + id }
func (c *asClient) AccessTokenType() op.AccessTokenType  { return op.AccessTokenTypeJWT }
func (c *asClient) IDTokenLifetime() time.Duration       { return time.Hour }
func (c *asClient) DevMode() bool                        { return false }
func (c *asClient) IsScopeAllowed(scope string) bool     { return strings.HasPrefix(scope, "mcp:") }
func (c *asClient) IDTokenUserinfoClaimsAssertion() bool { return false }
func (c *asClient) ClockSkew() time.Duration             { return 0 }
func (c *asClient) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *asClient) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

// listen opens a loopback listener on a free port.
func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// serve serves h on ln until the test ends.
func serve(t *testing.T, ln net.Listener, h http.Handler) {
	t.Helper()
	s := httptest.NewUnstartedServer(h)
	s.Listener.Close()
	s.Listener = ln
	s.Start()
	t.Cleanup(s.Close)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
