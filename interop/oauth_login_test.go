package interop

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	takoOnce  sync.Once
	takoBin   string
	takoBuild error
)

// takoCLI builds the tako command once, from the root module (its own
// go.mod, so the binary is the one users build), into peerBin. With -race:
// the CLI is checked too, and `make test` has just compiled its packages
// that way for the root module's tests, so this is mostly a link.
func takoCLI(t *testing.T) string {
	t.Helper()
	takoOnce.Do(func() {
		bin := filepath.Join(peerBin, "tako")
		build := exec.Command("go", "build", "-race", "-o", bin, "./cmd/tako")
		build.Dir = ".."
		if out, err := build.CombinedOutput(); err != nil {
			takoBuild = errors.New(err.Error() + ": " + string(out))
			return
		}
		takoBin = bin
	})
	if takoBuild != nil {
		t.Fatalf("building tako: %v", takoBuild)
	}
	return takoBin
}

// runTako runs the tako command with env added to the test's, and returns
// its output and exit status.
func runTako(t *testing.T, ctx context.Context, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.CommandContext(ctx, takoCLI(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("tako %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// TestOAuthLoginChromium: `tako login URL` with a real browser, Debian's
// Chromium, headless, as $BROWSER through a wrapper script, against the
// real authorization server: Chromium loads the authorization URL, goes
// through the AS's login page (which approves the test user at once) and
// its callback, and is redirected to tako's loopback listener. The stored
// token (in a temporary TAKO_AUTH_DIR) then serves `tako tools --http` and
// `tako call` without a second authorization. Under CI=true a missing
// Chromium fails the test.
func TestOAuthLoginChromium(t *testing.T) {
	t.Parallel()
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		requireInstalled(t, "chromium is not installed (apt-get install -y chromium)")
	}
	ctx := testContext(t)
	p := startOAuthPeer(t)
	// The profile is the script's: Chromium's helpers may still write to
	// it after tako has its redirect, so the script removes it once
	// Chromium is gone, after the test if need be.
	browser := filepath.Join(t.TempDir(), "browser")
	script := "#!/bin/sh\nprofile=$(mktemp -d)\n" +
		`timeout 60 "` + chromium + `" --headless --no-sandbox --disable-gpu --disable-background-networking ` +
		`--disable-component-update --disable-sync --no-first-run --user-data-dir="$profile" --dump-dom "$1" >/dev/null 2>&1` +
		"\nrm -rf \"$profile\"\n"
	if err := os.WriteFile(browser, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"TAKO_AUTH_DIR=" + t.TempDir(), "BROWSER=" + browser}

	out, errOut, code := runTako(t, ctx, env, "login", "--timeout", "45s", p.MCPURL)
	if code != 0 || !strings.Contains(out, "logged in") {
		t.Fatalf("tako login: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, p.Issuer+"/authorize?") {
		t.Errorf("login did not show the authorization URL: %q", errOut)
	}
	out, errOut, code = runTako(t, ctx, env, "tools", "--http", p.MCPURL)
	if code != 0 || !strings.Contains(out, "whoami") || !strings.Contains(out, "admin") {
		t.Fatalf("tako tools with the stored token: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runTako(t, ctx, env, "call", "whoami", "{}", "--http", p.MCPURL)
	if code != 0 || !strings.Contains(out, "id1") {
		t.Fatalf("tako call with the stored token: exit %d\n%s%s", code, out, errOut)
	}
	if n := p.count("authorize", ""); n != 1 {
		t.Errorf("%d authorizations, want 1 (the later calls use the stored token)", n)
	}
	if n := p.Registrations(); n != 1 {
		t.Errorf("%d registrations, want 1", n)
	}
}

// TestOAuthLoginClientCredentials: `tako login --client-credentials`
// against the real authorization server with its pre-registered service
// client, then `tako tools --http` with the stored token; once that token
// has expired (a 3 s lifetime; client credentials come without a refresh
// token), the next `tako tools` gets the server's 401 and obtains a new
// one with the same grant and the stored client, without a login.
func TestOAuthLoginClientCredentials(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	p := startOAuthPeer(t)
	p.SetTokenLifetime(3 * time.Second)
	env := []string{"TAKO_AUTH_DIR=" + t.TempDir(), "TAKO_CLIENT_SECRET=" + serviceClientSecret}

	out, errOut, code := runTako(t, ctx, env, "login", "--client-credentials", "--client-id", serviceClientID, p.MCPURL)
	if code != 0 || !strings.Contains(out, "logged in") {
		t.Fatalf("tako login --client-credentials: exit %d\n%s%s", code, out, errOut)
	}
	if n := p.count("token", "client_credentials"); n != 1 {
		t.Fatalf("%d client credentials grants, want 1 (%+v)", n, p.Requests())
	}
	exp := p.LastExpiry()
	p.SetTokenLifetime(time.Hour)
	out, errOut, code = runTako(t, ctx, env, "call", "whoami", "{}", "--http", p.MCPURL)
	if code != 0 || !strings.Contains(out, serviceClientID+" "+scopeTools) {
		t.Fatalf("tako call with the stored token: exit %d\n%s%s", code, out, errOut)
	}
	if n := p.count("token", "client_credentials"); n != 1 {
		t.Errorf("%d client credentials grants before expiry, want still 1", n)
	}

	waitPast(t, ctx, exp)
	out, errOut, code = runTako(t, ctx, env, "tools", "--http", p.MCPURL)
	if code != 0 || !strings.Contains(out, "whoami") {
		t.Fatalf("tako tools after expiry: exit %d\n%s%s", code, out, errOut)
	}
	if n := p.count("token", "client_credentials"); n != 2 {
		t.Errorf("%d client credentials grants after expiry, want 2 (the token re-issued)", n)
	}
	if n := p.count("authorize", ""); n != 0 {
		t.Errorf("%d authorization requests, want none", n)
	}
	for _, r := range p.Requests() {
		if r.Resource != p.MCPURL {
			t.Errorf("token request with resource %q, want %q", r.Resource, p.MCPURL)
		}
	}
}
