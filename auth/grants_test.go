package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// The grants and client authentications other than the interactive code
// flow, each against a fake server of the test that checks what the
// specification asks of the client.

// tokenGrant records one token request: its form and how the client
// authenticated.
type tokenGrant struct {
	form       url.Values
	basicID    string
	basicOK    bool
	basicSec   string
	authHeader string
}

// recordingToken makes h's token endpoint record each request and answer
// with a Bearer token, which the MCP endpoint then takes.
func recordingToken(h *hostileAS) func() []tokenGrant {
	var (
		mu   sync.Mutex
		seen []tokenGrant
	)
	h.handle("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		g := tokenGrant{form: cloneValues(r.PostForm), authHeader: r.Header.Get("Authorization")}
		g.basicID, g.basicSec, g.basicOK = r.BasicAuth()
		mu.Lock()
		seen = append(seen, g)
		mu.Unlock()
		h.issue(w, 3600, r.PostForm.Get("scope"))
	})
	return func() []tokenGrant {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// TestClientCredentialsSecretBasic: client_secret_basic form-encodes the
// id and the secret before joining them (RFC 6749 §2.3.1), so a secret
// with ':' '+' '%' or non-ASCII in it reaches the server whole; the grant
// sends the resource and no secret in the body.
func TestClientCredentialsSecretBasic(t *testing.T) {
	h := newHostileAS(t)
	grants := recordingToken(h)
	const id, secret = "bot:1 ü", "p@ss:wörd/+%&= x"
	ac := mustNew(t, h.URL+"/mcp", &Config{Grant: ClientCredentials{}, Client: &StaticClient{ID: id, Secret: secret}, Scopes: []string{"mcp:read"}})
	if err := call(testCtx(t, 10*time.Second), ac, h.URL+"/mcp"); err != nil {
		t.Fatal(err)
	}
	gs := grants()
	if len(gs) != 1 {
		t.Fatalf("%d token requests", len(gs))
	}
	g := gs[0]
	gotID, _ := url.QueryUnescape(g.basicID)
	gotSecret, _ := url.QueryUnescape(g.basicSec)
	if !g.basicOK || gotID != id || gotSecret != secret || strings.Contains(g.basicSec, ":") {
		t.Errorf("Basic %q:%q (decoded %q:%q), want the form-encoded %q:%q", g.basicID, g.basicSec, gotID, gotSecret, id, secret)
	}
	if g.form.Get("grant_type") != "client_credentials" || g.form.Get("resource") != h.URL+"/mcp" || g.form.Get("scope") != "mcp:read" {
		t.Errorf("form %v", g.form)
	}
	if g.form.Has("client_secret") {
		t.Error("the secret is in the body as well")
	}
	rec, _ := ac.store.Load(context.Background(), ac.Resource(), "")
	if rec == nil || rec.Grant != "client_credentials" || rec.Client.AuthMethod != methodBasic {
		t.Errorf("stored %v", rec)
	}
}

// TestClientCredentialsSecretPost: a server that takes only
// client_secret_post gets the id and secret in the body, and no
// Authorization header.
func TestClientCredentialsSecretPost(t *testing.T) {
	h := newHostileAS(t)
	h.metadata(func(md *ServerMetadata) { md.TokenEndpointAuthMethodsSupported = []string{methodPost} })
	grants := recordingToken(h)
	ac := mustNew(t, h.URL+"/mcp", &Config{Grant: &ClientCredentials{}, Client: &StaticClient{ID: "bot", Secret: "s&cret=1"}})
	if err := call(testCtx(t, 10*time.Second), ac, h.URL+"/mcp"); err != nil {
		t.Fatal(err)
	}
	g := grants()[0]
	if g.form.Get("client_id") != "bot" || g.form.Get("client_secret") != "s&cret=1" || g.authHeader != "" {
		t.Errorf("form %v, Authorization %q", g.form, g.authHeader)
	}
}

// assertionClaims verifies a JWT with key and returns its claims.
func assertionClaims(t *testing.T, s string, key crypto.PublicKey) (jwt.Claims, map[string]any) {
	t.Helper()
	tok, err := jwt.ParseSigned(s, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatalf("the assertion does not parse: %v", err)
	}
	var c jwt.Claims
	var all map[string]any
	if err := tok.Claims(key, &c, &all); err != nil {
		t.Fatalf("the assertion's signature: %v", err)
	}
	if typ := tok.Headers[0].ExtraHeaders["typ"]; typ != "JWT" {
		t.Errorf("typ %v", typ)
	}
	return c, all
}

// TestClientCredentialsPrivateKeyJWT: private_key_jwt signs a fresh
// client assertion for every request (RFC 7523 §2.2, §3): issuer and
// subject the client id, audience the authorization server's issuer, a
// short expiry and a unique jti, verified with the client's public key.
func TestClientCredentialsPrivateKeyJWT(t *testing.T) {
	h := newHostileAS(t)
	h.metadata(func(md *ServerMetadata) { md.TokenEndpointAuthMethodsSupported = []string{methodJWT} })
	grants := recordingToken(h)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ac := mustNew(t, h.URL+"/mcp", &Config{Grant: ClientCredentials{}, Client: &StaticClient{ID: "bot", PrivateKey: key}})
	ctx := testCtx(t, 10*time.Second)
	if err := call(ctx, ac, h.URL+"/mcp"); err != nil {
		t.Fatal(err)
	}
	_ = ac.Logout(ctx)
	if err := call(ctx, ac, h.URL+"/mcp"); err != nil {
		t.Fatal(err)
	}
	gs := grants()
	if len(gs) != 2 {
		t.Fatalf("%d token requests, want 2", len(gs))
	}
	var jtis []string
	for _, g := range gs {
		if g.form.Get("client_assertion_type") != clientAssertionType || g.form.Get("client_id") != "bot" || g.authHeader != "" {
			t.Errorf("form %v, Authorization %q", g.form, g.authHeader)
		}
		c, _ := assertionClaims(t, g.form.Get("client_assertion"), &key.PublicKey)
		if c.Issuer != "bot" || c.Subject != "bot" || !slices.Equal(c.Audience, jwt.Audience{h.URL}) || c.ID == "" {
			t.Errorf("claims %+v", c)
		}
		now := time.Now()
		if c.Expiry == nil || c.IssuedAt == nil || c.Expiry.Time().Before(now) || c.Expiry.Time().After(now.Add(10*time.Minute)) || c.IssuedAt.Time().After(now.Add(time.Minute)) {
			t.Errorf("iat %v exp %v", c.IssuedAt, c.Expiry)
		}
		jtis = append(jtis, c.ID)
	}
	if jtis[0] == jtis[1] {
		t.Error("two assertions with one jti")
	}
}

// TestClientCredentialsNeedsAClient: without a pre-registered client the
// grant cannot run, and says so (ErrNoRegistration); a client bound to
// another authorization server is not shown to this one.
func TestClientCredentialsNeedsAClient(t *testing.T) {
	h := newHostileAS(t)
	for _, sc := range []*StaticClient{nil, {ID: "bot", Secret: "s", Issuer: "https://other.example"}} {
		ac := mustNew(t, h.URL+"/mcp", &Config{Grant: ClientCredentials{}, Client: sc})
		if err := call(testCtx(t, 10*time.Second), ac, h.URL+"/mcp"); !errors.Is(err, ErrNoRegistration) {
			t.Errorf("client %v: %v, want ErrNoRegistration", sc, err)
		}
	}
	if n := h.count("/token"); n != 0 {
		t.Errorf("%d token requests", n)
	}
}

// TestJWTBearerGrant: the workload's assertion, asked for with the
// authorization server's issuer as its audience, is sent as the RFC 7523
// JWT bearer grant with the resource; a public workload names no client,
// a pre-registered one authenticates. An assertion that cannot be had
// fails without a token request.
func TestJWTBearerGrant(t *testing.T) {
	h := newHostileAS(t)
	grants := recordingToken(h)
	var audiences []string
	assertion := func(_ context.Context, aud string) (string, error) {
		audiences = append(audiences, aud)
		return "workload-jwt", nil
	}
	ctx := testCtx(t, 10*time.Second)
	ac := mustNew(t, h.URL+"/mcp", &Config{Grant: JWTBearer{Assertion: assertion}})
	if err := call(ctx, ac, h.URL+"/mcp"); err != nil {
		t.Fatal(err)
	}
	withClient := mustNew(t, h.URL+"/mcp", &Config{Grant: &JWTBearer{Assertion: assertion}, Client: &StaticClient{ID: "wl", Secret: "wl-secret"}})
	if err := call(ctx, withClient, h.URL+"/mcp"); err != nil {
		t.Fatal(err)
	}
	gs := grants()
	if len(gs) != 2 || !slices.Equal(audiences, []string{h.URL, h.URL}) {
		t.Fatalf("%d token requests, audiences %v", len(gs), audiences)
	}
	for i, g := range gs {
		if g.form.Get("grant_type") != grantJWTBearer || g.form.Get("assertion") != "workload-jwt" || g.form.Get("resource") != h.URL+"/mcp" {
			t.Errorf("request %d: form %v", i, g.form)
		}
	}
	if gs[0].form.Has("client_id") || gs[0].authHeader != "" {
		t.Errorf("the public workload authenticated: %v %q", gs[0].form, gs[0].authHeader)
	}
	if !gs[1].basicOK || gs[1].basicID != "wl" {
		t.Errorf("the pre-registered workload did not authenticate: %q", gs[1].authHeader)
	}

	failing := mustNew(t, h.URL+"/mcp", &Config{Grant: JWTBearer{Assertion: func(context.Context, string) (string, error) {
		return "", errors.New("no workload identity here")
	}}})
	if err := call(ctx, failing, h.URL+"/mcp"); err == nil || !strings.Contains(err.Error(), "no workload identity here") {
		t.Errorf("a failing assertion: %v", err)
	}
	if err := call(ctx, mustNew(t, h.URL+"/mcp", &Config{Grant: JWTBearer{}}), h.URL+"/mcp"); err == nil {
		t.Error("JWTBearer without an Assertion: no error")
	}
	if n := len(grants()); n != 2 {
		t.Errorf("%d token requests, want no more for the failures", n)
	}
}

// TestEnterpriseManagedGrant: the user's identity token is exchanged at
// the identity provider (RFC 8693: an ID-JAG for the authorization
// server's issuer and the resource, the identity provider's client
// authenticating in the body), and the ID-JAG is then the JWT bearer
// assertion at the authorization server, with the pre-registered client.
// A refused exchange says where it failed.
func TestEnterpriseManagedGrant(t *testing.T) {
	h := newHostileAS(t)
	grants := recordingToken(h)
	var (
		mu        sync.Mutex
		exchanges []url.Values
		refuse    bool
	)
	h.handle("/idp/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		mu.Lock()
		exchanges = append(exchanges, cloneValues(r.PostForm))
		no := refuse
		mu.Unlock()
		if no {
			oauthError(w, http.StatusBadRequest, "invalid_grant")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"the-id-jag","issued_token_type":"` + tokenTypeIDJAG + `","token_type":"N_A","expires_in":300}`))
	})
	g := EnterpriseManaged{
		IDPTokenEndpoint: h.URL + "/idp/token", IDPClientID: "idp-client", IDPClientSecret: "idp-secret",
		IDToken: func(context.Context) (string, error) { return "the-id-token", nil },
	}
	ac := mustNew(t, h.URL+"/mcp", &Config{Grant: g, Client: &StaticClient{ID: "mcp-client", Secret: "mcp-secret"}, Scopes: []string{"mcp:read"}})
	ctx := testCtx(t, 10*time.Second)
	if err := call(ctx, ac, h.URL+"/mcp"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	ex := exchanges
	mu.Unlock()
	if len(ex) != 1 {
		t.Fatalf("%d exchanges", len(ex))
	}
	want := url.Values{
		"grant_type": {grantTokenExchange}, "requested_token_type": {tokenTypeIDJAG},
		"subject_token": {"the-id-token"}, "subject_token_type": {tokenTypeIDToken},
		"audience": {h.URL}, "resource": {h.URL + "/mcp"}, "scope": {"mcp:read"},
		"client_id": {"idp-client"}, "client_secret": {"idp-secret"},
	}
	if fmt.Sprint(ex[0]) != fmt.Sprint(want) {
		t.Errorf("exchange\n got %v\nwant %v", ex[0], want)
	}
	gs := grants()
	if len(gs) != 1 || gs[0].form.Get("grant_type") != grantJWTBearer || gs[0].form.Get("assertion") != "the-id-jag" ||
		gs[0].basicID != "mcp-client" || gs[0].form.Get("resource") != h.URL+"/mcp" {
		t.Errorf("token requests %+v", gs)
	}
	rec, _ := ac.store.Load(ctx, ac.Resource(), "")
	if rec == nil || rec.Grant != "enterprise_managed" {
		t.Errorf("stored %v", rec)
	}

	// An ID-JAG is not a token for the MCP server: N_A only in an
	// exchange, and the exchange's refusal names the identity provider.
	mu.Lock()
	refuse = true
	mu.Unlock()
	again := mustNew(t, h.URL+"/mcp", &Config{Grant: g, Client: &StaticClient{ID: "mcp-client", Secret: "mcp-secret"}})
	err := call(ctx, again, h.URL+"/mcp")
	var pe *ProtocolError
	if !errors.As(err, &pe) || pe.Code != "invalid_grant" || !strings.Contains(err.Error(), "identity provider") {
		t.Errorf("a refused exchange: %v", err)
	}
	if n := len(grants()); n != 1 {
		t.Errorf("%d token requests at the authorization server after a refused exchange", n)
	}
}

// dpopProof is a verified DPoP proof: its key's thumbprint and claims.
type dpopProof struct {
	jkt    string
	claims dpopClaims
	iat    time.Time
}

// verifyProof checks a DPoP proof as a server does (RFC 9449 §4.3): a JWT
// of type dpop+jwt, signed by the public key it carries.
func verifyProof(proof string) (*dpopProof, error) {
	sig, err := jose.ParseSignedCompact(proof, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil || len(sig.Signatures) != 1 {
		return nil, fmt.Errorf("proof does not parse: %v", err)
	}
	hdr := sig.Signatures[0].Header
	if hdr.JSONWebKey == nil || !hdr.JSONWebKey.IsPublic() || hdr.ExtraHeaders["typ"] != "dpop+jwt" {
		return nil, fmt.Errorf("proof header %+v", hdr)
	}
	payload, err := sig.Verify(hdr.JSONWebKey)
	if err != nil {
		return nil, fmt.Errorf("proof signature: %v", err)
	}
	var p dpopProof
	if err := json.Unmarshal(payload, &p.claims); err != nil {
		return nil, err
	}
	if p.claims.ID == "" || p.claims.IssuedAt == nil {
		return nil, fmt.Errorf("proof without jti or iat: %s", payload)
	}
	p.iat = p.claims.IssuedAt.Time()
	tp, _ := hdr.JSONWebKey.Thumbprint(crypto.SHA256)
	p.jkt = base64.RawURLEncoding.EncodeToString(tp)
	return &p, nil
}

// dpopAS makes h a DPoP server (RFC 9449): its token endpoint and its MCP
// endpoint each want a nonce of their own first (§8, §9), bind tokens to
// the proof's key and check every proof's htm, htu, ath and key.
type dpopAS struct {
	h         *hostileAS
	mu        sync.Mutex
	bound     map[string]string // access and refresh tokens -> jkt
	errs      []string
	tokenReqs int
	refreshes int
	served    int
}

func newDPoPAS(t *testing.T) *dpopAS {
	h := newHostileAS(t)
	h.metadata(func(md *ServerMetadata) { md.DPoPSigningAlgValuesSupported = []string{"ES256"} })
	d := &dpopAS{h: h, bound: map[string]string{}}
	h.handle("/token", d.token)
	h.handle("/mcp", d.mcp)
	return d
}

func (d *dpopAS) fail(format string, args ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.errs = append(d.errs, fmt.Sprintf(format, args...))
}

func (d *dpopAS) token(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	d.mu.Lock()
	d.tokenReqs++
	d.mu.Unlock()
	p, err := verifyProof(r.Header.Get("DPoP"))
	if err != nil {
		d.fail("token endpoint: %v", err)
		oauthError(w, http.StatusBadRequest, "invalid_dpop_proof")
		return
	}
	if p.claims.HTM != http.MethodPost || p.claims.HTU != d.h.URL+"/token" || p.claims.ATH != "" || time.Since(p.iat) > time.Minute {
		d.fail("token endpoint proof %+v", p.claims)
	}
	if p.claims.Nonce != "as-nonce" {
		w.Header().Set("DPoP-Nonce", "as-nonce")
		oauthError(w, http.StatusBadRequest, "use_dpop_nonce")
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if r.PostForm.Get("grant_type") == "refresh_token" {
		d.refreshes++
		if jkt := d.bound[r.PostForm.Get("refresh_token")]; jkt != p.jkt {
			d.errs = append(d.errs, "a refresh with another key than its token's")
			oauthError(w, http.StatusBadRequest, "invalid_grant")
			return
		}
	}
	n := d.tokenReqs
	at, rt := fmt.Sprintf("dpop-at-%d", n), fmt.Sprintf("dpop-rt-%d", n)
	d.bound[at], d.bound[rt] = p.jkt, p.jkt
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": at, "token_type": "DPoP", "expires_in": 3600, "refresh_token": rt})
}

func (d *dpopAS) mcp(w http.ResponseWriter, r *http.Request) {
	scheme, at, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	d.mu.Lock()
	jkt, ok := d.bound[at]
	d.mu.Unlock()
	if !ok || scheme != "DPoP" {
		if scheme == "Bearer" {
			d.fail("a DPoP token sent as Bearer")
		}
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+d.h.URL+`/.well-known/oauth-protected-resource/mcp"`)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	p, err := verifyProof(r.Header.Get("DPoP"))
	if err != nil {
		d.fail("MCP endpoint: %v", err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if p.claims.HTM != r.Method || p.claims.HTU != d.h.URL+"/mcp" || p.claims.ATH != s256(at) || p.jkt != jkt {
		d.fail("MCP endpoint proof %+v (key %s, token's %s)", p.claims, p.jkt, jkt)
	}
	if p.claims.Nonce != "rs-nonce" {
		w.Header().Set("DPoP-Nonce", "rs-nonce")
		w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce", error_description="Resource server requires nonce in DPoP proof"`)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	d.mu.Lock()
	d.served++
	d.mu.Unlock()
	_, _ = w.Write([]byte("ok"))
}

// TestDPoP: with Config.DPoP and a server that advertises it, the token
// request carries a proof (htm POST, htu the token endpoint, no ath) and
// is sent again once with the server's nonce; the DPoP-bound token goes
// to the MCP endpoint as "Authorization: DPoP" with a proof of the
// request's method and URL (its query dropped), the token's hash (ath)
// and, once asked, the resource server's own nonce; the refresh is made
// with the same key, which the server checks against the token's. The
// server is its own authorization server, with a nonce for each role:
// the two are kept apart (before the fix one overwrote the other, and
// each switch cost a token request and an MCP request more).
func TestDPoP(t *testing.T) {
	d := newDPoPAS(t)
	ac := mustNew(t, d.h.URL+"/mcp", &Config{User: &Headless{}, DPoP: true})
	ctx := testCtx(t, 20*time.Second)
	if err := call(ctx, ac, d.h.URL+"/mcp?session=1"); err != nil {
		t.Fatal(err)
	}
	tok, _ := ac.Token(ctx)
	if tok == nil || tok.TokenType != "DPoP" {
		t.Fatalf("token %v, want a DPoP token", tok)
	}
	// The nonce is kept: the next request needs no second round.
	if err := call(ctx, ac, d.h.URL+"/mcp"); err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	before := d.tokenReqs
	d.mu.Unlock()
	ac.mu.Lock()
	ac.rec.Token.Expiry = time.Now().Add(-time.Second)
	ac.mu.Unlock()
	if err := call(ctx, ac, d.h.URL+"/mcp"); err != nil {
		t.Fatalf("after the refresh: %v", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, e := range d.errs {
		t.Error(e)
	}
	// The code: once without the nonce, once with it; the refresh: with
	// the nonce already known.
	if before != 2 || d.tokenReqs != 3 || d.refreshes != 1 || d.served != 3 {
		t.Errorf("%d token requests before the refresh, %d after, %d refreshes, %d MCP answers; want 2, 3, 1, 3", before, d.tokenReqs, d.refreshes, d.served)
	}
	if n := d.h.count("/mcp"); n != 1+1+1+1+1 {
		t.Errorf("%d MCP requests; want 5 (no token, no nonce, then one per call)", n)
	}
}

// TestDPoPNotAdvertised: a server that does not advertise DPoP, or not
// the key's algorithm, gets a plain token request and Bearer tokens.
func TestDPoPNotAdvertised(t *testing.T) {
	for _, algs := range [][]string{nil, {"RS256"}} {
		h := newHostileAS(t)
		h.metadata(func(md *ServerMetadata) { md.DPoPSigningAlgValuesSupported = algs })
		var sawProof bool
		h.handle("/token", func(w http.ResponseWriter, r *http.Request) {
			sawProof = sawProof || r.Header.Get("DPoP") != ""
			h.issue(w, 3600, "")
		})
		ac := mustNew(t, h.URL+"/mcp", &Config{User: &Headless{}, DPoP: true})
		if err := call(testCtx(t, 10*time.Second), ac, h.URL+"/mcp"); err != nil {
			t.Fatalf("algs %v: %v", algs, err)
		}
		if tok, _ := ac.Token(context.Background()); sawProof || tok == nil || tok.TokenType != "Bearer" {
			t.Errorf("algs %v: proof sent %v, token %v", algs, sawProof, tok)
		}
	}
}

// TestDPoPNonceAskedTwice: a server that asks for a nonce and gives none,
// or the same one again, is not asked again in a loop.
func TestDPoPNonceAskedTwice(t *testing.T) {
	d := newDPoPAS(t)
	ac := mustNew(t, d.h.URL+"/mcp", &Config{User: &Headless{}, DPoP: true})
	ctx := testCtx(t, 10*time.Second)
	if err := call(ctx, ac, d.h.URL+"/mcp"); err != nil {
		t.Fatal(err)
	}
	d.h.handle("/mcp", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("DPoP-Nonce", "rs-nonce") // the one it has
		w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce"`)
		w.WriteHeader(http.StatusUnauthorized)
	})
	before := d.h.count("/mcp")
	if err := call(ctx, ac, d.h.URL+"/mcp"); err == nil || !strings.Contains(err.Error(), "nonce") {
		t.Errorf("err = %v, want the nonce refusal", err)
	}
	if n := d.h.count("/mcp") - before; n != 1 {
		t.Errorf("%d requests to a server that repeats its nonce, want 1", n)
	}
}
