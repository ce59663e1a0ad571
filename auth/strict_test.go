package auth

import (
	"context"
	"crypto"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/tako-mcp/tako/mcp"
)

// strictAS is an authorization server that behaves as a strict OpenID
// Connect provider does, in front of a 2026-07-28 MCP endpoint:
//
//   - a refresh token only for offline_access, and offline_access only
//     with prompt=consent (OpenID Connect Core §11);
//   - no scope outside the client's registered scope (invalid_scope);
//   - a native client's loopback redirect URI matches at any port
//     (RFC 8252 §7.3), any other only exactly;
//   - refresh tokens rotate, and a used one presented again revokes the
//     whole grant (OAuth 2.1 §4.3.1);
//   - a revocation endpoint (RFC 7009);
//   - access tokens live ttl.
type strictAS struct {
	t   *testing.T
	srv *httptest.Server
	ttl time.Duration
	// person is the delay before the "person" approves in the browser.
	mu            sync.Mutex
	clients       map[string]regClient
	codes         map[string]grantReq
	access        map[string]grantReq // live access tokens
	refresh       map[string]grantReq // live refresh tokens
	used          map[string]grantReq // redeemed refresh tokens
	registrations int
	authorizes    int
	tokenReqs     int
	refreshes     int
	revocations   []string // token_type_hint of each revocation
	revokedGrants int
	lastAuthorize url.Values
	dpopKeys      []string // the jwk thumbprint of every DPoP proof at /mcp
}

type regClient struct {
	redirects []string
	scope     []string
}

type grantReq struct {
	client, scope, redirect, challenge string
	offline                            bool
	g                                  *grant
}

type grant struct{ revoked bool }

func newStrictAS(t *testing.T, ttl time.Duration) *strictAS {
	a := &strictAS{t: t, ttl: ttl, clients: map[string]regClient{}, codes: map[string]grantReq{},
		access: map[string]grantReq{}, refresh: map[string]grantReq{}, used: map[string]grantReq{}}
	mux := http.NewServeMux()
	a.srv = httptest.NewServer(mux)
	t.Cleanup(a.srv.Close)
	u := a.srv.URL
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", jsonDoc(ResourceMetadata{
		Resource: u + "/mcp", AuthorizationServers: []string{u}, ScopesSupported: []string{"mcp:read", "mcp:write"}}))
	mux.HandleFunc("/.well-known/openid-configuration", jsonDoc(ServerMetadata{
		Issuer: u, AuthorizationEndpoint: u + "/authorize", TokenEndpoint: u + "/token", RegistrationEndpoint: u + "/register",
		RevocationEndpoint: u + "/revoke", CodeChallengeMethodsSupported: []string{"S256"},
		ScopesSupported:     []string{"openid", "offline_access", "mcp:read", "mcp:write"},
		GrantTypesSupported: []string{"authorization_code", "refresh_token"}, TokenEndpointAuthMethodsSupported: []string{"none"},
		DPoPSigningAlgValuesSupported: []string{"ES256"},
	}))
	mux.HandleFunc("/register", a.register)
	mux.HandleFunc("/authorize", a.authorize)
	mux.HandleFunc("/token", a.token)
	mux.HandleFunc("/revoke", a.revoke)
	mux.HandleFunc("/mcp", a.mcp)
	return a
}

func (a *strictAS) oauthError(w http.ResponseWriter, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	fmt.Fprintf(w, `{"error":%q}`, code)
}

func (a *strictAS) register(w http.ResponseWriter, r *http.Request) {
	var reg registration
	_ = json.NewDecoder(r.Body).Decode(&reg)
	a.mu.Lock()
	a.registrations++
	id := fmt.Sprintf("client-%d", a.registrations)
	a.clients[id] = regClient{redirects: reg.RedirectURIs, scope: strings.Fields(reg.Scope)}
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]any{"client_id": id, "redirect_uris": reg.RedirectURIs, "scope": reg.Scope, "token_endpoint_auth_method": "none"})
}

