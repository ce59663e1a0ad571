package auth

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// deadlineSlack is how long past its deadline a wait may return: the time
// to notice, not a second wait.
const deadlineSlack = 500 * time.Millisecond

// hangingRefresh makes h's token endpoint hold every refresh until the
// returned release is called (or the test ends); entered receives once
// per refresh that arrived.
func hangingRefresh(t *testing.T, h *hostileAS) (entered chan struct{}, release func()) {
	entered = make(chan struct{}, 16)
	gate := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	h.handle("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		h.recordForm(r)
		if r.Form.Get("grant_type") == "refresh_token" {
			entered <- struct{}{}
			select {
			case <-gate:
			case <-r.Context().Done():
				return
			}
		}
		h.issue(w, 3600, "")
	})
	return entered, release
}

// expired is a token that has run out, with a refresh token.
func expired() *Token {
	return &Token{AccessToken: "old-token", TokenType: "Bearer", RefreshToken: "old-refresh",
		Obtained: time.Now().Add(-2 * time.Hour), Expiry: time.Now().Add(-time.Hour)}
}

// withinDeadline runs f with a context of d and checks it returns an
// error wrapping context.DeadlineExceeded no later than d plus the slack.
// When it has not returned by then, the test fails and calls unblock, so
// that a regression is a failure and not a hang.
func withinDeadline(t *testing.T, what string, d time.Duration, unblock func(), f func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- f(ctx) }()
	timer := time.NewTimer(d + deadlineSlack)
	defer timer.Stop()
	var err error
	select {
	case err = <-done:
	case <-timer.C:
		t.Errorf("%s did not return within its deadline of %s", what, d)
		unblock()
		select {
		case err = <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s did not return even once unblocked", what)
		}
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%s: %v, want an error wrapping context.DeadlineExceeded", what, err)
	}
	if took := time.Since(start); took > d+deadlineSlack {
		t.Errorf("%s took %s with a deadline of %s", what, took.Round(time.Millisecond), d)
	}
}

// TestDeadlineKeptBehindAHungRefresh: while one call's refresh hangs at
// the token endpoint, holding the flow lock, a call with a one-second
// deadline returns at its deadline with an error wrapping
// context.DeadlineExceeded, through every way a request gets its token.
// Before the fix the token lock was a sync.Mutex: the call waited for the
// hung refresh (8 s in the report) whatever its deadline.
func TestDeadlineKeptBehindAHungRefresh(t *testing.T) {
	h := newHostileAS(t)
	entered, release := hangingRefresh(t, h)
	store := &MemoryStore{}
	storedRecord(t, store, h, expired())
	ac := mustNew(t, h.URL+"/mcp", &Config{Store: store})

	first := make(chan error, 1)
	go func() {
		_, err := ac.Token(testCtx(t, 30*time.Second))
		first <- err
	}()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the first refresh never reached the token endpoint")
	}

	withinDeadline(t, "Token", time.Second, release, func(ctx context.Context) error {
		_, err := ac.Token(ctx)
		return err
	})
	withinDeadline(t, "AuthorizeRequest", time.Second, release, func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.URL+"/mcp", nil)
		return ac.AuthorizeRequest(req)
	})
	withinDeadline(t, "Header", time.Second, release, func(ctx context.Context) error {
		_, err := ac.Header(ctx)
		return err
	})
	withinDeadline(t, "GetRequestMetadata", time.Second, release, func(ctx context.Context) error {
		_, err := ac.GetRequestMetadata(ctx)
		return err
	})
	withinDeadline(t, "a request through the transport", time.Second, release, func(ctx context.Context) error {
		return call(ctx, ac, h.URL+"/mcp")
	})

	release()
	if err := <-first; err != nil {
		t.Errorf("the hung refresh, released: %v", err)
	}
	if n := len(h.tokenForms()); n != 1 {
		t.Errorf("%d token requests, want the one refresh", n)
	}
}

