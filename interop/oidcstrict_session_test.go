// The person's session of issue 19 ("A login that works for a person
// against a strict authorization server"): `make test` runs it, CI too
// (.ci/run installs Chromium, and npm ci installs oidc-provider).

package interop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tako-mcp/tako/auth"
)

// personDwell is how long the person reads each page before acting on
// it: at least 10 s, the time a person takes to type a password.
const personDwell = 10 * time.Second

// TestOIDCStrictPersonSession: a person's session with the tako CLI
// against the strict authorization server (oidc/server.mjs) and its MCP
// server, each step a subtest that needs the steps before it:
//
//  1. login: `tako login URL`, through the sign-in and consent pages in
//     headless Chromium, read for 10 s each; tako stores a refresh token.
//  2. tools: `tako tools --http URL` with the stored token, no browser.
//  3. refresh: once the access token has expired (by its exp claim), a
//     `tako call` succeeds through exactly one refresh request.
//  4. step-up: a call of write_note gets 403 insufficient_scope and says
//     so; `tako login --scope "mcp:read mcp:write" URL` gets a token with
//     mcp:write (without registering a second client), and the call
//     succeeds.
//  5. two processes: two `tako call` started at once after the expiry both
//     succeed, no refresh token is used twice and the grant is not
//     revoked; a third call after the next expiry refreshes and works.
//  6. logout: `tako logout URL` revokes the refresh token at the
//     revocation endpoint (the server saw it, and the old refresh token is
//     refused after) and forgets the tokens.
//  7. after logout: `tako tools` fails with one line that names
//     `tako login URL`, without opening a browser.
func TestOIDCStrictPersonSession(t *testing.T) {
	t.Parallel()
	start := time.Now()
	ctx := strictTestContext(t, 5*time.Minute)
	as, rs := startStrict(t, ctx)
	p := newPerson(t, strictUser, strictPassword, personDwell)
	browser := newBrowserHandoff(t)
	dir := t.TempDir()
	env := []string{"TAKO_AUTH_DIR=" + dir, "BROWSER=" + browser.Script}
	store := &auth.FileStore{Dir: dir}
	resource := rs.URL
	if ac, err := auth.New(rs.URL, &auth.Config{Store: store}); err == nil {
		resource = ac.Resource()
	}
	load := func(t *testing.T) *auth.Record {
		t.Helper()
		rec, err := store.Load(ctx, resource, "")
		if err != nil {
			t.Fatalf("the token store (%s): %v", dir, err)
		}
		if rec.Token == nil || rec.Token.AccessToken == "" {
			t.Fatalf("the token store holds no access token: %v", rec)
		}
		return rec
	}
	// tako runs one tako command and fails the step, with what tako said,
	// when it does not exit with want (-1: anything but 0).
	tako := func(t *testing.T, timeout time.Duration, want int, args ...string) (stdout, stderr string) {
		t.Helper()
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		mark, refused := as.Mark(t, ctx), len(rs.Refused())
		stdout, stderr, code := runTako(t, cctx, env, args...)
		// What a person sees, for the README's login walk-through.
		t.Logf("$ tako %s\n%s%s(exit %d)", strings.Join(args, " "), stdout, stderr, code)
		if want >= 0 && code != want || want < 0 && code == 0 {
			t.Fatalf("tako %s: exit %d, want %s\nstdout: %s\nstderr: %s\nserver events:%s\nresource server refused: %v",
				strings.Join(args, " "), code, wantCode(want), stdout, stderr, describe(as.since(t, ctx, mark, all)), rs.Refused()[refused:])
		}
		return stdout, stderr
	}
	// login runs `tako login` with args while the person goes through the
	// pages tako opens in the browser.
	login := func(t *testing.T, args ...string) (stdout, stderr string) {
		t.Helper()
		mark, pages := as.Mark(t, ctx), len(p.Pages())
		n := len(browser.URLs()) + 1
		lctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(lctx, takoCLI(t), append([]string{"login"}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		var werr error
		go func() {
			werr = cmd.Wait()
			close(exited)
		}()
		// The person opens what tako hands the browser, unless tako
		// exits first.
		wctx, wcancel := context.WithTimeout(lctx, 30*time.Second)
		go func() {
			select {
			case <-exited:
				wcancel()
			case <-wctx.Done():
			}
		}()
		authURL, err := browser.Wait(wctx, n)
		wcancel()
		if urls := browser.URLs(); err != nil && len(urls) >= n {
			authURL, err = urls[n-1], nil // opened, then exited
		}
		var pg pageSeen
		personErr := err
		select {
		case <-exited:
			if err != nil {
				personErr = errors.New("tako login exited without opening the browser")
			}
		default:
		}
		if personErr == nil {
			pg, personErr = p.authorize(lctx, authURL, func(u *url.URL) bool { return u.Hostname() == "127.0.0.1" && u.Path == "/callback" })
		}
		<-exited
		var ee *exec.ExitError
		code := 0
		switch {
		case errors.As(werr, &ee):
			code = ee.ExitCode()
		case werr != nil:
			t.Fatalf("tako login: %v", werr)
		}
		t.Logf("$ tako login %s\n%s%s(exit %d)", strings.Join(args, " "), out.String(), errb.String(), code)
		if personErr != nil || code != 0 || !strings.Contains(out.String(), "logged in") {
			var seen strings.Builder
			for i, pg := range p.Pages()[pages:] {
				fmt.Fprintf(&seen, "\n\t%d. %s", i+1, pg)
			}
			t.Fatalf("tako login %s: exit %d\nstdout: %s\nstderr: %s\nthe person: %v\npages:%s\nserver events:%s",
				strings.Join(args, " "), code, out.String(), errb.String(), personErr, seen.String(), describe(as.since(t, ctx, mark, all)))
		}
		if !strings.Contains(pg.Text, "You are logged in") {
			t.Errorf("tako's callback page says %q, want that the login worked (it is shown after the token request)", pg.Text)
		}
		return out.String(), errb.String()
	}
	done := map[string]bool{}
	seeded, forgotten := false, false
	// A step that needs "login" runs after a failed login all the same,
	// from a store seeded with tokens of the harness's own login, so that
	// one run reports on every step. The login step stays failed.
	step := func(name string, needs []string, fn func(t *testing.T)) {
		t.Run(name, func(t *testing.T) {
			for _, n := range needs {
				switch {
				case done[n]:
				case n == "login" && !seeded:
					seedStore(t, ctx, as, rs, p, store, resource)
					seeded = true
					t.Logf("the login step failed: this step starts from tokens the harness got itself")
				case n == "login":
				default:
					t.Skipf("needs step %s, which failed", n)
				}
			}
			fn(t)
			done[name] = !t.Failed()
		})
	}

	step("login", nil, func(t *testing.T) {
		login(t, rs.URL)
		for _, pg := range p.Pages() {
			if pg.Form != "" && pg.Dwelt < personDwell {
				t.Errorf("the person read %s for %s, want %s", pg.URL, pg.Dwelt, personDwell)
			}
		}
		rec := load(t)
		if rec.Token.RefreshToken == "" {
			t.Errorf("no refresh token stored: the server grants one for offline_access with prompt=consent%s", describe(as.Events(0)))
		}
		evs := as.since(t, ctx, 0, func(e oidcEvent) bool { return e.Event == "request" || e.Event == "authorization" })
		var auths, codes, refreshes, regs []oidcEvent
		for _, e := range evs {
			switch {
			case e.Event == "authorization":
				auths = append(auths, e)
			case e.Route == "registration":
				regs = append(regs, e)
			case e.isRefresh():
				refreshes = append(refreshes, e)
			case e.Route == "token" && e.GrantType == "authorization_code":
				codes = append(codes, e)
			}
		}
		if len(auths) != 1 || !strings.Contains(auths[0].Scope, "offline_access") || auths[0].Prompt != "consent" || auths[0].Resource != rs.URL {
			t.Errorf("authorization requests %v, want one with offline_access, prompt=consent and resource %s", auths, rs.URL)
		}
		if len(codes) != 1 || codes[0].Status != http.StatusOK || !codes[0].RefreshTokenIssued {
			t.Errorf("code exchanges %v, want one that got a refresh token", codes)
		}
		if len(refreshes) != 0 {
			t.Errorf("%d refresh requests during the login, want none (a 20 s token is fresh):%s", len(refreshes), describe(refreshes))
		}
		if len(regs) != 1 || regs[0].Status != http.StatusCreated {
			t.Errorf("registrations %v, want one", regs)
		}
	})

	step("tools", []string{"login"}, func(t *testing.T) {
		mark := as.Mark(t, ctx)
		opened := len(browser.URLs())
		out, _ := tako(t, 30*time.Second, 0, "tools", "--http", rs.URL)
		if !strings.Contains(out, "read_note") || !strings.Contains(out, "write_note") {
			t.Errorf("tako tools: %q, want read_note and write_note", out)
		}
		if n := len(browser.URLs()); n != opened {
			t.Errorf("tako tools opened the browser")
		}
		if ev := as.since(t, ctx, mark, func(e oidcEvent) bool { return e.Event == "authorization" || e.isRefresh() }); len(ev) > 1 {
			t.Errorf("tako tools made %d authorization or refresh requests, want at most one refresh:%s", len(ev), describe(ev))
		}
	})

	step("refresh", []string{"login"}, func(t *testing.T) {
		waitExpired(t, ctx, load(t))
		mark := as.Mark(t, ctx)
		out, _ := tako(t, 30*time.Second, 0, "call", "read_note", "{}", "--http", rs.URL)
		if !strings.Contains(out, "hello from the strict server") {
			t.Errorf("tako call read_note: %q", out)
		}
		ev := as.since(t, ctx, mark, oidcEvent.isRefresh)
		if len(ev) != 1 || ev[0].Status != http.StatusOK {
			t.Errorf("%d refresh requests for one call after the expiry, want exactly one that succeeds:%s", len(ev), describe(ev))
		}
	})

	step("step-up", []string{"login"}, func(t *testing.T) {
		mark := as.Mark(t, ctx)
		refused := len(rs.Refused())
		_, errOut := tako(t, 30*time.Second, -1, "call", "write_note", `{"text":"from tako"}`, "--http", rs.URL)
		var forbidden bool
		for _, r := range rs.Refused()[refused:] {
			forbidden = forbidden || r.Status == http.StatusForbidden && r.Tool == "write_note"
		}
		if !forbidden {
			t.Errorf("the resource server did not refuse write_note with 403: %v", rs.Refused()[refused:])
		}
		if !strings.Contains(errOut, scopeWrite) || !strings.Contains(errOut, "tako login") {
			t.Errorf("tako call write_note without mcp:write said %q, want the scope it needs (%s) and the command that gets it", errOut, scopeWrite)
		}

		login(t, "--scope", scopeRead+" "+scopeWrite, rs.URL)
		rec := load(t)
		if sc := jwtClaims(t, rec.Token.AccessToken.Reveal()).Scope; !slices.Contains(strings.Fields(sc), scopeWrite) {
			t.Errorf("after login --scope the stored token has scope %q, want %s", sc, scopeWrite)
		}
		out, _ := tako(t, 30*time.Second, 0, "call", "write_note", `{"text":"from tako"}`, "--http", rs.URL)
		if !strings.Contains(out, "written: from tako") {
			t.Errorf("tako call write_note after the step-up: %q", out)
		}
		// RFC 8252 §7.3: a loopback redirect may use any port, so the
		// second login reuses the registration (issue 19, item 7).
		if regs := as.since(t, ctx, mark, func(e oidcEvent) bool { return e.Route == "registration" }); len(regs) != 0 {
			t.Errorf("the step-up login registered again:%s", describe(regs))
		}
	})

	step("two processes", []string{"login"}, func(t *testing.T) {
		waitExpired(t, ctx, load(t))
		mark := as.Mark(t, ctx)
		cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		type result struct {
			out, errOut string
			code        int
		}
		results := make(chan result, 2)
		for range 2 {
			go func() {
				cmd := exec.CommandContext(cctx, takoCLI(t), "call", "read_note", "{}", "--http", rs.URL)
				cmd.Env = append(os.Environ(), env...)
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				err := cmd.Run()
				code := 0
				var ee *exec.ExitError
				switch {
				case errors.As(err, &ee):
					code = ee.ExitCode()
				case err != nil:
					code = -1
					errb.WriteString(err.Error())
				}
				results <- result{out.String(), errb.String(), code}
			}()
		}
		for range 2 {
			r := <-results
			if r.code != 0 || !strings.Contains(r.out, "hello from the strict server") {
				t.Errorf("one of two tako calls at once: exit %d\nstdout: %s\nstderr: %s", r.code, r.out, r.errOut)
			}
		}
		ev := as.since(t, ctx, mark, func(e oidcEvent) bool {
			return e.isRefresh() || e.isReuse() || e.Event == "grant_revoked"
		})
		refreshes := 0
		for _, e := range ev {
			if e.isRefresh() {
				refreshes++
			}
			if e.isReuse() || e.Event == "grant_revoked" || e.isRefresh() && e.Status != http.StatusOK {
				t.Errorf("two processes refreshing at once: a refresh token used twice, or the grant revoked:%s", describe(ev))
				break
			}
		}
		t.Logf("two processes at once made %d refresh requests", refreshes)

		waitExpired(t, ctx, load(t))
		mark = as.Mark(t, ctx)
		out, _ := tako(t, 30*time.Second, 0, "call", "read_note", "{}", "--http", rs.URL)
		if !strings.Contains(out, "hello from the strict server") {
			t.Errorf("the third call: %q", out)
		}
		if ev := as.since(t, ctx, mark, oidcEvent.isRefresh); len(ev) != 1 || ev[0].Status != http.StatusOK {
			t.Errorf("the third call after the expiry: want one refresh that succeeds:%s", describe(ev))
		}
	})

	step("logout", []string{"login"}, func(t *testing.T) {
		rec := load(t)
		old := rec.Token.RefreshToken.Reveal()
		mark := as.Mark(t, ctx)
		tako(t, 30*time.Second, 0, "logout", rs.URL)
		ev := as.since(t, ctx, mark, func(e oidcEvent) bool {
			return e.Route == "revocation" || e.Event == "grant_revoked"
		})
		var revoked, grantRevoked bool
		for _, e := range ev {
			revoked = revoked || e.Route == "revocation" && e.Status == http.StatusOK
			grantRevoked = grantRevoked || e.Event == "grant_revoked"
		}
		if !revoked || !grantRevoked {
			t.Errorf("tako logout: the server saw no revocation of the refresh token:%s", describe(ev))
		}
		if old != "" {
			md := as.metadata(t, ctx, "/.well-known/oauth-authorization-server")
			form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {old}, "client_id": {rec.Client.ClientID}, "resource": {rs.URL}}
			if s := rec.Client.ClientSecret.Reveal(); s != "" {
				form.Set("client_secret", s)
			}
			if status, out := as.post(t, ctx, md["token_endpoint"].(string), form); status != http.StatusBadRequest || out["error"] != "invalid_grant" {
				t.Errorf("the refresh token after logout: %d %v, want 400 invalid_grant", status, out)
			}
		}
		if rec, err := store.Load(ctx, resource, ""); !errors.Is(err, auth.ErrNotStored) {
			t.Errorf("after logout the store still holds %v (%v)", rec, err)
		} else {
			forgotten = true
		}
	})

	step("after logout", nil, func(t *testing.T) {
		if !forgotten {
			t.Skip("needs the logout step to have forgotten the tokens")
		}
		opened := len(browser.URLs())
		_, errOut := tako(t, 30*time.Second, -1, "tools", "--http", rs.URL)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if len(lines) != 1 || !strings.Contains(lines[0], "tako login "+rs.URL) {
			t.Errorf("tako tools after logout said %q, want one line naming `tako login %s`", errOut, rs.URL)
		}
		if len(browser.URLs()) != opened {
			t.Errorf("tako tools after logout opened the browser")
		}
	})
	t.Logf("the person's session took %s", time.Since(start).Round(time.Second))
}

// seedStore stands in for tako's login when that fails: the harness's
// own client registers and logs in (the person reading each page for a
// second), and the tokens go into tako's store as tako would keep them.
func seedStore(t *testing.T, ctx context.Context, as *strictOIDC, rs *mcpResource, p *person, store *auth.FileStore, resource string) {
	t.Helper()
	md := as.metadata(t, ctx, "/.well-known/oauth-authorization-server")
	cb := startCallback(t)
	c := registerNative(t, ctx, as, cb.URL, "offline_access mcp:read mcp:write")
	dwell := p.dwell
	p.dwell = time.Second
	tok := harnessLogin(t, ctx, as, rs, p, md, c, cb, "offline_access mcp:read", "consent", nil)
	p.dwell = dwell
	rt, _ := tok["refresh_token"].(string)
	exp := time.Unix(jwtClaims(t, tok["access_token"].(string)).Expiry, 0)
	rec := &auth.Record{
		Resource: resource,
		Issuer:   as.Issuer,
		Client:   auth.ClientInfo{ClientID: c.ID, AuthMethod: "none", RedirectURIs: []string{c.Redirect}, Registered: true},
		Token: &auth.Token{
			AccessToken: auth.Secret(tok["access_token"].(string)), TokenType: "Bearer", RefreshToken: auth.Secret(rt),
			Expiry: exp, Scope: scopeRead,
		},
		Indicator: rs.URL,
		Grant:     "authorization_code",
	}
	if err := store.Save(ctx, rec); err != nil {
		t.Fatalf("seeding the token store: %v", err)
	}
}

// all matches every event.
func all(oidcEvent) bool { return true }

func wantCode(want int) string {
	if want < 0 {
		return "non-zero"
	}
	return strconv.Itoa(want)
}

// waitExpired waits until the stored access token has expired by its own
// exp claim (the resource server allows no leeway), at most 30 s: the
// strict server's tokens live 20.
func waitExpired(t *testing.T, ctx context.Context, rec *auth.Record) {
	t.Helper()
	exp := time.Unix(jwtClaims(t, rec.Token.AccessToken.Reveal()).Expiry, 0)
	d := time.Until(exp) + 500*time.Millisecond
	if d > 30*time.Second {
		t.Fatalf("the access token expires in %s, not within 30 s", d)
	}
	if d <= 0 {
		return
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
		t.Fatalf("waiting for the access token to expire: %v", context.Cause(ctx))
	}
}
