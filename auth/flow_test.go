package auth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeAS is an authorization server and a protected MCP endpoint in one:
// it registers clients, redirects at once from /authorize, checks PKCE,
// issues short-lived tokens with refresh tokens, and demands scope "write"
// for POST /mcp?need=write.
type fakeAS struct {
	srv *httptest.Server

	mu          sync.Mutex
	challenge   string
	codeScope   string
	tokens      map[string]string // access token -> scope
	refreshes   int
	authorizes  int
	registers   int
	expiresIn   int
	lastPKCEOK  bool
	resourceSet bool
}

func newFakeAS(t *testing.T) *fakeAS {
	a := &fakeAS{tokens: map[string]string{}, expiresIn: 3600}
	mux := http.NewServeMux()
	a.srv = httptest.NewServer(mux)
	t.Cleanup(a.srv.Close)
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		jsonDoc(ResourceMetadata{Resource: a.srv.URL + "/mcp", AuthorizationServers: []string{a.srv.URL}})(w, r)
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		jsonDoc(ServerMetadata{
			Issuer: a.srv.URL, AuthorizationEndpoint: a.srv.URL + "/authorize", TokenEndpoint: a.srv.URL + "/token",
			RegistrationEndpoint: a.srv.URL + "/register", CodeChallengeMethodsSupported: []string{"S256"},
			AuthorizationResponseIssParameterSupported: true,
		})(w, r)
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.registers++
		a.mu.Unlock()
		var reg registration
		_ = json.NewDecoder(r.Body).Decode(&reg)
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{"client_id": "c1", "client_secret": "s3cret-client", "redirect_uris": reg.RedirectURIs, "token_endpoint_auth_method": "client_secret_basic"})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		a.mu.Lock()
		a.authorizes++
		a.challenge = q.Get("code_challenge")
		a.codeScope = q.Get("scope")
		a.resourceSet = q.Get("resource") == a.srv.URL+"/mcp"
		a.mu.Unlock()
		http.Redirect(w, r, q.Get("redirect_uri")+"?code=the-code&state="+q.Get("state")+"&iss="+a.srv.URL, http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = r.ParseForm()
		if id, sec, ok := r.BasicAuth(); !ok || id != "c1" || sec != "s3cret-client" {
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_client"})
			return
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		scope := strings.Join(strings.Fields(strings.ReplaceAll(a.codeScope, "admin", "")), " ") // never granted
		switch r.Form.Get("grant_type") {
		case "authorization_code":
			h := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
			a.lastPKCEOK = base64.RawURLEncoding.EncodeToString(h[:]) == a.challenge
			if !a.lastPKCEOK || r.Form.Get("code") != "the-code" {
				w.WriteHeader(http.StatusBadRequest)
				_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant"})
				return
			}
		case "refresh_token":
			a.refreshes++
			if r.Form.Get("resource") != a.srv.URL+"/mcp" {
				w.WriteHeader(http.StatusBadRequest)
				_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_target"})
				return
			}
		}
		at := fmt.Sprintf("at-%d", len(a.tokens))
		a.tokens[at] = scope
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": a.expiresIn, "refresh_token": "rt-" + at, "scope": scope})
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		_, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		a.mu.Lock()
		scope, ok := a.tokens[tok]
		a.mu.Unlock()
		prm := a.srv.URL + "/.well-known/oauth-protected-resource/mcp"
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer scope="read", resource_metadata="`+prm+`"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if need := r.URL.Query().Get("need"); need != "" && !strings.Contains(" "+scope+" ", " "+need+" ") {
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+need+`", resource_metadata="`+prm+`"`)
			w.WriteHeader(http.StatusForbidden)
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	return a
}

// call does what the transport does: authorize, send, and on 401/403 ask
// the Client, up to three re-sends.
func call(ctx context.Context, c *Client, u string) error {
	for attempt := 0; ; attempt++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
		if err := c.AuthorizeRequest(req); err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return nil
		}
		if attempt == 3 {
			return fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		if err := c.HandleUnauthorized(ctx, resp); err != nil {
			return err
		}
	}
}