// TestDeadlineKeptBehindTheStoreLock: a second program (a Client of its
// own) that shares the FileStore waits for the store's lock while the
// first one's refresh hangs, and gives up at its deadline; so does
// FileStore.Lock itself.
func TestDeadlineKeptBehindTheStoreLock(t *testing.T) {
	h := newHostileAS(t)
	entered, release := hangingRefresh(t, h)
	store := &FileStore{Dir: filepath.Join(t.TempDir(), "auth")}
	storedRecord(t, store, h, expired())
	one := mustNew(t, h.URL+"/mcp", &Config{Store: store})
	two := mustNew(t, h.URL+"/mcp", &Config{Store: store})

	first := make(chan error, 1)
	go func() {
		_, err := one.Token(testCtx(t, 30*time.Second))
		first <- err
	}()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the first refresh never reached the token endpoint")
	}
	withinDeadline(t, "the other program's Token", time.Second, release, func(ctx context.Context) error {
		_, err := two.Token(ctx)
		return err
	})
	withinDeadline(t, "FileStore.Lock", time.Second, release, func(ctx context.Context) error {
		unlock, err := store.Lock(ctx, one.Resource())
		if err == nil {
			unlock()
		}
		return err
	})
	release()
	if err := <-first; err != nil {
		t.Errorf("the hung refresh, released: %v", err)
	}
	// Once the lock is free, the other program takes the new token from
	// the store: the refresh token is not sent twice.
	if tok, err := two.Token(testCtx(t, 10*time.Second)); err != nil || tok == nil || tok.AccessToken == "old-token" {
		t.Errorf("after the refresh: %v, %v", tok, err)
	}
	if n := len(h.tokenForms()); n != 1 {
		t.Errorf("%d token requests, want the one refresh", n)
	}
}

// TestDeadlineKeptWhileALoginRuns: a request refused while a login is
// under way (a person who has not come back from the browser) joins it,
// and returns at its own deadline with a *LoginPendingError; the login
// goes on, and ends when its own caller gives up.
func TestDeadlineKeptWhileALoginRuns(t *testing.T) {
	h := newHostileAS(t)
	p := newPerson(t, time.Hour) // never comes back
	ac := mustNew(t, h.URL+"/mcp", &Config{User: p})
	loginCtx, stop := context.WithCancel(context.Background())
	defer stop()
	login := make(chan error, 1)
	go func() { login <- ac.Login(loginCtx) }()
	deadline := time.After(10 * time.Second)
	for {
		p.mu.Lock()
		started := p.starts > 0
		p.mu.Unlock()
		if started {
			break
		}
		select {
		case <-deadline:
			t.Fatal("the login never started its user step")
		case <-time.After(10 * time.Millisecond):
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- call(ctx, ac, h.URL+"/mcp") }()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Second + deadlineSlack):
		t.Error("the request did not return at its deadline")
		ac.mu.Lock()
		ac.pending.cancel(errors.New("the test gives up")) // the login ends, and the request with it
		ac.mu.Unlock()
		err = <-done
	}
	var lpe *LoginPendingError
	if !errors.As(err, &lpe) || !errors.Is(err, ErrLoginPending) {
		t.Errorf("err = %v, want a *LoginPendingError", err)
	}
	if took := time.Since(start); took > time.Second+deadlineSlack {
		t.Errorf("the request took %s with a deadline of 1s", took.Round(time.Millisecond))
	}
	select {
	case err := <-login:
		t.Fatalf("the login ended with the request: %v", err)
	default:
	}
	ac.mu.Lock()
	a := ac.pending
	ac.mu.Unlock()
	stop()
	select {
	case err := <-login:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Login: %v, want the cancellation", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the login did not end when its caller gave up")
	}
	// Login returns at once; the attempt's goroutine ends right after.
	select {
	case <-a.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the attempt did not end")
	}
}
