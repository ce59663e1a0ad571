package auth

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// get sends a GET to u with the given Host header ("" for u's own) and
// returns the status and the page. A refusal is answered at once; a
// request taken as the login's answer waits for the login's end, so one
// that has no answer in 2 s was taken, and gets status 0.
func get(t *testing.T, u, host string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if errors.Is(err, context.DeadlineExceeded) {
		return 0, "(no answer: the request was taken as the login's answer)"
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

type waitResult struct {
	q   url.Values
	err error
}

// startCallback starts a Loopback waiting for the answer to an
// authorization request with state.
func startCallback(t *testing.T, state string) (*loopback, chan waitResult) {
	t.Helper()
	l := &Loopback{Out: io.Discard, NoBrowser: true}
	rd, err := l.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rd.Close() })
	lb := rd.(*loopback)
	authURL := "http://127.0.0.1:9/authorize?state=" + state
	lb.expect(authURL) // before any request can arrive, as Wait does first
	done := make(chan waitResult, 1)
	go func() {
		q, err := rd.Wait(testCtx(t, 60*time.Second), authURL)
		done <- waitResult{q, err}
	}()
	return lb, done
}

func stillWaiting(t *testing.T, done chan waitResult, after string) {
	t.Helper()
	select {
	case r := <-done:
		t.Fatalf("after %s the login ended: %v, %v", after, r.q, r.err)
	default:
	}
}

// TestLoopbackCallbackRefusesStrays: requests that are not the answer to
// the login's own authorization request (a wrong state, no state,
// another path, a Host that is not loopback as DNS rebinding gives) are
// refused with a page that says why, and the login goes on: the real
// answer then completes it, and a second answer is refused. Before the
// fix the refusal's page said "Authorization complete", and one stray
// request to the callback ended the real login.
func TestLoopbackCallbackRefusesStrays(t *testing.T) {
	lb, done := startCallback(t, "the-state")
	base := lb.URL()
	_, port, _ := strings.Cut(strings.TrimPrefix(base, "http://"), ":")
	port = strings.TrimSuffix(port, "/callback")
	for _, tc := range []struct {
		name, url, host string
		status          int
		says            string
	}{
		{"a wrong state", base + "?state=other-state&code=forged", "", http.StatusBadRequest, "state does not match"},
		{"no state", base + "?code=forged", "", http.StatusBadRequest, "state does not match"},
		{"an error without the state", base + "?error=access_denied", "", http.StatusBadRequest, "state does not match"},
		{"another path", strings.TrimSuffix(base, "/callback") + "/favicon.ico?state=the-state&code=forged", "", http.StatusNotFound, "not found"},
		{"a rebound Host", base + "?state=the-state&code=forged", "attacker.example:" + port, http.StatusForbidden, "only to this computer"},
		{"a rebound Host under a loopback name", base + "?state=the-state&code=forged", "127.0.0.1.attacker.example:" + port, http.StatusForbidden, "only to this computer"},
	} {
		status, page := get(t, tc.url, tc.host)
		if status != tc.status || !strings.Contains(page, tc.says) {
			t.Errorf("%s: %d %q, want %d saying %q", tc.name, status, page, tc.status, tc.says)
		}
		for _, lie := range []string{"logged in", "complete", "received the authorization"} {
			if strings.Contains(page, lie) {
				t.Errorf("%s: the page says %q: %s", tc.name, lie, page)
			}
		}
		stillWaiting(t, done, tc.name)
	}

	// The real answer completes the login; its page waits for the token
	// request's outcome.
	pageC := make(chan string, 1)
	go func() {
		_, page := get(t, base+"?state=the-state&code=the-code", "")
		pageC <- page
	}()
	var r waitResult
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the real answer did not end the wait")
	}
	if r.err != nil || r.q.Get("code") != "the-code" {
		t.Fatalf("Wait: %v, %v; want the real answer's code", r.q, r.err)
	}
	lb.finish(nil)
	if page := <-pageC; !strings.Contains(page, "You are logged in") {
		t.Errorf("after a login that worked the page says %q", page)
	}
	// A second answer, even with the right state, is not taken.
	if status, page := get(t, base+"?state=the-state&code=again", ""); status != http.StatusBadRequest || strings.Contains(page, "logged in") {
		t.Errorf("a second answer: %d %q", status, page)
	}
}

// TestLoopbackCallbackSaysTheLoginFailed: when the code exchange fails,
// the page the browser lands on says the login failed, and why; an
// error answer from the authorization server says it refused.
func TestLoopbackCallbackSaysTheLoginFailed(t *testing.T) {
	lb, done := startCallback(t, "s1")
	pageC := make(chan string, 1)
	go func() {
		_, page := get(t, lb.URL()+"?state=s1&code=c", "")
		pageC <- page
	}()
	if r := <-done; r.err != nil {
		t.Fatal(r.err)
	}
	lb.finish(&ProtocolError{Endpoint: "token", Status: 400, Code: "invalid_grant"})
	if page := <-pageC; !strings.Contains(page, "The login failed") || !strings.Contains(page, "invalid_grant") || strings.Contains(page, "logged in") {
		t.Errorf("after a failed exchange the page says %q", page)
	}

	lb, done = startCallback(t, "s2")
	_, page := get(t, lb.URL()+"?state=s2&error=access_denied&error_description=no+thanks", "")
	if r := <-done; r.err != nil || r.q.Get("error") != "access_denied" {
		t.Fatalf("Wait: %v, %v", r.q, r.err)
	}
	if !strings.Contains(page, "refused the login (access_denied): no thanks") {
		t.Errorf("after the server's refusal the page says %q", page)
	}
}

// TestLoginFailedPage: a whole login whose code the token endpoint
// refuses ends with the error, and the page the person's browser lands on
// says the login failed.
func TestLoginFailedPage(t *testing.T) {
	h := newHostileAS(t)
	h.handle("/token", func(w http.ResponseWriter, _ *http.Request) { oauthError(w, http.StatusBadRequest, "invalid_grant") })
	p := newPerson(t, 0)
	ac := mustNew(t, h.URL+"/mcp", &Config{User: p})
	err := ac.Login(testCtx(t, 30*time.Second))
	var pe *ProtocolError
	if !errors.As(err, &pe) || pe.Code != "invalid_grant" {
		t.Fatalf("Login: %v, want the token endpoint's invalid_grant", err)
	}
	p.wg.Wait()
	if page := p.lastPage(); !strings.Contains(page, "The login failed") {
		t.Errorf("the callback page says %q", page)
	}
}
