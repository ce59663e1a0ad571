package interop

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tests of the strict authorization server and its MCP resource server
// themselves, with clients of this file's (plain HTTP, the go-sdk's MCP
// client): they pin what the strict server demands, so that when tako's
// person's session (oidcstrict_session_test.go) fails, the failure is
// tako's.

// strictTestContext bounds a test against the strict server: longer than
// testContext, for the person's reading and the 20 s tokens.
func strictTestContext(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// startStrict starts the MCP resource server and the strict authorization
// server in front of it.
func startStrict(t *testing.T, ctx context.Context) (*strictOIDC, *mcpResource) {
	t.Helper()
	rs := startMCPResource(t)
	as := startStrictOIDC(t, ctx, rs.URL)
	rs.trust(t, ctx, as.Issuer)
	return as, rs
}

// TestOIDCStrictServer: the strict server's discovery documents are served
// and strict, the resource server refuses a request without a token and
// one with a bad token as RFC 6750 and RFC 9728 say, and the server
// refuses what a strict server refuses: a registration with an empty
// application_type or an unknown scope; an authorization request without
// PKCE or with plain PKCE, for a scope outside the registered one, for
// another resource.
func TestOIDCStrictServer(t *testing.T) {
	t.Parallel()
	ctx := strictTestContext(t, 60*time.Second)
	as, rs := startStrict(t, ctx)

	md := as.metadata(t, ctx, "/.well-known/oauth-authorization-server")
	oidc := as.metadata(t, ctx, "/.well-known/openid-configuration")
	for _, doc := range []map[string]any{md, oidc} {
		if doc["issuer"] != as.Issuer {
			t.Errorf("issuer %v, want %s", doc["issuer"], as.Issuer)
		}
	}
	wantList := func(key string, want ...string) {
		t.Helper()
		got := stringList(md[key])
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("%s is %v: lacks %q", key, got, w)
			}
		}
	}
	wantList("scopes_supported", "openid", "offline_access", scopeRead, scopeWrite)
	wantList("grant_types_supported", "authorization_code", "refresh_token")
	wantList("token_endpoint_auth_methods_supported", "none")
	wantList("dpop_signing_alg_values_supported", "ES256")
	if got := stringList(md["code_challenge_methods_supported"]); !slices.Equal(got, []string{"S256"}) {
		t.Errorf("code_challenge_methods_supported %v, want [S256]", got)
	}
	if got := stringList(md["response_types_supported"]); !slices.Equal(got, []string{"code"}) {
		t.Errorf("response_types_supported %v, want [code]", got)
	}
	if md["authorization_response_iss_parameter_supported"] != true {
		t.Errorf("authorization_response_iss_parameter_supported %v, want true", md["authorization_response_iss_parameter_supported"])
	}
	for _, k := range []string{"registration_endpoint", "revocation_endpoint", "jwks_uri", "authorization_endpoint", "token_endpoint"} {
		if s, _ := md[k].(string); !strings.HasPrefix(s, as.Issuer+"/") {
			t.Errorf("%s %v, want one at %s", k, md[k], as.Issuer)
		}
	}

	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		ScopesSupported      []string `json:"scopes_supported"`
	}
	if status := getJSON(t, ctx, rs.PRM, &prm); status != http.StatusOK {
		t.Fatalf("protected resource metadata: status %d", status)
	}
	if prm.Resource != rs.URL || !slices.Equal(prm.AuthorizationServers, []string{as.Issuer}) || !slices.Equal(prm.ScopesSupported, []string{scopeRead, scopeWrite}) {
		t.Errorf("protected resource metadata %+v", prm)
	}

	// The resource server: 401 without a token (no error code, RFC 6750
	// §3.1), 401 invalid_token with a bad one; both name the metadata.
	for _, tc := range []struct{ auth, wantErr string }{
		{"", ""},
		{"Bearer not-a-jwt", `error="invalid_token"`},
	} {
		status, challenge := postInitialize(t, ctx, rs.URL, tc.auth)
		if status != http.StatusUnauthorized || !strings.HasPrefix(challenge, "Bearer ") || !strings.Contains(challenge, `resource_metadata="`+rs.PRM+`"`) {
			t.Errorf("Authorization %q: status %d, WWW-Authenticate %q; want 401 naming %s", tc.auth, status, challenge, rs.PRM)
		}
		if tc.wantErr == "" && strings.Contains(challenge, "error=") || !strings.Contains(challenge, tc.wantErr) {
			t.Errorf("Authorization %q: WWW-Authenticate %q, want error %q", tc.auth, challenge, tc.wantErr)
		}
	}
	if n := len(rs.Refused()); n != 2 || len(rs.Accepted()) != 0 {
		t.Errorf("resource server: %d refused, %d accepted; want 2 and 0", n, len(rs.Accepted()))
	}

	// Registration.
	regEndpoint := md["registration_endpoint"].(string)
	for _, tc := range []struct {
		name string
		body map[string]any
	}{
		{"empty application_type", map[string]any{"application_type": ""}},
		{"unknown scope", map[string]any{"scope": "mcp:admin"}},
	} {
		body := map[string]any{
			"redirect_uris": []string{"http://127.0.0.1:1/callback"}, "grant_types": []string{"authorization_code", "refresh_token"},
			"response_types": []string{"code"}, "token_endpoint_auth_method": "none",
		}
		for k, v := range tc.body {
			body[k] = v
		}
		status, out := postJSON(t, ctx, regEndpoint, body)
		if status != http.StatusBadRequest || out["error"] != "invalid_client_metadata" {
			t.Errorf("registration with %s: status %d %v, want 400 invalid_client_metadata", tc.name, status, out)
		}
	}

	// Authorization requests that come back to the client as an error,
	// with iss (RFC 9207): without PKCE, with plain PKCE, for a scope
	// outside the registered one (offline_access, or mcp:write at a
	// step-up), for an unknown resource. A native client may use another
	// loopback port than the one registered (RFC 8252 §7.3).
	c := registerNative(t, ctx, as, "http://127.0.0.1:1/callback", scopeRead)
	pkce := url.Values{"code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"}, "code_challenge_method": {"S256"}}
	for _, tc := range []struct {
		name      string
		extra     url.Values
		wantError string
	}{
		{"without PKCE", url.Values{}, "invalid_request"},
		{"with plain PKCE", url.Values{"code_challenge": {"abcdefghijabcdefghijabcdefghijabcdefghij123"}, "code_challenge_method": {"plain"}}, "invalid_request"},
		{"with offline_access outside the registered scope", withPKCE(pkce, "scope", scopeRead+" offline_access", "prompt", "consent"), "invalid_scope"},
		{"with mcp:write outside the registered scope", withPKCE(pkce, "scope", scopeRead+" "+scopeWrite), "invalid_scope"},
		{"for another resource", withPKCE(pkce, "resource", rs.URL+"/other"), "invalid_target"},
		{"on another loopback port", withPKCE(pkce, "redirect_uri", "http://127.0.0.1:2/callback"), ""},
	} {
		q := url.Values{"response_type": {"code"}, "client_id": {c.ID}, "redirect_uri": {c.Redirect}, "scope": {scopeRead}, "state": {"s1"}, "resource": {rs.URL}}
		for k, v := range tc.extra {
			q[k] = v
		}
		loc := authorizeRedirect(t, ctx, md["authorization_endpoint"].(string)+"?"+q.Encode())
		back := loc.Query()
		switch {
		case tc.wantError == "" && !strings.HasPrefix(loc.String(), "/interaction/") && !strings.HasPrefix(loc.String(), as.Issuer+"/interaction/"):
			t.Errorf("authorization %s: redirected to %s, want the sign-in page", tc.name, loc)
		case tc.wantError != "" && (back.Get("error") != tc.wantError || back.Get("iss") != as.Issuer || back.Get("state") != "s1"):
			t.Errorf("authorization %s: redirected with %v, want error=%s, iss and state", tc.name, back, tc.wantError)
		}
	}
}

