package auth

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestHeadlessFollowsServerRedirects: an authorization server that goes
// through a login page (which sets a session cookie) and its own callback
// before redirecting to the client.
func TestHeadlessFollowsServerRedirects(t *testing.T) {
	const redirect = "http://127.0.0.1:9/callback"
	mux := http.NewServeMux()
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "s1"})
		http.Redirect(w, r, "/login?state="+r.URL.Query().Get("state"), http.StatusFound)
	})
	mux.HandleFunc("/login", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("session"); err != nil || c.Value != "s1" {
			http.Error(w, "no session", http.StatusUnauthorized)
			return
		}
		http.Redirect(w, r, "/callback?state="+r.URL.Query().Get("state"), http.StatusSeeOther)
	})
	mux.HandleFunc("/callback", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, redirect+"?code=c1&state="+r.URL.Query().Get("state"), http.StatusFound)
	})
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://idp.invalid/login", http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	h := &Headless{RedirectURL: redirect}
	rd, _ := h.Start(context.Background())
	q, err := rd.Wait(context.Background(), srv.URL+"/authorize?state=st")
	if err != nil {
		t.Fatal(err)
	}
	if q.Get("code") != "c1" || q.Get("state") != "st" {
		t.Errorf("redirect query %v", q)
	}
	// A redirect to another origin is a step Headless cannot take.
	if _, err := rd.Wait(context.Background(), srv.URL+"/elsewhere"); err == nil || !strings.Contains(err.Error(), "not the redirect URI") {
		t.Errorf("redirect elsewhere: %v", err)
	}
	if _, err := rd.Wait(context.Background(), srv.URL+"/loop"); err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Errorf("redirect loop: %v", err)
	}
}

// TestLoopbackNoBrowser: when no browser can be opened ($BROWSER names a
// command that cannot start, or one that fails), the Loopback step prints
// the URL for the user, and times out cleanly when nobody comes back: an
// ErrTimeout, and the listener released by Close.
func TestLoopbackNoBrowser(t *testing.T) {
	for _, tc := range []struct{ name, browser, says string }{
		{"missing", "/nonexistent/tako-browser", "Open this URL in a browser"},
		// It starts, so tako cannot know it failed: the URL is printed all
		// the same.
		{"failing", "false", "If it did not open, visit:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("BROWSER", tc.browser)
			var out strings.Builder
			l := &Loopback{Out: &out, Timeout: 100 * time.Millisecond}
			rd, err := l.Start(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			const authURL = "http://127.0.0.1:9/authorize?client_id=c&state=s"
			start := time.Now()
			_, err = rd.Wait(context.Background(), authURL)
			if !errors.Is(err, ErrTimeout) {
				t.Errorf("Wait: %v, want ErrTimeout", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Wait took %s with a 100ms timeout", d)
			}
			if s := out.String(); !strings.Contains(s, tc.says) || !strings.Contains(s, authURL+"\n") {
				t.Errorf("printed %q, want %q and the URL on a line", s, tc.says)
			}
			addr := strings.TrimSuffix(strings.TrimPrefix(rd.URL(), "http://"), "/callback")
			if err := rd.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if err := rd.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			if c, err := net.Dial("tcp", addr); err == nil {
				c.Close()
				t.Errorf("%s still accepts connections after Close", addr)
			}
		})
	}
}

// TestLoopbackOpen: Loopback.Open is handed the authorization URL instead
// of the system browser ($BROWSER, which must not run), after the callback
// knows the request's state, so that what it opens is answered: the
// redirect it leads to ends the wait with its code. An Open that fails
// prints the URL, as a browser that cannot start does.
func TestLoopbackOpen(t *testing.T) {
	t.Setenv("BROWSER", "/nonexistent/tako-browser-must-not-run")
	var out strings.Builder
	opened := make(chan string, 1)
	l := &Loopback{Out: &out, Timeout: 10 * time.Second, Open: func(u string) error {
		opened <- u
		return nil
	}}
	rd, err := l.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	type result struct {
		code string
		err  error
	}
	done := make(chan result, 1)
	const authURL = "http://127.0.0.1:9/authorize?client_id=c&state=the-state"
	go func() {
		q, err := rd.Wait(context.Background(), authURL)
		done <- result{q.Get("code"), err}
	}()
	var got string
	select {
	case got = <-opened:
	case <-time.After(10 * time.Second):
		t.Fatal("Open was not called")
	}
	if got != authURL {
		t.Fatalf("Open got %q, want %q", got, authURL)
	}
	page := make(chan struct{})
	go func() {
		defer close(page)
		resp, err := http.Get(rd.URL() + "?state=the-state&code=the-code")
		if err == nil {
			resp.Body.Close()
		}
	}()
	select {
	case r := <-done:
		if r.err != nil || r.code != "the-code" {
			t.Fatalf("Wait: %q, %v; want the redirect's code", r.code, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the redirect did not end the wait")
	}
	rd.(*loopback).finish(nil) // the callback page answers now
	<-page
	if s := out.String(); strings.Contains(s, "Open this URL") {
		t.Errorf("printed %q although Open showed the URL", s)
	}

	out.Reset()
	l = &Loopback{Out: &out, Timeout: 50 * time.Millisecond, Open: func(string) error { return errors.New("no window") }}
	rd2, err := l.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer rd2.Close()
	if _, err := rd2.Wait(context.Background(), authURL); !errors.Is(err, ErrTimeout) {
		t.Errorf("Wait: %v, want ErrTimeout", err)
	}
	if s := out.String(); !strings.Contains(s, "Open this URL in a browser") || !strings.Contains(s, authURL+"\n") {
		t.Errorf("after a failed Open printed %q, want the URL", s)
	}
}