func TestFlow(t *testing.T) {
	a := newFakeAS(t)
	ctx := context.Background()
	dir := t.TempDir()
	store := &FileStore{Dir: filepath.Join(dir, "auth")}
	c, err := New(a.srv.URL+"/mcp", &Config{User: &Headless{}, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	if err := call(ctx, c, a.srv.URL+"/mcp"); err != nil {
		t.Fatalf("first call: %v", err)
	}
	if !a.lastPKCEOK || !a.resourceSet || a.codeScope != "read" || a.registers != 1 {
		t.Errorf("pkce %v resource %v scope %q registers %d", a.lastPKCEOK, a.resourceSet, a.codeScope, a.registers)
	}

	// Stored with mode 0600, and a new Client (a new run) uses it.
	files, _ := filepath.Glob(filepath.Join(store.Dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("store files: %v", files)
	}
	if fi, _ := os.Stat(files[0]); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	c2, _ := New(a.srv.URL+"/mcp", &Config{User: &Headless{}, Store: store})
	if err := call(ctx, c2, a.srv.URL+"/mcp"); err != nil || a.authorizes != 1 {
		t.Fatalf("second run: %v, %d authorizations", err, a.authorizes)
	}

	// Step-up: the union of scopes, then the call goes through.
	if err := call(ctx, c2, a.srv.URL+"/mcp?need=write"); err != nil {
		t.Fatalf("step-up: %v", err)
	}
	if a.codeScope != "read write" {
		t.Errorf("step-up scope %q, want the union", a.codeScope)
	}

	// A scope the server never grants: at most MaxAttempts authorizations.
	before := a.authorizes
	err = call(ctx, c2, a.srv.URL+"/mcp?need=admin")
	if err == nil {
		t.Fatal("impossible scope: no error")
	}
	if n := a.authorizes - before; n > 3 {
		t.Errorf("%d authorizations for an impossible scope", n)
	}

	// An expired token is refreshed, with the resource indicator.
	a.mu.Lock()
	a.expiresIn = 1
	a.mu.Unlock()
	_ = c2.Logout(ctx)
	if err := call(ctx, c2, a.srv.URL+"/mcp"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	if err := call(ctx, c2, a.srv.URL+"/mcp"); err != nil || a.refreshes == 0 {
		t.Fatalf("after expiry: %v, %d refreshes", err, a.refreshes)
	}

	// Nothing secret in the store's printable forms or in the Config.
	rec, err := store.Load(ctx, c2.Resource(), "")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Client: &StaticClient{ID: "x", Secret: "s3cret-static"}}
	for _, s := range []string{fmt.Sprint(rec), fmt.Sprintf("%+v %#v", rec, rec), fmt.Sprintf("%v %+v %#v", *rec.Token, rec.Client, rec.Token.AccessToken), fmt.Sprint(cfg), fmt.Sprintf("%#v %x %q", cfg, rec.Token.RefreshToken, rec.Client.ClientSecret)} {
		for _, secret := range []string{rec.Token.AccessToken.Reveal(), rec.Token.RefreshToken.Reveal(), "s3cret-client", "s3cret-static"} {
			if strings.Contains(s, secret) {
				t.Errorf("%q shows a secret", s)
			}
		}
	}
}

func TestFlowRefusals(t *testing.T) {
	a := newFakeAS(t)
	ctx := context.Background()
	// The iss of the redirect is checked (RFC 9207).
	c, _ := New(a.srv.URL+"/mcp", &Config{User: issRewriter{&Headless{}, "https://evil.example.com"}})
	if err := call(ctx, c, a.srv.URL+"/mcp"); !errors.Is(err, ErrIssuerMismatch) {
		t.Errorf("wrong iss: %v", err)
	}
	// No user step, no code flow.
	c, _ = New(a.srv.URL+"/mcp", &Config{})
	if err := call(ctx, c, a.srv.URL+"/mcp"); !errors.Is(err, ErrNoUserStep) {
		t.Errorf("no user step: %v", err)
	}
}

// issRewriter replaces the iss of the authorization response.
type issRewriter struct {
	UserStep
	iss string
}

func (r issRewriter) Start(ctx context.Context) (Redirect, error) {
	rd, err := r.UserStep.Start(ctx)
	return issRedirect{rd, r.iss}, err
}

type issRedirect struct {
	Redirect
	iss string
}

func (r issRedirect) Wait(ctx context.Context, u string) (q url.Values, err error) {
	q, err = r.Redirect.Wait(ctx, u)
	if q != nil {
		q.Set("iss", r.iss)
	}
	return q, err
}
