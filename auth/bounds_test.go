package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestDiscoveryFanOutBounded: one 401 whose resource metadata lists 5,000
// authorization servers (URLs the server chose, none with metadata)
// makes at most maxDiscoveryFetches fetches, of at most
// maxAuthorizationServers of them, and fails with ErrNoMetadata; the
// engine's immediate retry of the same refusal fetches nothing more.
// Before the fix it made 15,000 fetches.
func TestDiscoveryFanOutBounded(t *testing.T) {
	h := newHostileAS(t)
	var servers []string
	for i := range 5000 {
		servers = append(servers, fmt.Sprintf("%s/as/%d", h.URL, i))
	}
	h.resource(func(prm *ResourceMetadata) { prm.AuthorizationServers = servers })
	ac := mustNew(t, h.URL+"/mcp", &Config{User: &Headless{}})
	ctx := testCtx(t, 30*time.Second)
	if err := call(ctx, ac, h.URL+"/mcp"); !errors.Is(err, ErrNoMetadata) {
		t.Errorf("err = %v, want ErrNoMetadata", err)
	}
	if err := call(ctx, ac, h.URL+"/mcp"); !errors.Is(err, ErrNoMetadata) {
		t.Errorf("the retry: %v, want ErrNoMetadata", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	fetches, tried := 0, map[string]bool{}
	asPath := regexp.MustCompile(`/as/(\d+)`)
	for p, n := range h.hits {
		if m := asPath.FindStringSubmatch(p); m != nil {
			fetches += n
			tried[m[1]] = true
		} else if p != "/mcp" {
			fetches += n
		}
	}
	if fetches > maxDiscoveryFetches || len(tried) > maxAuthorizationServers {
		t.Errorf("%d fetches of %d authorization servers' metadata, want at most %d of %d", fetches, len(tried), maxDiscoveryFetches, maxAuthorizationServers)
	}
	if len(tried) == 0 {
		t.Error("no authorization server was tried")
	}
}

// TestDiscoveryFetchBudget: the budget holds on its own, whatever the
// loop over servers does: each server's metadata found at its third
// place, with the wrong issuer, costs three fetches, and the fetches stop
// at maxDiscoveryFetches.
func TestDiscoveryFetchBudget(t *testing.T) {
	var (
		mu      sync.Mutex
		fetches int
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fetches++
		mu.Unlock()
		jsonDoc(ServerMetadata{Issuer: "https://elsewhere.example", TokenEndpoint: "https://elsewhere.example/token"})(w, r)
	}))
	defer srv.Close()
	f := newFetcher(nil, 0).budgeted(maxDiscoveryFetches)
	ctx := testCtx(t, 10*time.Second)
	for i := range 100 {
		if _, err := f.discoverServer(ctx, fmt.Sprintf("%s/as/%d", srv.URL, i), nil); err == nil {
			t.Fatal("metadata with the wrong issuer was taken")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if fetches != maxDiscoveryFetches {
		t.Errorf("%d fetches through a budget of %d", fetches, maxDiscoveryFetches)
	}
}

// resend does what a transport without a bound of its own would do: send,
// and on 401 or 403 ask the Client, up to n times.
func resend(ctx context.Context, c *Client, u string, n int) error {
	for range n {
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
		if err := c.HandleUnauthorized(ctx, resp); err != nil {
			return err
		}
	}
	return fmt.Errorf("still refused after %d re-sends", n)
}

// stepUpForever makes h's MCP endpoint answer every live token with 403
// insufficient_scope for a scope it has not asked for before, made by
// scope(i); it returns the scopes of every authorization request.
func stepUpForever(h *hostileAS, scope func(i int) string) func() []string {
	var (
		mu     sync.Mutex
		asked  []string
		next   int
		prmURL = h.URL + "/.well-known/oauth-protected-resource/mcp"
	)
	h.handle("/mcp", func(w http.ResponseWriter, r *http.Request) {
		_, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		h.mu.Lock()
		live := h.live[tok]
		h.mu.Unlock()
		if !live {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+prmURL+`"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		mu.Lock()
		next++
		s := scope(next)
		mu.Unlock()
		w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+s+`", resource_metadata="`+prmURL+`"`)
		w.WriteHeader(http.StatusForbidden)
	})
	h.handle("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		mu.Lock()
		asked = append(asked, q.Get("scope"))
		mu.Unlock()
		http.Redirect(w, r, q.Get("redirect_uri")+"?code=c&state="+url.QueryEscape(q.Get("state"))+"&iss="+url.QueryEscape(h.URL), http.StatusFound)
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(asked)
	}
}

// TestStepUpLimit: a server that answers 403 insufficient_scope with a
// new scope every time gets a login and MaxAttempts step-ups (the
// default, 3), then ErrStepUpLimit, however often the transport would
// re-send. Before the fix it got 300 token requests and a 32 KB scope,
// and ErrStepUpLimit never came; the old test asserted n > 3 where its
// loop stopped at 3 anyway.
func TestStepUpLimit(t *testing.T) {
	h := newHostileAS(t)
	asked := stepUpForever(h, func(i int) string { return fmt.Sprintf("scope-%d", i) })
	ac := mustNew(t, h.URL+"/mcp", &Config{User: &Headless{}})
	err := resend(testCtx(t, 30*time.Second), ac, h.URL+"/mcp", 100)
	if !errors.Is(err, ErrStepUpLimit) {
		t.Errorf("err = %v, want ErrStepUpLimit", err)
	}
	if n := len(h.tokenForms()); n != 1+3 {
		t.Errorf("%d token requests, want a login and 3 step-ups", n)
	}
	if n := len(asked()); n != 1+3 {
		t.Errorf("%d authorization requests, want 4", n)
	}
}

// TestStepUpScopeBounded: with MaxAttempts out of the way, the scope a
// step-up asks for never passes maxScopes scopes or maxScopeLen bytes:
// the step-up that would is refused with ErrStepUpLimit.
func TestStepUpScopeBounded(t *testing.T) {
	for _, tc := range []struct {
		name  string
		scope func(i int) string
	}{
		{"many short scopes", func(i int) string { return fmt.Sprintf("s%d", i) }},
		{"a few long scopes", func(i int) string { return fmt.Sprintf("%03d-%s", i, strings.Repeat("x", 200)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHostileAS(t)
			asked := stepUpForever(h, tc.scope)
			ac := mustNew(t, h.URL+"/mcp", &Config{User: &Headless{}, MaxAttempts: 1000})
			err := resend(testCtx(t, 60*time.Second), ac, h.URL+"/mcp", 1000)
			if !errors.Is(err, ErrStepUpLimit) {
				t.Errorf("err = %v, want ErrStepUpLimit", err)
			}
			widest := ""
			for _, s := range asked() {
				if len(s) > len(widest) {
					widest = s
				}
			}
			if n := len(strings.Fields(widest)); n > maxScopes || len(widest) > maxScopeLen {
				t.Errorf("a step-up asked for %d scopes (%d bytes), want at most %d (%d bytes)", n, len(widest), maxScopes, maxScopeLen)
			}
			if n := len(h.tokenForms()); n > 1+maxScopes {
				t.Errorf("%d token requests", n)
			}
		})
	}
}