// withPKCE is pkce with the pairs kv added.
func withPKCE(pkce url.Values, kv ...string) url.Values {
	q := url.Values{}
	for k, v := range pkce {
		q[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	return q
}

// TestOIDCStrictHarnessLogin: the whole flow against the strict server
// with a client of this test's and the person-paced browser (reading each
// page for a second: the person's session test reads for 10 s): sign-in
// and consent pages, a refresh token only with prompt=consent, JWT access
// tokens for the resource with the scope asked for, accepted by the
// resource server (and write_note refused 403 insufficient_scope without
// mcp:write), a refresh that rotates the refresh token, a reused refresh
// token that revokes the grant, revocation, and a DPoP-bound token that
// the resource server takes only with its proof.
func TestOIDCStrictHarnessLogin(t *testing.T) {
	t.Parallel()
	ctx := strictTestContext(t, 3*time.Minute)
	as, rs := startStrict(t, ctx)
	md := as.metadata(t, ctx, "/.well-known/oauth-authorization-server")
	tokenURL, revokeURL := md["token_endpoint"].(string), md["revocation_endpoint"].(string)
	cb := startCallback(t)
	c := registerNative(t, ctx, as, cb.URL, "openid offline_access mcp:read mcp:write")
	p := newPerson(t, strictUser, strictPassword, time.Second)

	login := func(scope, prompt string) map[string]any {
		t.Helper()
		return harnessLogin(t, ctx, as, rs, p, md, c, cb, scope, prompt, nil)
	}
	refresh := func(rt string) (int, map[string]any) {
		t.Helper()
		return as.post(t, ctx, tokenURL, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {c.ID}, "resource": {rs.URL}})
	}

	// 1. Sign in and consent, offline_access with prompt=consent: a
	// refresh token, and an access token for the resource with mcp:read.
	tok := login("openid offline_access mcp:read", "consent")
	forms := []string{}
	for _, pg := range p.Pages() {
		if pg.Form != "" {
			forms = append(forms, pg.Form)
			if pg.Dwelt < time.Second {
				t.Errorf("the person read %s for %s, want at least 1s", pg.URL, pg.Dwelt)
			}
		}
	}
	if !slices.Equal(forms, []string{"login", "consent"}) {
		t.Errorf("pages with forms %v, want a sign-in then a consent page:%s", forms, p.Journal())
	}
	at, rt1 := tok["access_token"].(string), tok["refresh_token"].(string)
	if rt1 == "" {
		t.Fatalf("no refresh token with offline_access and prompt=consent: %v", tok)
	}
	claims := jwtClaims(t, at)
	if !slices.Equal([]string(claims.Audience), []string{rs.URL}) || claims.Scope != scopeRead || claims.ClientID != c.ID || claims.Subject != strictUser {
		t.Errorf("access token claims %+v", claims)
	}
	if life := claims.Expiry - claims.IssuedAt; life != 20 {
		t.Errorf("access token lives %ds, want 20", life)
	}
	s := sdkSession(t, ctx, rs.URL, at)
	if _, err := s.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list with the access token: %v", err)
	}
	if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "write_note", Arguments: map[string]any{"text": "x"}}); err == nil {
		t.Error("write_note without mcp:write succeeded")
	}
	if r := rs.Refused(); len(r) != 1 || r[0].Status != http.StatusForbidden || r[0].Tool != "write_note" {
		t.Errorf("resource server refused %v, want write_note with 403", r)
	}

	// 2. A refresh rotates the refresh token; the revocation of the new
	// one revokes the grant, so it is refused after; a JWT access token
	// cannot be revoked.
	mark := as.Mark(t, ctx)
	status, tok2 := refresh(rt1)
	rt2, _ := tok2["refresh_token"].(string)
	if status != http.StatusOK || rt2 == "" || rt2 == rt1 {
		t.Fatalf("refresh: %d, a new refresh token %v; want 200 and a rotated one", status, rt2 != "" && rt2 != rt1)
	}
	if status, out := as.post(t, ctx, revokeURL, url.Values{"token": {rt2}, "token_type_hint": {"refresh_token"}, "client_id": {c.ID}}); status != http.StatusOK {
		t.Errorf("revoking the refresh token: %d %v", status, out)
	}
	if status, out := as.post(t, ctx, revokeURL, url.Values{"token": {tok2["access_token"].(string)}, "client_id": {c.ID}}); status != http.StatusBadRequest || out["error"] != "unsupported_token_type" {
		t.Errorf("revoking a JWT access token: %d %v, want 400 unsupported_token_type", status, out)
	}
	if status, out := refresh(rt2); status != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Errorf("refresh with the revoked token: %d %v, want 400 invalid_grant", status, out)
	}
	if ev := as.since(t, ctx, mark, func(e oidcEvent) bool { return e.Event == "grant_revoked" }); len(ev) != 1 {
		t.Errorf("%d grants revoked, want 1:%s", len(ev), describe(as.Events(mark)))
	}

	// 3. A second login in the same browser: signed in already, but a
	// native client is asked for consent every time. A refresh token used
	// twice revokes the grant: the fresh one is refused too.
	before := len(p.Pages())
	tok = login("offline_access mcp:read", "consent")
	if pages := p.Pages()[before:]; len(pages) != 2 || pages[0].Form != "consent" {
		t.Errorf("second login: pages %v, want consent, then the callback", pages)
	}
	rt3 := tok["refresh_token"].(string)
	mark = as.Mark(t, ctx)
	status, tok4 := refresh(rt3)
	if status != http.StatusOK {
		t.Fatalf("refresh: %d %v", status, tok4)
	}
	if status, out := refresh(rt3); status != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Errorf("reusing a rotated refresh token: %d %v, want 400 invalid_grant", status, out)
	}
	if status, out := refresh(tok4["refresh_token"].(string)); status != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Errorf("the refresh token issued before the reuse: %d %v, want 400 invalid_grant (the grant is revoked)", status, out)
	}
	evs := as.since(t, ctx, mark, func(e oidcEvent) bool { return e.Event == "grant_revoked" || e.isReuse() || e.isRefresh() })
	var revoked, reuses, refreshes int
	for _, e := range evs {
		switch {
		case e.Event == "grant_revoked":
			revoked++
		case e.isReuse():
			reuses++
		case e.isRefresh():
			refreshes++
		}
	}
	if revoked != 1 || reuses != 1 || refreshes != 3 {
		t.Errorf("after a reuse: %d grants revoked, %d reuses seen, %d refresh requests; want 1, 1 and 3:%s", revoked, reuses, refreshes, describe(as.Events(mark)))
	}

	// 4. offline_access without prompt=consent: dropped, no refresh token;
	// mcp:write asked for and granted, so write_note is accepted.
	tok = login("offline_access mcp:read mcp:write", "")
	if _, ok := tok["refresh_token"]; ok {
		t.Errorf("a refresh token without prompt=consent: %v", tok)
	}
	if sc := jwtClaims(t, tok["access_token"].(string)).Scope; sc != "mcp:read mcp:write" {
		t.Errorf("access token scope %q, want mcp:read mcp:write", sc)
	}
	s = sdkSession(t, ctx, rs.URL, tok["access_token"].(string))
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "write_note", Arguments: map[string]any{"text": "x"}})
	if err != nil || res.IsError {
		t.Fatalf("write_note with mcp:write: %v %+v", err, res)
	}

	// 5. DPoP (RFC 9449): a code exchange with a proof gets a token bound
	// to the key, which the resource server takes only with the DPoP
	// scheme and a fresh proof of that key.
	key := newDPoPKey(t)
	tok = harnessLogin(t, ctx, as, rs, p, md, c, cb, "mcp:read", "", key)
	at = tok["access_token"].(string)
	if tok["token_type"] != "DPoP" || jwtClaims(t, at).Cnf.JKT != key.thumbprint {
		t.Fatalf("DPoP code exchange: token_type %v, cnf.jkt %q; want DPoP and %q", tok["token_type"], jwtClaims(t, at).Cnf.JKT, key.thumbprint)
	}
	if status, challenge := postInitialize(t, ctx, rs.URL, "Bearer "+at); status != http.StatusUnauthorized || !strings.Contains(challenge, "invalid_token") {
		t.Errorf("a DPoP-bound token as a bearer token: %d %q, want 401 invalid_token", status, challenge)
	}
	accepted := len(rs.Accepted())
	var mu sync.Mutex
	var used []string // the proofs sent
	s = sdkSessionWith(t, ctx, rs.URL, roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		proof := key.proof(t, r.Method, r.URL.Scheme+"://"+r.URL.Host+r.URL.Path, at)
		mu.Lock()
		used = append(used, proof)
		mu.Unlock()
		r.Header.Set("Authorization", "DPoP "+at)
		r.Header.Set("DPoP", proof)
		return http.DefaultTransport.RoundTrip(r)
	}))
	if _, err := s.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list with the DPoP-bound token and proofs: %v", err)
	}
	for _, r := range rs.Accepted()[accepted:] {
		if !r.DPoP {
			t.Errorf("accepted without a DPoP proof: %v", r)
		}
	}
	mu.Lock()
	first := used[0]
	mu.Unlock()
	if status, challenge := postInitialize(t, ctx, rs.URL, "DPoP "+at, "DPoP", first); status != http.StatusUnauthorized || !strings.Contains(challenge, "replayed") {
		t.Errorf("a proof used again: %d %q, want 401, replayed", status, challenge)
	}
	if status, challenge := postInitialize(t, ctx, rs.URL, "DPoP "+at, "DPoP", newDPoPKey(t).proof(t, http.MethodPost, rs.URL, at)); status != http.StatusUnauthorized {
		t.Errorf("a proof of another key: %d %q, want 401", status, challenge)
	}
}

