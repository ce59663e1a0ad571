package auth

import (
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"
)

// refusingRefresh makes h's token endpoint refuse every refresh with
// invalid_grant, and take every other grant.
func refusingRefresh(h *hostileAS) {
	h.handle("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		h.recordForm(r)
		if r.Form.Get("grant_type") == "refresh_token" {
			oauthError(w, http.StatusBadRequest, "invalid_grant")
			return
		}
		h.issue(w, 3600, "")
	})
}

// TestRefusedRefreshSentOnce: 50 concurrent calls on an expired token
// whose refresh the server refuses make one token request and a few
// metadata fetches, and every call's error keeps the server's refusal
// (a *ProtocolError invalid_grant) beside the news that a login is
// needed (a *LoginNeededError, ErrNoUserStep). Before the fix they made
// 51 token requests and 52 metadata fetches, and the cause was hidden
// behind ErrNoUserStep.
func TestRefusedRefreshSentOnce(t *testing.T) {
	h := newHostileAS(t)
	refusingRefresh(h)
	store := &MemoryStore{}
	storedRecord(t, store, h, expired())
	ac := mustNew(t, h.URL+"/mcp", &Config{Store: store})
	ctx := testCtx(t, 60*time.Second)

	const calls = 50
	errs := make(chan error, calls)
	var wg sync.WaitGroup
	for range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- call(ctx, ac, h.URL+"/mcp")
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		var (
			pe  *ProtocolError
			lne *LoginNeededError
		)
		if !errors.As(err, &pe) || pe.Code != "invalid_grant" || pe.Endpoint != "token" {
			t.Errorf("err = %v, want the server's invalid_grant in the chain", err)
		}
		if !errors.As(err, &lne) || !errors.Is(err, ErrNoUserStep) {
			t.Errorf("err = %v, want a *LoginNeededError", err)
		}
	}
	if n := len(h.tokenForms()); n != 1 {
		t.Errorf("%d token requests, want 1", n)
	}
	// The refresh's metadata (found once for the stored record), then one
	// authorization's discovery: the resource's, the server's.
	if n := h.metadataFetches(); n > 3 {
		t.Errorf("%d metadata fetches, want at most 3", n)
	}
}

// TestRefreshesCountInMaxAttempts: a server that takes every refresh but
// refuses every token at the MCP endpoint gets at most MaxAttempts
// refreshes over 20 Connects (a login would not help: the server refuses
// tokens it has just issued), each after one discovery, and the error
// says the server keeps refusing (ErrStepUpLimit). Before the fix 20
// Connects made 60 token requests and 120 metadata fetches.
func TestRefreshesCountInMaxAttempts(t *testing.T) {
	for _, tc := range []struct {
		name      string
		user      UserStep
		maxTokens int
	}{
		{"without a user", nil, 3},
		{"with a user", &Headless{}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHostileAS(t)
			h.handle("/mcp", func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", resource_metadata="`+h.URL+`/.well-known/oauth-protected-resource/mcp"`)
				w.WriteHeader(http.StatusUnauthorized)
			})
			store := &MemoryStore{}
			storedRecord(t, store, h, &Token{AccessToken: "stored", TokenType: "Bearer", RefreshToken: "stored-refresh",
				Obtained: time.Now(), Expiry: time.Now().Add(time.Hour)})
			ac := mustNew(t, h.URL+"/mcp", &Config{Store: store, User: tc.user})
			ctx := testCtx(t, 60*time.Second)
			var last error
			for range 20 {
				s, err := connectTo(ctx, ac, h.URL+"/mcp")
				if err == nil {
					s.Close()
					t.Fatal("Connect succeeded against a server that refuses every token")
				}
				last = err
			}
			if !errors.Is(last, ErrStepUpLimit) {
				t.Errorf("the last Connect: %v, want ErrStepUpLimit", last)
			}
			if n := len(h.tokenForms()); n > tc.maxTokens || n == 0 {
				t.Errorf("%d token requests over 20 Connects, want 1 to %d", n, tc.maxTokens)
			}
			// Each authorization discovers once (two documents): one per
			// refresh, and the one that finds the limit reached. The
			// Connects after it get the same answer from memory.
			if n, most := h.metadataFetches(), 2*(tc.maxTokens+1); n > most {
				t.Errorf("%d metadata fetches over 20 Connects, want at most %d", n, most)
			}
		})
	}
}

// TestStoredRecordMetadataKept: a record loaded from the store is
// refreshed again and again with its server's metadata fetched once, not
// on every refresh. Before the fix every refresh fetched it.
func TestStoredRecordMetadataKept(t *testing.T) {
	h := newHostileAS(t)
	store := &MemoryStore{}
	storedRecord(t, store, h, expired())
	ac := mustNew(t, h.URL+"/mcp", &Config{Store: store})
	ctx := testCtx(t, 30*time.Second)
	const refreshes = 5
	for range refreshes {
		tok, err := ac.Token(ctx)
		if err != nil || tok == nil {
			t.Fatalf("Token: %v, %v", tok, err)
		}
		// The token runs out: the next Token refreshes it.
		ac.mu.Lock()
		ac.rec.Token.Expiry = time.Now().Add(-time.Second)
		ac.mu.Unlock()
	}
	if n := len(h.tokenForms()); n != refreshes {
		t.Errorf("%d token requests, want %d refreshes", n, refreshes)
	}
	if n := h.metadataFetches(); n != 1 {
		t.Errorf("%d metadata fetches for %d refreshes, want 1", n, refreshes)
	}
}
