package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// refreshAS makes a hostileAS's token endpoint behave as a strict server
// does with refresh tokens: only a refresh token it issued and nobody has
// redeemed is taken; with rotation every refresh answers a new one, and a
// redeemed one presented again revokes the whole grant (OAuth 2.1
// §4.3.1); without rotation the refresh answer carries no refresh_token
// and the one sent stays good. When resource is set, every token request
// must carry it as its resource indicator (RFC 8707), else invalid_target.
type refreshAS struct {
	h        *hostileAS
	rotate   bool
	resource string
	// beforeRefresh, when set, runs at the start of every refresh
	// request, before it is looked at.
	beforeRefresh func(r *http.Request)

	mu        sync.Mutex
	live      map[string]bool // refresh tokens that may be redeemed
	used      map[string]bool // refresh tokens redeemed (rotation)
	revoked   bool
	refreshes int
	reuses    int
}

func newRefreshAS(h *hostileAS, rotate bool, resource string) *refreshAS {
	s := &refreshAS{h: h, rotate: rotate, resource: resource, live: map[string]bool{}, used: map[string]bool{}}
	h.handle("/token", s.token)
	return s
}

// allow makes rt a live refresh token, as a login before the test's would
// have left it.
func (s *refreshAS) allow(rt string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live[rt] = true
}

// counts returns the refresh requests and the reuses of a redeemed refresh
// token the server has seen.
func (s *refreshAS) counts() (refreshes, reuses int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refreshes, s.reuses
}