// redirectOK is RFC 8252 §7.3's rule.
func redirectOK(registered []string, got string) bool {
	if slices.Contains(registered, got) {
		return true
	}
	g, err := url.Parse(got)
	if err != nil {
		return false
	}
	for _, r := range registered {
		ru, err := url.Parse(r)
		if err == nil && ru.Scheme == "http" && ru.Hostname() == "127.0.0.1" && g.Hostname() == "127.0.0.1" && ru.Path == g.Path {
			return true
		}
	}
	return false
}

func (a *strictAS) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.authorizes++
	a.lastAuthorize = q
	c, ok := a.clients[q.Get("client_id")]
	if !ok || !redirectOK(c.redirects, q.Get("redirect_uri")) {
		// A person sees an error page: no redirect to an unknown URI.
		http.Error(w, "unknown client or redirect_uri", http.StatusBadRequest)
		return
	}
	back := func(extra string) {
		http.Redirect(w, r, q.Get("redirect_uri")+"?state="+url.QueryEscape(q.Get("state"))+"&iss="+url.QueryEscape(a.srv.URL)+extra, http.StatusFound)
	}
	scopes := strings.Fields(q.Get("scope"))
	for _, s := range scopes {
		if !slices.Contains(c.scope, s) {
			back("&error=invalid_scope")
			return
		}
	}
	offline := slices.Contains(scopes, "offline_access") && strings.Contains(" "+q.Get("prompt")+" ", " consent ")
	if !offline {
		scopes = slices.DeleteFunc(scopes, func(s string) bool { return s == "offline_access" })
	}
	code := randomString(12)
	a.codes[code] = grantReq{client: q.Get("client_id"), scope: strings.Join(scopes, " "), redirect: q.Get("redirect_uri"),
		challenge: q.Get("code_challenge"), offline: offline, g: &grant{}}
	back("&code=" + code)
}

