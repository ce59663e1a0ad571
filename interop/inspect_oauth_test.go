package interop

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tako-mcp/tako/auth"
)

// TestInspectOAuthLogin: a person logs in to an OAuth-protected server from
// the inspector's page. The strict authorization server (oidc/server.mjs)
// fronts the MCP server; `tako inspect --http URL` with no stored login
// meets its 401, and the page offers the authorization page; the person
// signs in and consents in another tab of the same browser; the server
// then connects and its tools list. The OAuth page shows each step: the
// challenge, the resource's and the authorization server's metadata, the
// registration, the authorization request, the token response with the
// access token's claims; once the access token expired, the refresh the
// page's next request makes, with the new token's claims; and neither the
// page nor the exported session holds the access or the refresh token
// (read from the token store the login filled).
func TestInspectOAuthLogin(t *testing.T) {
	ctx := strictTestContext(t, 3*time.Minute)
	as, rs := startStrict(t, ctx)
	person := newPerson(t, strictUser, strictPassword, 2*time.Second)
	dir := t.TempDir()
	in := startInspector(t, ctx, []string{"TAKO_AUTH_DIR=" + dir}, "--http", rs.URL)
	p := openPage(t, person.tab, in.URL)
	name := serverNames(t, in, ctx)["http"]
	pn := panel(name)

	p.waitFor("the login link", fmt.Sprintf(`!!document.querySelector(%q)`, pn+` a.loginlink`))
	p.screenshot("login wanted")
	authURL := eval[string](p, fmt.Sprintf(`document.querySelector(%q).href`, pn+` a.loginlink`))
	if _, err := person.authorize(ctx, authURL, func(u *url.URL) bool { return u.Hostname() == "127.0.0.1" && u.Path == "/callback" }); err != nil {
		t.Fatalf("the person's login: %v\nserver events:%s", err, describe(as.Events(0)))
	}
	p.waitConnected("the server to connect after the login", name)
	p.openTab(name, "tools")
	p.waitFor("the protected tools", fmt.Sprintf(`!!document.querySelector(%q)`, pn+` [data-tool="read_note"]`))

	p.openTab(name, "auth")
	for _, kind := range []string{"challenge", "resource-metadata", "server-metadata", "registration", "authorization", "token"} {
		p.waitFor("the "+kind+" step", fmt.Sprintf(`!!document.querySelector(%q)`, pn+fmt.Sprintf(` li.step[data-kind=%q]`, kind)))
	}
	// Open every step, as a person looking at them would.
	eval[bool](p, fmt.Sprintf(`(document.querySelectorAll(%q).forEach((d) => d.open = true), true)`, pn+` li.step details`))
	p.waitFor("the token's claims", fmt.Sprintf(`(document.querySelector(%q) || {}).innerText?.includes('JWT claims')`, pn+` li.step[data-kind="token"]`))
	claims := p.text(pn + ` li.step[data-kind="token"]`)
	if !strings.Contains(claims, `"sub"`) || !strings.Contains(claims, scopeRead) {
		t.Errorf("the token step shows no claims with sub and %s:\n%s", scopeRead, claims)
	}
	p.screenshot("oauth steps")

	store := &auth.FileStore{Dir: dir}
	ac, _ := auth.New(rs.URL, &auth.Config{Store: store})
	rec, err := store.Load(ctx, ac.Resource(), "")
	if err != nil || rec.Token == nil {
		t.Fatalf("the login stored no token: %v", err)
	}
	// Once the access token has expired, the next request of the page
	// refreshes it: a refresh step, with the new token's claims.
	if rec.Token.RefreshToken.Reveal() == "" {
		t.Fatal("the login stored no refresh token: no refresh to show")
	}
	waitExpired(t, ctx, rec)
	p.openTab(name, "tools")
	p.click(pn + ` .side .bar button`)
	p.openTab(name, "auth")
	p.waitFor("the refresh step", fmt.Sprintf(`!!document.querySelector(%q)`, pn+` li.step[data-kind="refresh"]`))
	eval[bool](p, fmt.Sprintf(`(document.querySelectorAll(%q).forEach((d) => d.open = true), true)`, pn+` li.step details`))
	refresh := p.text(pn + ` li.step[data-kind="refresh"]`)
	if !strings.Contains(refresh, "Refresh") || !strings.Contains(refresh, "JWT claims") || !strings.Contains(refresh, `"sub"`) || !strings.Contains(refresh, "refresh_token") {
		t.Errorf("the refresh step shows no grant or no claims of the new token:\n%s", refresh)
	}
	p.screenshot("oauth refresh")
	rec, err = store.Load(ctx, ac.Resource(), "")
	if err != nil {
		t.Fatal(err)
	}

	html := eval[string](p, `document.documentElement.outerHTML`)
	var export json.RawMessage
	in.api(t, ctx, "GET", "/api/export", nil, &export)
	for what, secret := range map[string]string{"the access token": rec.Token.AccessToken.Reveal(), "the refresh token": rec.Token.RefreshToken.Reveal()} {
		if secret == "" {
			continue
		}
		if strings.Contains(html, secret) {
			t.Errorf("the page holds %s", what)
		}
		if strings.Contains(string(export), secret) {
			t.Errorf("the exported session holds %s", what)
		}
	}
}