func (s *refreshAS) token(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	s.h.recordForm(r)
	refresh := r.Form.Get("grant_type") == "refresh_token"
	if refresh && s.beforeRefresh != nil {
		s.beforeRefresh(r)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if refresh {
		s.refreshes++
	}
	if s.resource != "" && r.Form.Get("resource") != s.resource {
		oauthError(w, http.StatusBadRequest, "invalid_target")
		return
	}
	newRefresh := true
	if refresh {
		rt := r.Form.Get("refresh_token")
		if s.used[rt] {
			s.reuses++
			s.revoked = true
			oauthError(w, http.StatusBadRequest, "invalid_grant")
			return
		}
		if !s.live[rt] || s.revoked {
			oauthError(w, http.StatusBadRequest, "invalid_grant")
			return
		}
		if s.rotate {
			delete(s.live, rt)
			s.used[rt] = true
		} else {
			newRefresh = false
		}
	}
	s.h.mu.Lock()
	s.h.issued++
	at := fmt.Sprintf("at-%d", s.h.issued)
	s.h.live[at] = true
	s.h.mu.Unlock()
	resp := map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": 3600}
	if newRefresh {
		rt := "rt-" + at
		s.live[rt] = true
		resp["refresh_token"] = rt
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// lockWaitCtx is a context that reports, once, the first time its Done is
// called. Token calls it first when it waits for the flow lock (the select
// of lockFlow), after it has read the record in use: the report says the
// caller holds that record and is at the lock.
type lockWaitCtx struct {
	context.Context
	once sync.Once
	at   chan<- struct{}
}

func (c *lockWaitCtx) Done() <-chan struct{} {
	c.once.Do(func() { c.at <- struct{}{} })
	return c.Context.Done()
}

// TestConcurrentTokenRedeemsRefreshTokenOnce: five concurrent Token calls
// on an expired token in a MemoryStore (a store without a lock) make one
// refresh request, and all five get its token. The refresh is held at the
// server until all five have read the expired record and reached the flow
// lock, so that the four waiting ones must notice, once they hold the
// lock, that the record they read has been replaced. Without that check
// (refreshCurrent's cur != rec) each sends the refresh token the first
// has redeemed: with rotation the server takes the reuse for theft,
// revokes the grant, and the user is logged out.
func TestConcurrentTokenRedeemsRefreshTokenOnce(t *testing.T) {
	h := newHostileAS(t)
	s := newRefreshAS(h, true, "")
	s.allow("old-refresh")
	store := &MemoryStore{}
	storedRecord(t, store, h, expired())
	ac := mustNew(t, h.URL+"/mcp", &Config{Store: store})
	ctx := testCtx(t, 30*time.Second)
	if ac.current(ctx) == nil {
		t.Fatal("nothing stored")
	}

	const calls = 5
	atLock := make(chan struct{}, calls)
	var (
		once    sync.Once
		waitErr error
	)
	s.beforeRefresh = func(r *http.Request) {
		once.Do(func() {
			for i := range calls {
				select {
				case <-atLock:
				case <-r.Context().Done():
					waitErr = fmt.Errorf("the refresh request ended with %d of %d calls at the lock", i, calls)
					return
				case <-ctx.Done():
					waitErr = fmt.Errorf("%d of %d calls reached the lock by the deadline", i, calls)
					return
				}
			}
		})
	}

	type result struct {
		tok *Token
		err error
	}
	results := make(chan result, calls)
	var wg sync.WaitGroup
	for range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok, err := ac.Token(&lockWaitCtx{Context: ctx, at: atLock})
			results <- result{tok, err}
		}()
	}
	wg.Wait()
	close(results)
	if waitErr != nil {
		t.Fatal(waitErr)
	}
	for r := range results {
		if r.err != nil || r.tok == nil || !r.tok.validFor(time.Minute) {
			t.Errorf("Token: %v, %v; want the refreshed token", r.tok, r.err)
		}
	}
	if refreshes, reuses := s.counts(); refreshes != 1 || reuses != 0 {
		t.Errorf("%d refresh requests, %d reuses of a redeemed refresh token; want 1 and 0", refreshes, reuses)
	}
}

// TestRefreshUsesTokenRotatedByAnotherProcess: two Clients (two processes)
// share a FileStore. B refreshes the expired token; the server rotates the
// refresh token, and B's new token then comes within the refresh margin
// (its time has run while A was idle: the stored record is aged to say
// so). A, which loaded the old record before B's refresh, must refresh
// with B's rotated refresh token, found in the store under its lock, not
// with the one it loaded, which B has redeemed: the server would revoke
// the grant for that reuse. Without `rec = fresh` A sent the old one.
func TestRefreshUsesTokenRotatedByAnotherProcess(t *testing.T) {
	h := newHostileAS(t)
	s := newRefreshAS(h, true, "")
	s.allow("old-refresh")
	dir := t.TempDir()
	storedRecord(t, &FileStore{Dir: dir}, h, expired())
	u := h.URL + "/mcp"
	a := mustNew(t, u, &Config{Store: &FileStore{Dir: dir}})
	b := mustNew(t, u, &Config{Store: &FileStore{Dir: dir}})
	ctx := testCtx(t, 30*time.Second)
	if a.current(ctx) == nil {
		t.Fatal("nothing stored")
	}

	if tok, err := b.Token(ctx); err != nil || tok == nil {
		t.Fatalf("B's Token: %v, %v", tok, err)
	}
	store := &FileStore{Dir: dir}
	rec, err := store.Load(ctx, b.Resource(), "")
	if err != nil {
		t.Fatal(err)
	}
	rotated := rec.Token.RefreshToken.Reveal()
	if rotated == "" || rotated == "old-refresh" {
		t.Fatalf("B's refresh stored refresh token %q, want a rotated one", rotated)
	}
	// B's token has lived three quarters of its life and more: it is
	// within the refresh margin, still with B's rotated refresh token.
	rec.Token.Obtained = time.Now().Add(-time.Hour)
	rec.Token.Expiry = time.Now().Add(5 * time.Second)
	if err := store.Save(ctx, rec); err != nil {
		t.Fatal(err)
	}

	tok, err := a.Token(ctx)
	if err != nil || tok == nil || !tok.validFor(time.Minute) {
		t.Fatalf("A's Token: %v, %v; want a refreshed token", tok, err)
	}
	forms := h.tokenForms()
	if len(forms) != 2 {
		t.Fatalf("%d token requests, want B's refresh and A's", len(forms))
	}
	if got := forms[1].Get("refresh_token"); got != rotated {
		t.Errorf("A refreshed with %q, want B's rotated %q", got, rotated)
	}
	if _, reuses := s.counts(); reuses != 0 {
		t.Errorf("%d reuses of a redeemed refresh token, want 0", reuses)
	}
}

// TestRefreshKeepsRefreshTokenServerDidNotResend: a server that does not
// rotate refresh tokens answers a refresh without a refresh_token (RFC
// 6749 §6: the client keeps the one it has). The token runs out twice,
// and both times it is refreshed with the same refresh token, with no new
// authorization. Without the copy of the old refresh token into the
// answer's token, the first refresh lost it, and the second expiry sent
// the user to log in again.
func TestRefreshKeepsRefreshTokenServerDidNotResend(t *testing.T) {
	h := newHostileAS(t)
	s := newRefreshAS(h, false, "")
	s.allow("old-refresh")
	store := &MemoryStore{}
	storedRecord(t, store, h, expired())
	u := h.URL + "/mcp"
	ac := mustNew(t, u, &Config{Store: store, User: &Headless{}})
	ctx := testCtx(t, 30*time.Second)

	for i := range 2 {
		if err := call(ctx, ac, u); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		// The token runs out: the next call refreshes it.
		ac.mu.Lock()
		ac.rec.Token.Expiry = time.Now().Add(-time.Second)
		ac.mu.Unlock()
	}
	if refreshes, _ := s.counts(); refreshes != 2 {
		t.Errorf("%d refresh requests, want 2", refreshes)
	}
	if n := h.count("/authorize"); n != 0 {
		t.Errorf("%d authorizations, want none: the refresh token was kept", n)
	}
	for i, f := range h.tokenForms() {
		if f.Get("grant_type") != "refresh_token" || f.Get("refresh_token") != "old-refresh" {
			t.Errorf("token request %d: grant %q with refresh token %q, want a refresh with old-refresh", i, f.Get("grant_type"), f.Get("refresh_token"))
		}
	}
}

// TestRefreshSendsResourceIndicator: a refresh carries the resource
// indicator the token was obtained for (RFC 8707 §2.2), the protected
// resource metadata's resource, also when that is a parent path of the
// MCP URL (RFC 9728 §3.3) and not the MCP URL itself. The server here
// refuses any token request without the right one (invalid_target). After
// a login, the token runs out and is refreshed, with no new
// authorization. Without the resource parameter every refresh was
// refused; with the canonical MCP URL instead of the record's indicator
// the parent-path one was.
func TestRefreshSendsResourceIndicator(t *testing.T) {
	for _, tc := range []struct{ name, mcpPath, resourcePath string }{
		{"the MCP URL", "/mcp", "/mcp"},
		{"a parent path", "/v1/mcp", "/v1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHostileAS(t)
			want := h.URL + tc.resourcePath
			newRefreshAS(h, true, want)
			prmPath := "/.well-known/oauth-protected-resource" + tc.mcpPath
			h.handle(prmPath, jsonDoc(ResourceMetadata{Resource: want, AuthorizationServers: []string{h.URL}}))
			h.handle(tc.mcpPath, func(w http.ResponseWriter, r *http.Request) {
				_, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
				h.mu.Lock()
				ok := h.live[tok]
				h.mu.Unlock()
				if !ok {
					w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+h.URL+prmPath+`"`)
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				_, _ = w.Write([]byte("ok"))
			})
			u := h.URL + tc.mcpPath
			ac := mustNew(t, u, &Config{User: &Headless{}})
			ctx := testCtx(t, 30*time.Second)
			if err := ac.Login(ctx); err != nil {
				t.Fatalf("Login: %v", err)
			}
			first, err := ac.Token(ctx)
			if err != nil || first == nil {
				t.Fatalf("Token after the login: %v, %v", first, err)
			}
			ac.mu.Lock()
			ac.rec.Token.Expiry = time.Now().Add(-time.Second)
			ac.mu.Unlock()

			tok, err := ac.Token(ctx)
			if err != nil || tok == nil || tok.AccessToken == first.AccessToken {
				t.Fatalf("Token after expiry: %v, %v; want a refreshed token", tok, err)
			}
			if err := call(ctx, ac, u); err != nil {
				t.Fatalf("call: %v", err)
			}
			if n := h.count("/authorize"); n != 1 {
				t.Errorf("%d authorizations, want the login's only", n)
			}
			forms := h.tokenForms()
			if len(forms) != 2 || forms[1].Get("grant_type") != "refresh_token" {
				t.Fatalf("token requests %v, want the login's and a refresh", forms)
			}
			if got := forms[1].Get("resource"); got != want {
				t.Errorf("the refresh's resource is %q, want %q", got, want)
			}
		})
	}
}

