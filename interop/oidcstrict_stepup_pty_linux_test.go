package interop

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tako-mcp/tako/auth"
)

// TestOIDCStrictStepUpAtTerminal: a person at a terminal, logged in with
// mcp:read only, calls a tool that needs mcp:write. The server refuses it
// (403 insufficient_scope); tako opens the browser for the step-up itself,
// the person reads the consent page for 10 s and allows it, and the call
// goes through, all in one `tako call`. Before the fix the CLI had no user
// step for a step-up: "no user step configured", and no browser opened.
func TestOIDCStrictStepUpAtTerminal(t *testing.T) {
	t.Parallel()
	ctx := strictTestContext(t, 3*time.Minute)
	as, rs := startStrict(t, ctx)
	p := newPerson(t, strictUser, strictPassword, personDwell)
	browser := newBrowserHandoff(t)
	dir := t.TempDir()
	store := &auth.FileStore{Dir: dir}
	resource := rs.URL
	if ac, err := auth.New(rs.URL, &auth.Config{Store: store}); err == nil {
		resource = ac.Resource()
	}
	seedStore(t, ctx, as, rs, p, store, resource) // logged in, mcp:read

	cmd := exec.Command(takoCLI(t), "call", "write_note", `{"text":"from the terminal"}`, "--http", rs.URL)
	cmd.Env = append(os.Environ(), "TERM=xterm", "TAKO_AUTH_DIR="+dir, "BROWSER="+browser.Script)
	screen, _, exited, waitErr := onPTY(t, cmd)
	// tako opens the browser, unless it exits first.
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	go func() {
		select {
		case <-exited:
			cancel()
		case <-wctx.Done():
		}
	}()
	authURL, err := browser.Wait(wctx, 1)
	if err != nil {
		t.Fatalf("tako call at a terminal did not open the browser for the step-up: %v", err)
	}
	if q, err := url.Parse(authURL); err != nil || !strings.Contains(q.Query().Get("scope"), scopeWrite) {
		t.Errorf("the step-up asks for scope %q, want it to include %s", q.Query().Get("scope"), scopeWrite)
	}
	pg, err := p.authorize(ctx, authURL, func(u *url.URL) bool { return u.Hostname() == "127.0.0.1" && u.Path == "/callback" })
	if err != nil {
		t.Fatalf("the person at the browser: %v", err)
	}
	if !strings.Contains(pg.Text, "You are logged in") {
		t.Errorf("tako's callback page says %q", pg.Text)
	}
	screen.expect(t, "written: from the terminal")
	waitExited(t, "tako call", exited, waitErr)
}