func (a *strictAS) issue(w http.ResponseWriter, r *http.Request, gr grantReq) {
	at := "at-" + randomString(12)
	a.access[at] = gr
	typ := "Bearer"
	if r.Header.Get("DPoP") != "" {
		typ = "DPoP"
	}
	resp := map[string]any{"access_token": at, "token_type": typ, "expires_in": a.ttl.Seconds(), "scope": gr.scope}
	if gr.offline {
		rt := "rt-" + randomString(12)
		a.refresh[rt] = gr
		resp["refresh_token"] = rt
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

func (a *strictAS) token(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tokenReqs++
	switch r.Form.Get("grant_type") {
	case "authorization_code":
		gr, ok := a.codes[r.Form.Get("code")]
		delete(a.codes, r.Form.Get("code"))
		h := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
		if !ok || gr.redirect != r.Form.Get("redirect_uri") || base64.RawURLEncoding.EncodeToString(h[:]) != gr.challenge || gr.client != r.Form.Get("client_id") {
			a.oauthError(w, "invalid_grant")
			return
		}
		a.issue(w, r, gr)
	case "refresh_token":
		a.refreshes++
		rt := r.Form.Get("refresh_token")
		if gr, reused := a.used[rt]; reused {
			// A rotated token seen again: stolen, or a client that lost
			// track. The grant ends (OAuth 2.1 §4.3.1).
			gr.g.revoked = true
			a.revokedGrants++
			a.oauthError(w, "invalid_grant")
			return
		}
		gr, ok := a.refresh[rt]
		if !ok || gr.g.revoked {
			a.oauthError(w, "invalid_grant")
			return
		}
		delete(a.refresh, rt)
		a.used[rt] = gr
		a.issue(w, r, gr)
	default:
		a.oauthError(w, "unsupported_grant_type")
	}
}

func (a *strictAS) revoke(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.revocations = append(a.revocations, r.Form.Get("token_type_hint"))
	tok := r.Form.Get("token")
	if gr, ok := a.refresh[tok]; ok {
		gr.g.revoked = true
		delete(a.refresh, tok)
	}
	delete(a.access, tok)
	w.WriteHeader(http.StatusOK)
}

// mcp is a 2026-07-28 endpoint: server/discover and tools/list, for a
// live access token of a live grant; the tool "write" needs mcp:write.
func (a *strictAS) mcp(w http.ResponseWriter, r *http.Request) {
	scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	a.mu.Lock()
	gr, ok := a.access[tok]
	if ok && gr.g.revoked {
		ok = false
	}
	if scheme == "DPoP" {
		a.dpopKeys = append(a.dpopKeys, proofThumbprint(r.Header.Get("DPoP")))
	}
	a.mu.Unlock()
	prm := a.srv.URL + "/.well-known/oauth-protected-resource/mcp"
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+prm+`"`)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	body, _ := io.ReadAll(r.Body)
	msg, err := mcp.DecodeMessage(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !msg.IsRequest() {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var result string
	switch msg.Method {
	case mcp.MethodDiscover:
		result = `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}`
	case mcp.MethodToolsList:
		result = `{"resultType":"complete","tools":[{"name":"write","inputSchema":{"type":"object"}}]}`
	case mcp.MethodToolsCall:
		if !slices.Contains(strings.Fields(gr.scope), "mcp:write") {
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="mcp:write", resource_metadata="`+prm+`"`)
			w.WriteHeader(http.StatusForbidden)
			return
		}
		result = `{"resultType":"complete","content":[{"type":"text","text":"written"}]}`
	default:
		result = `{"resultType":"complete"}`
	}
	w.Header().Set("Content-Type", "application/json")
	b, _ := json.Marshal(&mcp.Message{ID: msg.ID, Result: json.RawMessage(result)})
	_, _ = w.Write(b)
}

func (a *strictAS) count(f func() int) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return f()
}

// person is a UserStep that acts as a person at the browser: after pace,
// it opens the authorization URL, follows the server's redirect to the
// loopback callback, and reads the page the callback shows.
type person struct {
	pace time.Duration
	lb   *Loopback

	mu     sync.Mutex
	wg     sync.WaitGroup
	pages  []string
	starts int
}

func newPerson(t *testing.T, pace time.Duration) *person {
	p := &person{pace: pace, lb: &Loopback{Out: io.Discard, NoBrowser: true}}
	t.Cleanup(p.wg.Wait)
	return p
}

func (p *person) Start(ctx context.Context) (Redirect, error) {
	p.mu.Lock()
	p.starts++
	p.mu.Unlock()
	rd, err := p.lb.Start(ctx)
	if err != nil {
		return nil, err
	}
	return &personRedirect{Redirect: rd, p: p}, nil
}

// startOn lets the person's Loopback try the registered port, as Loopback does.
func (p *person) startOn(ctx context.Context, port string) (Redirect, error) {
	p.mu.Lock()
	p.starts++
	p.mu.Unlock()
	rd, err := p.lb.startOn(ctx, port)
	if err != nil {
		return nil, err
	}
	return &personRedirect{Redirect: rd, p: p}, nil
}

type personRedirect struct {
	Redirect
	p *person
}

func (r *personRedirect) finish(err error) { r.Redirect.(finisher).finish(err) }

func (r *personRedirect) Wait(ctx context.Context, authURL string) (url.Values, error) {
	r.Redirect.(*loopback).expect(authURL) // as Wait does before it opens the browser
	r.p.wg.Add(1)
	go func() {
		defer r.p.wg.Done()
		t := time.NewTimer(r.p.pace) // a person reading and typing: the wait is the point
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
		pctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(pctx, http.MethodGet, authURL, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		r.p.mu.Lock()
		r.p.pages = append(r.p.pages, string(b))
		r.p.mu.Unlock()
	}()
	return r.Redirect.Wait(ctx, authURL)
}

func (p *person) lastPage() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.pages) == 0 {
		return ""
	}
	return p.pages[len(p.pages)-1]
}

// proofThumbprint is the SHA-256 thumbprint of the key a DPoP proof
// carries, or "" for none.
func proofThumbprint(proof string) string {
	sig, err := jose.ParseSignedCompact(proof, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil || len(sig.Signatures) == 0 || sig.Signatures[0].Header.JSONWebKey == nil {
		return ""
	}
	tp, err := sig.Signatures[0].Header.JSONWebKey.Thumbprint(crypto.SHA256)
	if err != nil {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(tp)
}