// dpopKey is a DPoP key (RFC 9449) of a test's: ES256, its public key in
// each proof's header.
type dpopKey struct {
	signer     jose.Signer
	thumbprint string // base64url SHA-256 JWK thumbprint (RFC 7638)
}

func newDPoPKey(t *testing.T) *dpopKey {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: priv}, (&jose.SignerOptions{EmbedJWK: true}).WithType("dpop+jwt"))
	if err != nil {
		t.Fatal(err)
	}
	thumb, err := (&jose.JSONWebKey{Key: priv.Public()}).Thumbprint(crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	return &dpopKey{signer: signer, thumbprint: base64.RawURLEncoding.EncodeToString(thumb)}
}

// proof is a DPoP proof for a request; with an access token, bound to it
// (ath).
func (k *dpopKey) proof(t *testing.T, method, target, accessToken string) string {
	t.Helper()
	claims := map[string]any{"jti": rand.Text(), "htm": method, "htu": target, "iat": time.Now().Unix()}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	payload, _ := json.Marshal(claims)
	jws, err := k.signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	s, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestBrowserHandoff: the $BROWSER script of the person's session hands
// each URL it is run with to the test, in order and unchanged, and a wait
// for one it was not given ends with its context.
func TestBrowserHandoff(t *testing.T) {
	t.Parallel()
	h := newBrowserHandoff(t)
	urls := []string{"http://127.0.0.1:1/auth?a=1&b=%20x", "http://127.0.0.1:2/auth?state=y"}
	for _, u := range urls {
		if out, err := exec.Command(h.Script, u).CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v %s", h.Script, u, err, out)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i, want := range urls {
		if got, err := h.Wait(ctx, i+1); got != want || err != nil {
			t.Errorf("URL %d: %q, %v; want %q", i+1, got, err, want)
		}
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if got, err := h.Wait(short, 3); err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a third URL: %q, %v; want the context's deadline", got, err)
	}
}

// harnessLogin logs the person in with the harness's client c: the
// authorization request (PKCE, the resource, scope and prompt), the pages,
// the redirect (its iss and state checked) and the code exchange. It
// returns the token response.
func harnessLogin(t *testing.T, ctx context.Context, as *strictOIDC, rs *mcpResource, p *person, md map[string]any, c harnessClient, cb *callback, scope, prompt string, dpop *dpopKey) map[string]any {
	t.Helper()
	verifier := rand.Text() + rand.Text()
	sum := sha256.Sum256([]byte(verifier))
	state := rand.Text()
	q := url.Values{
		"response_type": {"code"}, "client_id": {c.ID}, "redirect_uri": {c.Redirect}, "scope": {scope}, "state": {state},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}, "resource": {rs.URL},
	}
	if prompt != "" {
		q.Set("prompt", prompt)
	}
	pg, err := p.authorize(ctx, md["authorization_endpoint"].(string)+"?"+q.Encode(), cb.done)
	if err != nil {
		t.Fatalf("login (scope %q, prompt %q): %v\npages:%s\nserver events:%s", scope, prompt, err, p.Journal(), describe(as.Events(0)))
	}
	back, _ := url.Parse(pg.URL)
	got := back.Query()
	if got.Get("iss") != as.Issuer || got.Get("state") != state || got.Get("code") == "" {
		t.Fatalf("redirect %s: want code, state and iss %s", pg.URL, as.Issuer)
	}
	var hdr []string
	if dpop != nil {
		hdr = []string{"DPoP", dpop.proof(t, http.MethodPost, md["token_endpoint"].(string), "")}
	}
	status, tok := as.post(t, ctx, md["token_endpoint"].(string), url.Values{
		"grant_type": {"authorization_code"}, "code": {got.Get("code")}, "redirect_uri": {c.Redirect},
		"client_id": {c.ID}, "code_verifier": {verifier}, "resource": {rs.URL},
	}, hdr...)
	if status != http.StatusOK {
		t.Fatalf("code exchange: %d %v", status, tok)
	}
	return tok
}

