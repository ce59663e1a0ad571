package interop

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tako-mcp/tako/auth"
	"github.com/tako-mcp/tako/streamablehttp"
	"github.com/tako-mcp/tako/transport"
)

// connectOAuth dials the peer's MCP server with ac on Streamable HTTP and
// runs the handshake; the session closes when the test ends.
func connectOAuth(t *testing.T, ctx context.Context, url string, ac *auth.Client) *transport.Session {
	t.Helper()
	conn, err := streamablehttp.Dial(ctx, url, &streamablehttp.Options{Auth: ac})
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	s, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", url, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close session: %v", err)
		}
	})
	return s
}

// waitPast returns once the wall clock is past at (a token's expiry: the
// condition is time itself), or fails the test when ctx ends first.
func waitPast(t *testing.T, ctx context.Context, at time.Time) {
	t.Helper()
	// JWT exp has whole seconds; a little past the instant is past both
	// the claim and tako's own expiry.
	timer := time.NewTimer(time.Until(at) + 50*time.Millisecond)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
		t.Fatal("context ended before the token expired")
	}
}

// TestOAuthRealAS: tako's auth.Client against a real authorization server
// (zitadel's OpenID provider) and an MCP server on the official Go SDK
// behind its bearer-token middleware. One session goes through the whole
// life of a token:
//
//   - the MCP server's 401 names its protected resource metadata, which
//     names the AS; its RFC 8414 metadata has the registration endpoint;
//   - tako registers dynamically, runs the code flow with PKCE S256 and
//     the resource indicator (the Headless step follows the AS's login and
//     callback redirects), and calls a tool with the JWT it got;
//   - the access token expires (a 3 s lifetime on the AS) and is renewed
//     with the refresh token, without a second authorization;
//   - a tool that needs mcp:admin gets 403 insufficient_scope, and tako
//     steps up with the union of the scopes and succeeds.
func TestOAuthRealAS(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	p := startOAuthPeer(t)
	p.SetTokenLifetime(3 * time.Second)
	ac, err := auth.New(p.MCPURL, &auth.Config{
		User: &auth.Headless{RedirectURL: "http://127.0.0.1:9/callback"},
		// Below the token's lifetime, so the first token is used as is.
		RefreshBefore: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	s := connectOAuth(t, ctx, p.MCPURL, ac)

	got := call(t, ctx, s, "whoami", `{}`).Text()
	if !strings.HasPrefix(got, "id1 ") || !strings.Contains(got, scopeTools) {
		t.Errorf("whoami = %q, want the test user id1 with %s", got, scopeTools)
	}
	if n := p.Registrations(); n != 1 {
		t.Errorf("%d dynamic registrations, want 1", n)
	}
	reqs := p.Requests()
	if len(reqs) != 2 || reqs[0].Endpoint != "authorize" || reqs[1].GrantType != "authorization_code" {
		t.Fatalf("AS requests %+v, want an authorization and a code exchange", reqs)
	}
	for _, r := range reqs {
		if r.Resource != p.MCPURL {
			t.Errorf("%s request: resource %q, want %q (RFC 8707)", r.Endpoint, r.Resource, p.MCPURL)
		}
	}
	if sc := strings.Fields(reqs[0].Scope); !slices.Contains(sc, scopeTools) || !slices.Contains(sc, "offline_access") {
		t.Errorf("authorization scope %q, want %s (the challenge's) and offline_access (the AS offers it)", reqs[0].Scope, scopeTools)
	}
	first, err := ac.Token(ctx)
	if err != nil || first == nil || first.RefreshToken == "" {
		t.Fatalf("token after the flow: %v %v, want one with a refresh token", first, err)
	}

	// Expiry: the next call finds the token expired and refreshes it.
	p.SetTokenLifetime(time.Hour)
	waitPast(t, ctx, first.Expiry)
	if got := call(t, ctx, s, "whoami", `{}`).Text(); !strings.HasPrefix(got, "id1 ") {
		t.Errorf("whoami after expiry = %q", got)
	}
	if n := p.count("token", "refresh_token"); n != 1 {
		t.Errorf("%d refresh grants, want 1 (requests %+v)", n, p.Requests())
	}
	if n := p.count("authorize", ""); n != 1 {
		t.Errorf("%d authorizations after the refresh, want still 1", n)
	}
	second, _ := ac.Token(ctx)
	if second == nil || second.AccessToken == first.AccessToken || second.RefreshToken == first.RefreshToken {
		t.Errorf("after the refresh: %v, want a new access token and the rotated refresh token", second)
	}

	// Step-up: mcp:admin on top of what was granted.
	got = call(t, ctx, s, "admin", `{}`).Text()
	if !strings.Contains(got, scopeAdmin) || !strings.Contains(got, scopeTools) {
		t.Errorf("admin = %q, want both scopes in the token", got)
	}
	if n := p.count("authorize", ""); n != 2 {
		t.Fatalf("%d authorizations, want 2 (the step-up)", n)
	}
	var last asRequest
	for _, r := range p.Requests() {
		if r.Endpoint == "authorize" {
			last = r
		}
	}
	if sc := strings.Fields(last.Scope); !slices.Contains(sc, scopeTools) || !slices.Contains(sc, scopeAdmin) || !slices.Contains(sc, "offline_access") {
		t.Errorf("step-up scope %q, want the union: %s, %s and offline_access", last.Scope, scopeTools, scopeAdmin)
	}
	if n := p.Registrations(); n != 1 {
		t.Errorf("%d registrations after the step-up, want 1 (the client is reused)", n)
	}
	// The plain tool still works with the stepped-up token.
	call(t, ctx, s, "whoami", `{}`)
}
