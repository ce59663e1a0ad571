package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
)

// authServer is an authorization server that auto-approves a fixed test
// user (its /authorize redirects at once, so a browser that only loads the
// URL completes the flow) in front of a legacy MCP endpoint that wants its
// bearer tokens.
func authServer(t *testing.T) (mcpURL string, authorizations func() int) {
	var (
		mu     sync.Mutex
		tokens = map[string]bool{}
		n      int
	)
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	js := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		js(w, 200, map[string]any{"resource": hs.URL + "/mcp", "authorization_servers": []string{hs.URL}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		js(w, 200, map[string]any{"issuer": hs.URL, "authorization_endpoint": hs.URL + "/authorize", "token_endpoint": hs.URL + "/token",
			"registration_endpoint": hs.URL + "/register", "code_challenge_methods_supported": []string{"S256"}})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		var reg struct {
			RedirectURIs []string `json:"redirect_uris"`
		}
		_ = json.NewDecoder(r.Body).Decode(&reg)
		js(w, 201, map[string]any{"client_id": "cli", "redirect_uris": reg.RedirectURIs})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		mu.Lock()
		n++
		mu.Unlock()
		http.Redirect(w, r, q.Get("redirect_uri")+"?code=c&state="+q.Get("state"), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if r.Form.Get("code_verifier") == "" && r.Form.Get("grant_type") == "authorization_code" {
			js(w, 400, map[string]string{"error": "invalid_grant"})
			return
		}
		mu.Lock()
		tok := fmt.Sprintf("tok-%d", len(tokens))
		tokens[tok] = true
		mu.Unlock()
		js(w, 200, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600})
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ok := tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+hs.URL+`/.well-known/oauth-protected-resource/mcp"`)
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		msg, err := mcp.DecodeMessage(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var result string
		switch msg.Method {
		case mcp.MethodInitialize:
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"a","version":"1"}}`
		case mcp.MethodToolsList:
			result = `{"tools":[{"name":"secret-tool","description":"Behind OAuth.","inputSchema":{"type":"object"}}]}`
		default:
			if !msg.IsRequest() {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			http.Error(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"no"}}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write((&mcp.Message{ID: msg.ID, Result: json.RawMessage(result)}).AppendJSON(nil))
	})
	return hs.URL + "/mcp", func() int { mu.Lock(); defer mu.Unlock(); return n }
}

// browserScript writes an executable that $BROWSER can name.
func browserScript(t *testing.T, body string) string {
	p := filepath.Join(t.TempDir(), "browser")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// loginRoundTrip logs in with $BROWSER, then lists the tools with the
// stored token, then logs out.
func loginRoundTrip(t *testing.T, browser string) {
	u, authorizations := authServer(t)
	t.Setenv(authDirEnv, t.TempDir())
	t.Setenv("BROWSER", browser)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"login", "--timeout", "60s", u}, &out, &errb); code != 0 {
		t.Fatalf("login: exit %d\n%s%s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "logged in") {
		t.Errorf("login said %q", out.String())
	}
	files, _ := filepath.Glob(filepath.Join(os.Getenv(authDirEnv), "*.json"))
	if len(files) != 1 {
		t.Fatalf("stored files: %v", files)
	}
	if fi, err := os.Stat(files[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode: %v %v", fi.Mode(), err)
	}
	out.Reset()
	errb.Reset()
	if code := run(ctx, []string{"tools", "--http", u}, &out, &errb); code != 0 || !strings.Contains(out.String(), "secret-tool") {
		t.Fatalf("tools with the stored token: exit %d\n%s%s", code, out.String(), errb.String())
	}
	if n := authorizations(); n != 1 {
		t.Errorf("%d authorizations, want 1 (the tools call uses the stored token)", n)
	}
	if code := run(ctx, []string{"logout", u}, &out, &errb); code != 0 {
		t.Fatalf("logout: exit %d %s", code, errb.String())
	}
	errb.Reset()
	want := "tako: " + u + " needs a login: run tako login " + u + "\n"
	if code := run(ctx, []string{"tools", "--http", u}, &out, &errb); code != exitAuth || errb.String() != want {
		t.Errorf("tools after logout: exit %d %q, want %d and %q", code, errb.String(), exitAuth, want)
	}
}

// TestLogin: the loopback flow, with a "browser" that just fetches the URL
// and follows the redirects: the test binary itself (helperBrowser), so
// that the test runs where curl is not installed (it used to skip there,
// CI included). Under -race the binary would sleep a second at exit (the
// race detector's atexit_sleep_ms), longer than goleak waits for the
// goroutine that reaps the browser, so the browser is told not to.
func TestLogin(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	loginRoundTrip(t, browserScript(t, fmt.Sprintf(`GORACE="$GORACE atexit_sleep_ms=0" %s=browser exec '%s' "$1"`, helperEnv, exe)))
}

// TestLoginFailure: an authorization that fails exits with status 3 and a
// one-line reason, after the browser's URL.
func TestLoginFailure(t *testing.T) {
	u, _ := authServer(t)
	t.Setenv(authDirEnv, t.TempDir())
	t.Setenv("BROWSER", browserScript(t, "exit 0")) // nobody comes back
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"login", "--timeout", "1s", u}, &out, &errb)
	if code != exitFailure || strings.Count(strings.TrimSpace(errb.String()), "\n") > 2 || !strings.Contains(errb.String(), "tako: login to "+u+" failed: timed out") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

// TestLoginChromium: `tako login` with a real browser, Debian's Chromium,
// headless, as $BROWSER through a wrapper script: it loads the
// authorization URL, the test server approves its fixed user at once, and
// Chromium follows the redirect to tako's loopback listener. The stored
// token then serves `tako tools --http`. Under CI a missing Chromium
// fails the test.
func TestLoginChromium(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		mcptest.SkipOrFail(t, "chromium is not installed (apt-get install -y chromium)")
	}
	// Chromium's helper processes may still write to the profile after
	// the browser exits, so it is not a t.TempDir (whose cleanup fails
	// on a directory that is not empty); it is removed best-effort.
	profile, err := os.MkdirTemp("", "tako-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for range 10 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
	loginRoundTrip(t, browserScript(t, `exec timeout 60 "`+bin+`" --headless --no-sandbox --disable-gpu `+
		`--disable-background-networking --disable-component-update --disable-sync --no-first-run `+
		`--user-data-dir="`+profile+`" --dump-dom "$1" >/dev/null 2>&1`))
}

// TestLoginFlagsAfterURL: login and logout take their flags before or
// after the URL, and --help, as every command does. Before the fix
// `login URL --no-browser` was a usage error, `login --help` a flag error
// and `logout --help` took --help for the URL.
func TestLoginFlagsAfterURL(t *testing.T) {
	u, _ := authServer(t)
	t.Setenv(authDirEnv, t.TempDir())
	t.Setenv("BROWSER", browserScript(t, "exit 1")) // must not be opened
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"login", u, "--no-browser", "--timeout", "1s"}, &out, &errb)
	if code != exitFailure || !strings.Contains(errb.String(), "Open this URL in a browser") || !strings.Contains(errb.String(), "timed out") {
		t.Errorf("login URL --no-browser --timeout 1s: exit %d, stderr %q", code, errb.String())
	}
	for _, args := range [][]string{{"login", "--help"}, {"logout", "--help"}, {"login", u, "--help"}} {
		out.Reset()
		errb.Reset()
		if code := run(context.Background(), args, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "Usage:\n  tako "+args[0]) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out.String(), errb.String())
		}
	}
	out.Reset()
	if code := run(context.Background(), []string{"logout", u}, &out, &errb); code != 0 || out.String() != "not logged in to "+u+"\n" {
		t.Errorf("logout when not logged in: exit %d %q", code, out.String())
	}
}