// harnessClient is a client registered at the strict server by a test.
type harnessClient struct {
	ID, Redirect string
}

// registerNative registers a public native client (RFC 8252) with redirect
// and, when not empty, scope.
func registerNative(t *testing.T, ctx context.Context, as *strictOIDC, redirect, scope string) harnessClient {
	t.Helper()
	body := map[string]any{
		"redirect_uris": []string{redirect}, "grant_types": []string{"authorization_code", "refresh_token"},
		"response_types": []string{"code"}, "token_endpoint_auth_method": "none", "application_type": "native",
		"client_name": "tako interop harness",
	}
	if scope != "" {
		body["scope"] = scope
	}
	md := as.metadata(t, ctx, "/.well-known/oauth-authorization-server")
	status, out := postJSON(t, ctx, md["registration_endpoint"].(string), body)
	id, _ := out["client_id"].(string)
	if status != http.StatusCreated || id == "" {
		t.Fatalf("registration: %d %v", status, out)
	}
	return harnessClient{ID: id, Redirect: redirect}
}

// callback is a loopback redirect receiver for the harness's client.
type callback struct {
	URL  string
	host string
}

func startCallback(t *testing.T) *callback {
	t.Helper()
	ln := listen(t)
	c := &callback{host: ln.Addr().String()}
	c.URL = "http://" + c.host + "/callback"
	serve(t, ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><title>harness</title><p>Signed in; back to the test.</p>")
	}))
	return c
}

