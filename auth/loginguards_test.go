package auth

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestStaticClientKeptToItsIssuer pins that a pre-registered client bound
// to one authorization server (StaticClient.Issuer) is not used with
// another: when the resource metadata names a different server, the
// client registers dynamically there, and that server's token endpoint
// never sees the static client's id or secret. Without the issuer check
// the code flow sent the secret (Basic auth) to whichever authorization
// server a resource's metadata named.
func TestStaticClientKeptToItsIssuer(t *testing.T) {
	const secret = "static-s3cret"
	h := newHostileAS(t)
	var (
		mu    sync.Mutex
		auths []string
	)
	h.handle("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		h.recordForm(r)
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		h.issue(w, 3600, r.Form.Get("scope"))
	})
	ac := mustNew(t, h.URL+"/mcp", &Config{User: &Headless{},
		Client: &StaticClient{ID: "static-id", Secret: secret, Issuer: "https://other.example"}})
	if err := call(testCtx(t, 10*time.Second), ac, h.URL+"/mcp"); err != nil {
		t.Fatalf("login with a dynamically registered client: %v", err)
	}
	if n := h.count("/register"); n != 1 {
		t.Errorf("%d registrations, want 1 (the static client is for another issuer)", n)
	}
	basic := base64.StdEncoding.EncodeToString([]byte("static-id:" + secret))
	mu.Lock()
	defer mu.Unlock()
	for _, a := range auths {
		if a != "" {
			t.Errorf("token request with Authorization %q: the static client's credentials went to %s", a, h.URL)
		}
		if strings.Contains(a, basic) {
			t.Error("the static client's secret was sent in Basic auth")
		}
	}
	for _, f := range h.tokenForms() {
		if f.Get("client_id") == "static-id" || f.Get("client_secret") != "" {
			t.Errorf("token request form names the static client: client_id %q, client_secret set %v", f.Get("client_id"), f.Get("client_secret") != "")
		}
	}
}

// TestLoginTimeoutBoundsAHungTokenRequest pins that Config.LoginTimeout
// bounds one login as a whole: an authorization server that accepts the
// token request and never answers ends the login with ErrTimeout soon
// after LoginTimeout, rather than leaving it (and every request waiting
// for it) hanging on the server's whim.
func TestLoginTimeoutBoundsAHungTokenRequest(t *testing.T) {
	h := newHostileAS(t)
	release := make(chan struct{})
	entered := make(chan struct{}, 16)
	h.handle("/token", func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // before h's server closes
	const timeout = 2 * time.Second
	ac := mustNew(t, h.URL+"/mcp", &Config{User: &Headless{}, LoginTimeout: timeout})
	start := time.Now()
	err := call(testCtx(t, 15*time.Second), ac, h.URL+"/mcp")
	took := time.Since(start)
	if !errors.Is(err, ErrTimeout) {
		t.Errorf("err = %v, want ErrTimeout", err)
	}
	if took > 10*time.Second {
		t.Errorf("the login ended after %s, with LoginTimeout %s", took, timeout)
	}
	select {
	case <-entered:
	default:
		t.Error("the token endpoint was never reached: the test did not hang where it meant to")
	}
}

// TestCodeGrantSendsResource pins that the authorization code is redeemed
// with the resource indicator (RFC 8707): an authorization server that
// refuses a code grant without the MCP server's resource (invalid_target)
// still gives the login its token. Without it the token request named no
// audience and such a server refused every login.
func TestCodeGrantSendsResource(t *testing.T) {
	h := newHostileAS(t)
	h.handle("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		h.recordForm(r)
		if r.Form.Get("grant_type") == "authorization_code" && r.Form.Get("resource") != h.URL+"/mcp" {
			oauthError(w, http.StatusBadRequest, "invalid_target")
			return
		}
		h.issue(w, 3600, r.Form.Get("scope"))
	})
	ac := mustNew(t, h.URL+"/mcp", &Config{User: &Headless{}})
	if err := call(testCtx(t, 10*time.Second), ac, h.URL+"/mcp"); err != nil {
		t.Fatalf("login: %v", err)
	}
	forms := h.tokenForms()
	if len(forms) != 1 || forms[0].Get("grant_type") != "authorization_code" || forms[0].Get("resource") != h.URL+"/mcp" {
		t.Errorf("token requests %v, want one code grant with resource %s", forms, h.URL+"/mcp")
	}
}

