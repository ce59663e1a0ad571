package auth

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestInsecureEndpointsRefused: every URL a server hands the client (the
// challenge's resource_metadata, the resource metadata's
// authorization_servers, each endpoint of the authorization server's
// metadata, a redirect of a metadata, registration or token request, the
// identity provider of the enterprise grant) is refused with
// ErrInsecureEndpoint when it is plain http to a host that is not
// loopback, before any request goes there and before the browser opens:
// a code, a token or a secret would travel in clear (OAuth 2.1 §1.5).
// Before the fix the browser was asked to open http://…/authorize.
func TestInsecureEndpointsRefused(t *testing.T) {
	const far = "http://as.example.test"
	for _, tc := range []struct {
		name  string
		grant Grant
		setup func(h *hostileAS)
	}{
		{name: "resource_metadata in the challenge", setup: func(h *hostileAS) {
			h.handle("/mcp", func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+far+`/.well-known/oauth-protected-resource/mcp"`)
				w.WriteHeader(http.StatusUnauthorized)
			})
		}},
		{name: "authorization_servers", setup: func(h *hostileAS) {
			h.resource(func(prm *ResourceMetadata) { prm.AuthorizationServers = []string{far} })
		}},
		{name: "authorization_endpoint", setup: func(h *hostileAS) {
			h.metadata(func(md *ServerMetadata) { md.AuthorizationEndpoint = far + "/authorize" })
		}},
		{name: "token_endpoint", setup: func(h *hostileAS) {
			h.metadata(func(md *ServerMetadata) { md.TokenEndpoint = far + "/token" })
		}},
		{name: "registration_endpoint", setup: func(h *hostileAS) {
			h.metadata(func(md *ServerMetadata) { md.RegistrationEndpoint = far + "/register" })
		}},
		{name: "revocation_endpoint", setup: func(h *hostileAS) {
			h.metadata(func(md *ServerMetadata) { md.RevocationEndpoint = far + "/revoke" })
		}},
		{name: "metadata redirect", setup: func(h *hostileAS) {
			h.handle("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, far+"/.well-known/oauth-authorization-server", http.StatusFound)
			})
		}},
		{name: "registration redirect", setup: func(h *hostileAS) {
			h.handle("/register", func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, far+"/register", http.StatusTemporaryRedirect)
			})
		}},
		{name: "token redirect", grant: ClientCredentials{}, setup: func(h *hostileAS) {
			h.handle("/token", func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, far+"/token", http.StatusTemporaryRedirect)
			})
		}},
		{name: "identity provider", grant: EnterpriseManaged{
			IDPTokenEndpoint: "http://idp.example.test/token", IDPClientID: "idp-client",
			IDToken: func(context.Context) (string, error) { return "id-token", nil },
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHostileAS(t)
			if tc.setup != nil {
				tc.setup(h)
			}
			net := &netRecorder{}
			user := &countingStep{h: &Headless{HTTPClient: net.client()}}
			cfg := &Config{HTTPClient: net.client(), User: user, Grant: tc.grant}
			if tc.grant != nil {
				cfg.Client = &StaticClient{ID: "static", Secret: "static-secret"}
			}
			ac := mustNew(t, h.URL+"/mcp", cfg)
			err := call(testCtx(t, 20*time.Second), ac, h.URL+"/mcp")
			if !errors.Is(err, ErrInsecureEndpoint) {
				t.Errorf("err = %v, want ErrInsecureEndpoint", err)
			}
			if got := net.requests(); len(got) != 0 {
				t.Errorf("requests reached hosts that are not loopback: %v", got)
			}
			// A registration needs the redirect URI, so its redirect is
			// seen after the listener is up; no browser opens all the same.
			if n := user.started(); n != 0 && tc.name != "registration redirect" {
				t.Errorf("the user step was started %d times", n)
			}
			if n := user.browsers(); n != 0 {
				t.Errorf("the browser was opened %d times", n)
			}
			if n := h.count("/token"); n != 0 && tc.name != "token redirect" {
				t.Errorf("%d token requests", n)
			}
		})
	}
}