// TestFileStoreLoadAnyIssuerIsNewest: FileStore.Load without an issuer
// returns the record of the resource saved last, whatever the order of
// its files: a resource that moved to another authorization server is
// used with the new one's credentials, not the old one's. Both orders of
// saving are tried, so that the file names' order cannot give the newest
// by chance. With the sort reversed it returned the oldest.
func TestFileStoreLoadAnyIssuerIsNewest(t *testing.T) {
	const res = "https://mcp.example.com/mcp"
	issuers := []string{"https://as-one.example.com", "https://as-two.example.com"}
	ctx := context.Background()
	for newest := range issuers {
		t.Run(issuers[newest], func(t *testing.T) {
			fs := &FileStore{Dir: t.TempDir()}
			now := time.Now()
			for i, iss := range issuers {
				saved := now.Add(-time.Hour)
				if i == newest {
					saved = now
				}
				rec := &Record{Resource: res, Issuer: iss, Saved: saved,
					Token: &Token{AccessToken: Secret("at-" + iss), TokenType: "Bearer"}}
				if err := fs.Save(ctx, rec); err != nil {
					t.Fatal(err)
				}
			}
			got, err := fs.Load(ctx, res, "")
			if err != nil {
				t.Fatal(err)
			}
			if got.Issuer != issuers[newest] {
				t.Errorf("Load(%q, \"\") = the record of %s, want the newest, %s's", res, got.Issuer, issuers[newest])
			}
		})
	}
}