// TestDPoPNonceRetriedOnce pins that a token request is sent again at
// most once for a DPoP nonce: a server that answers use_dpop_nonce with a
// new DPoP-Nonce every time gets exactly two requests, and the login
// fails with the server's *ProtocolError. Without the bound the client
// asked again for as long as the server kept inventing nonces.
func TestDPoPNonceRetriedOnce(t *testing.T) {
	d := newDPoPAS(t)
	var (
		mu   sync.Mutex
		reqs int
	)
	d.h.handle("/token", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		reqs++
		n := reqs
		mu.Unlock()
		if n > 20 { // end the loop of a client without the bound
			oauthError(w, http.StatusBadRequest, "invalid_grant")
			return
		}
		w.Header().Set("DPoP-Nonce", fmt.Sprintf("nonce-%d", n))
		oauthError(w, http.StatusBadRequest, "use_dpop_nonce")
	})
	ac := mustNew(t, d.h.URL+"/mcp", &Config{User: &Headless{}, DPoP: true})
	err := call(testCtx(t, 10*time.Second), ac, d.h.URL+"/mcp")
	var pe *ProtocolError
	if !errors.As(err, &pe) || pe.Endpoint != "token" || pe.Code != "use_dpop_nonce" {
		t.Errorf("err = %v, want the token endpoint's use_dpop_nonce", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if reqs != 2 {
		t.Errorf("%d token requests, want 2 (one retry with the nonce)", reqs)
	}
}

// TestPlainForbiddenIsFinal pins that a 403 without an
// insufficient_scope challenge (no challenge at all, or a Bearer one
// with no error) is the server's final word: it fails the request and
// starts no login, so no registration, authorization or token request is
// made. Treating it as a 401 sent the user through a login the server
// would refuse again, on every request.
func TestPlainForbiddenIsFinal(t *testing.T) {
	for name, challenge := range map[string]string{
		"no challenge":       "",
		"a Bearer challenge": `Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`,
	} {
		h := newHostileAS(t)
		h.handle("/mcp", func(w http.ResponseWriter, r *http.Request) {
			if challenge != "" {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(challenge, h.URL))
			}
			w.WriteHeader(http.StatusForbidden)
		})
		user := &countingStep{h: &Headless{}}
		ac := mustNew(t, h.URL+"/mcp", &Config{User: user})
		if err := call(testCtx(t, 10*time.Second), ac, h.URL+"/mcp"); err == nil {
			t.Errorf("%s: a plain 403 passed", name)
		}
		if user.started() != 0 || h.count("/register") != 0 || h.count("/authorize") != 0 || h.count("/token") != 0 {
			t.Errorf("%s: %d user steps, %d registrations, %d authorization and %d token requests, want none",
				name, user.started(), h.count("/register"), h.count("/authorize"), h.count("/token"))
		}
	}
}

// TestFullLoginsCountInMaxAttempts pins that MaxAttempts bounds full
// logins, not only refreshes and step-ups: a server that issues tokens
// without a refresh token and then refuses each one gets at most
// MaxAttempts authorizations over ten calls, and the calls then fail with
// ErrStepUpLimit. Without the count every refused request started a new
// login (a browser each time for a person).
func TestFullLoginsCountInMaxAttempts(t *testing.T) {
	h := newHostileAS(t)
	var (
		mu     sync.Mutex
		issued int
	)
	h.handle("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		h.recordForm(r)
		mu.Lock()
		issued++
		at := fmt.Sprintf("refused-%d", issued) // never live at /mcp
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": 3600})
	})
	const maxAttempts = 3
	ac := mustNew(t, h.URL+"/mcp", &Config{User: &Headless{}, MaxAttempts: maxAttempts})
	ctx := testCtx(t, 30*time.Second)
	var err error
	for range 10 {
		err = call(ctx, ac, h.URL+"/mcp")
	}
	if !errors.Is(err, ErrStepUpLimit) {
		t.Errorf("last call: %v, want ErrStepUpLimit", err)
	}
	if n := h.count("/authorize"); n > maxAttempts {
		t.Errorf("%d authorizations over 10 calls, want at most MaxAttempts (%d)", n, maxAttempts)
	}
}

// TestMetadataRedirectLoopBounded pins that a metadata fetch follows a
// bounded number of redirects: resource metadata that redirects to itself
// fails the login after at most maxRedirects+1 requests, with nothing
// sent to /register, /authorize or /token. Without the bound the
// client's redirect policy (which replaces net/http's limit of ten)
// followed the loop for ever.
func TestMetadataRedirectLoopBounded(t *testing.T) {
	h := newHostileAS(t)
	const path = "/.well-known/oauth-protected-resource/mcp"
	var (
		mu   sync.Mutex
		hits int
	)
	h.handle(path, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		n := hits
		mu.Unlock()
		if n > 100 { // end the loop of a client without the bound
			http.NotFound(w, r)
			return
		}
		http.Redirect(w, r, path, http.StatusFound)
	})
	ac := mustNew(t, h.URL+"/mcp", &Config{User: &Headless{}})
	if err := call(testCtx(t, 10*time.Second), ac, h.URL+"/mcp"); err == nil {
		t.Error("a redirect loop gave metadata")
	}
	mu.Lock()
	defer mu.Unlock()
	if hits > maxRedirects+1 {
		t.Errorf("%d requests for the looping metadata, want at most %d", hits, maxRedirects+1)
	}
	if n := h.count("/register") + h.count("/authorize") + h.count("/token"); n != 0 {
		t.Errorf("%d registration, authorization or token requests, want none", n)
	}
}

// TestNamedResourceMetadataMissing pins that when the challenge names
// its resource metadata (resource_metadata) and that document is not
// found, the login fails with ErrNoMetadata and no registration or
// authorization request is made. Without the check the client fell back
// to the 2025-03-26 discovery at the MCP server's origin, and logged in at
// an authorization server the resource never named.
func TestNamedResourceMetadataMissing(t *testing.T) {
	h := newHostileAS(t)
	h.handle("/.well-known/oauth-protected-resource/mcp", http.NotFound)
	h.handle("/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+h.URL+`/meta/missing"`)
		w.WriteHeader(http.StatusUnauthorized)
	})
	user := &countingStep{h: &Headless{}}
	ac := mustNew(t, h.URL+"/mcp", &Config{User: user})
	if err := call(testCtx(t, 10*time.Second), ac, h.URL+"/mcp"); !errors.Is(err, ErrNoMetadata) {
		t.Errorf("err = %v, want ErrNoMetadata", err)
	}
	if h.count("/meta/missing") == 0 {
		t.Error("the named metadata URL was never fetched")
	}
	if user.started() != 0 || h.count("/register") != 0 || h.count("/authorize") != 0 {
		t.Errorf("%d user steps, %d registrations, %d authorization requests, want none",
			user.started(), h.count("/register"), h.count("/authorize"))
	}
}