// TestInsecureMCPServerGetsNoToken: a stored token is never set on a
// plain-http request, or a plain ws:// upgrade, to an MCP server that is
// not on loopback, and a 401 from one starts no authorization. Before the
// fix Header gave the token for a ws:// upgrade to any host.
func TestInsecureMCPServerGetsNoToken(t *testing.T) {
	const server = "http://mcp.example.test/mcp"
	net := &netRecorder{}
	store := &MemoryStore{}
	user := &countingStep{h: &Headless{HTTPClient: net.client()}}
	ac := mustNew(t, server, &Config{HTTPClient: net.client(), Store: store, User: user})
	if err := store.Save(context.Background(), &Record{Resource: ac.Resource(), Issuer: "https://as.example.test",
		Token: &Token{AccessToken: "stored-token", TokenType: "Bearer", Expiry: time.Now().Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, server, nil)
	if err := ac.AuthorizeRequest(req); !errors.Is(err, ErrInsecureEndpoint) {
		t.Errorf("AuthorizeRequest: %v, want ErrInsecureEndpoint", err)
	}
	if got := req.Header.Get("Authorization"); got != "" {
		t.Errorf("the request carries Authorization %q", got)
	}
	// Nor to a WebSocket upgrade to ws:// on such a host.
	ws := mustNew(t, "ws://mcp.example.test/mcp", &Config{Store: store})
	if h, err := ws.Header(context.Background()); !errors.Is(err, ErrInsecureEndpoint) || h.Get("Authorization") != "" {
		t.Errorf("Header for ws://: %v, %v; want no header and ErrInsecureEndpoint", h, err)
	}
	// A Client without a token (a first run) is not made to authorize by
	// a 401 from it either.
	fresh := mustNew(t, server, &Config{HTTPClient: net.client(), User: user})
	req, _ = http.NewRequest(http.MethodPost, server, nil)
	resp := &http.Response{StatusCode: http.StatusUnauthorized, Request: req, Header: http.Header{
		"Www-Authenticate": {`Bearer resource_metadata="https://as.example.test/prm"`}}}
	ctx := testCtx(t, 10*time.Second)
	if err := fresh.HandleUnauthorized(ctx, resp); !errors.Is(err, ErrInsecureEndpoint) {
		t.Errorf("HandleUnauthorized: %v, want ErrInsecureEndpoint", err)
	}
	if err := fresh.Login(ctx); !errors.Is(err, ErrInsecureEndpoint) {
		t.Errorf("Login: %v, want ErrInsecureEndpoint", err)
	}
	if got := net.requests(); len(got) != 0 {
		t.Errorf("requests reached hosts that are not loopback: %v", got)
	}
	if user.started() != 0 {
		t.Error("the user step was started")
	}
}

// TestCheckEndpoint: what counts as loopback, and what does not.
func TestCheckEndpoint(t *testing.T) {
	for u, ok := range map[string]bool{
		"https://as.example.com/token":    true,
		"http://127.0.0.1:8080/token":     true,
		"http://[::1]:8080/token":         true,
		"http://localhost/token":          true,
		"http://LOCALHOST./token":         true,
		"http://as.localhost/token":       false, // Go's resolver may ask DNS
		"https://as.localhost/token":      true,
		"http://as.example.com/token":     false,
		"http://localhost.example.com/t":  false,
		"http://127.0.0.1.example.com/t":  false,
		"http://10.0.0.1/token":           false,
		"ftp://as.example.com/token":      false,
		"javascript:alert(1)":             false,
		"http://0x7f000001.example.com/t": false,
	} {
		err := checkEndpoint(u, "token endpoint")
		if ok != (err == nil) || (err != nil && !errors.Is(err, ErrInsecureEndpoint)) {
			t.Errorf("%s: %v", u, err)
		}
		if err != nil && strings.Contains(err.Error(), "?") {
			t.Errorf("%s: the error shows a query: %v", u, err)
		}
	}
}