func (c *callback) done(u *url.URL) bool { return u.Host == c.host && u.Path == "/callback" }

// authorizeRedirect GETs an authorization URL and returns where the server
// redirects it: the client's redirect URI (with an error) or its own
// sign-in page.
func authorizeRedirect(t *testing.T, ctx context.Context, u string) *url.URL {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode/100 != 3 {
		t.Fatalf("authorization request: status %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	return loc
}

// postInitialize sends an MCP initialize with the Authorization header
// auth (and hdr) and returns the status and the WWW-Authenticate
// challenge.
func postInitialize(t *testing.T, ctx context.Context, endpoint, auth string, hdr ...string) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
}

// postJSON posts v as JSON and decodes the JSON answer.
func postJSON(t *testing.T, ctx context.Context, u string, v any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(v)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// jwtClaims decodes a JWT's claims without checking it (the resource
// server checks; tests read).
func jwtClaims(t *testing.T, token string) accessClaims {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("the access token is not a JWT (%d parts)", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatalf("JWT payload: %v", err)
	}
	var c accessClaims
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("JWT claims: %v", err)
	}
	return c
}

// stringList reads a JSON array of strings.
func stringList(v any) []string {
	arr, _ := v.([]any)
	out := make([]string, 0, len(arr))
	for _, x := range arr {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// sdkSession connects the go-sdk's MCP client to endpoint with the bearer
// token; the session closes when the test ends.
func sdkSession(t *testing.T, ctx context.Context, endpoint, token string) *mcp.ClientSession {
	t.Helper()
	return sdkSessionWith(t, ctx, endpoint, roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+token)
		return http.DefaultTransport.RoundTrip(r)
	}))
}

// sdkSessionWith connects the go-sdk's MCP client to endpoint through rt,
// which authorizes each request.
func sdkSessionWith(t *testing.T, ctx context.Context, endpoint string, rt http.RoundTripper) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "tako-interop-harness", Version: "1"}, nil)
	s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: rt}}, nil)
	if err != nil {
		t.Fatalf("go-sdk client: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// roundTripper is a func as an http.RoundTripper.
type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
