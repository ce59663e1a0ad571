package auth

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/streamablehttp"
	"github.com/tako-mcp/tako/transport"
)

// connectTo connects to the MCP endpoint at u through ac, with the
// engine's default options.
func connectTo(ctx context.Context, ac *Client, u string) (*transport.Session, error) {
	conn, err := streamablehttp.Dial(ctx, u, &streamablehttp.Options{Auth: ac})
	if err != nil {
		return nil, err
	}
	return transport.Connect(ctx, conn, nil)
}

func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// TestLoginOutlivesTheProbeTimeout: a person who takes four seconds at the
// browser logs in through transport.Connect with the default options,
// although the server/discover probe gives up after three: the login has
// its own clock, the probe waits for it and is sent again, and the server
// is taken for the 2026-07-28 server it is (not, after a lost probe, for a
// legacy one). The callback page says the login worked. Before the fix the
// login ran under the probe's context: "context deadline exceeded", and the
// browser found the callback listener closed.
func TestLoginOutlivesTheProbeTimeout(t *testing.T) {
	a := newStrictAS(t, time.Hour)
	p := newPerson(t, 4*time.Second)
	ac, err := New(a.srv.URL+"/mcp", &Config{User: p})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t, 60*time.Second)
	s, err := connectTo(ctx, ac, a.srv.URL+"/mcp")
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer s.Close()
	if v := s.ServerInfo().ProtocolVersion; v != mcp.Version20260728 {
		t.Errorf("negotiated %q, want %q", v, mcp.Version20260728)
	}
	tools, err := s.ListTools(ctx)
	if err != nil || len(tools) != 1 {
		t.Fatalf("ListTools: %v, %v", tools, err)
	}
	if n := a.count(func() int { return a.authorizes }); n != 1 || p.starts != 1 {
		t.Errorf("%d authorization requests and %d user steps, want 1 each", n, p.starts)
	}
	p.wg.Wait()
	if page := p.lastPage(); !strings.Contains(page, "You are logged in") {
		t.Errorf("the callback page says %q", page)
	}
}

// TestLoginEndsWhenTheCallerGivesUp: a request whose context is
// cancelled (Ctrl-C) while it waits for the login ends the login too: the
// listener closes, and the error is the cancellation.
func TestLoginEndsWhenTheCallerGivesUp(t *testing.T) {
	a := newStrictAS(t, time.Hour)
	p := newPerson(t, time.Hour) // never comes back
	ac, _ := New(a.srv.URL+"/mcp", &Config{User: p})
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("interrupted")
	go func() {
		// Cancel once the login is under way: the user step started.
		for {
			p.mu.Lock()
			n := p.starts
			p.mu.Unlock()
			if n > 0 {
				cancel(stop)
				return
			}
			select {
			case <-time.After(10 * time.Millisecond):
			case <-ctx.Done():
				return
			}
		}
	}()
	deadline := testCtx(t, 20*time.Second)
	err := ac.Login(ctx)
	if !errors.Is(err, stop) {
		t.Fatalf("Login: %v, want the cancellation", err)
	}
	// The attempt ends, and a new Login starts a new one.
	for {
		ac.mu.Lock()
		pending := ac.pending
		ac.mu.Unlock()
		if pending == nil {
			break
		}
		select {
		case <-pending.done:
		case <-deadline.Done():
			t.Fatal("the login did not end after its caller gave up")
		}
	}
}

// TestRefreshMarginScalesWithLifetime: a token that lives two seconds is
// not refreshed on every request (RefreshBefore, 30 s, is longer than its
// life), but once, as it nears its end. Before the fix twenty requests made
// twenty refreshes.
func TestRefreshMarginScalesWithLifetime(t *testing.T) {
	a := newStrictAS(t, 2*time.Second)
	ac, _ := New(a.srv.URL+"/mcp", &Config{User: newPerson(t, 0)})
	ctx := testCtx(t, 30*time.Second)
	if err := ac.Login(ctx); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if tok, err := ac.Token(ctx); err != nil || tok == nil {
			t.Fatalf("Token: %v %v", tok, err)
		}
	}
	if n := a.count(func() int { return a.refreshes }); n != 0 {
		t.Errorf("%d refreshes of a fresh two-second token, want 0", n)
	}
	tok, _ := ac.Token(ctx)
	<-time.After(time.Until(tok.Expiry) - 400*time.Millisecond) // inside the margin, a quarter of the life
	for range 20 {
		if _, err := ac.Token(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := a.count(func() int { return a.refreshes }); n != 1 {
		t.Errorf("%d refreshes near the token's end, want 1", n)
	}
}

// TestOfflineAccessAsksForConsent: from a server that follows OpenID
// Connect, a refresh token takes offline_access, which it grants only with
// prompt=consent (Core §11), and only within the scope the client
// registered. Before the fix the registration had the resource's scope
// only and the authorization request no prompt: no refresh token.
func TestOfflineAccessAsksForConsent(t *testing.T) {
	a := newStrictAS(t, time.Hour)
	ac, _ := New(a.srv.URL+"/mcp", &Config{User: newPerson(t, 0), Store: &MemoryStore{}})
	ctx := testCtx(t, 30*time.Second)
	if err := ac.Login(ctx); err != nil {
		t.Fatal(err)
	}
	q := a.lastAuthorize
	if q.Get("prompt") != "consent" || !slices.Contains(strings.Fields(q.Get("scope")), "offline_access") {
		t.Errorf("authorization request prompt %q scope %q, want consent and offline_access", q.Get("prompt"), q.Get("scope"))
	}
	tok, _ := ac.Token(ctx)
	if tok == nil || tok.RefreshToken == "" {
		t.Fatalf("no refresh token: %v", tok)
	}
	a.mu.Lock()
	c := a.clients[q.Get("client_id")]
	a.mu.Unlock()
	for _, s := range []string{"offline_access", "mcp:read", "mcp:write"} {
		if !slices.Contains(c.scope, s) {
			t.Errorf("registered scope %v lacks %s", c.scope, s)
		}
	}
}

// TestLoginReusesRegistration: every login of a native client registers
// nothing new: the stored registration is reused on its own port, and on
// another when that one is taken (RFC 8252 §7.3). Before the fix twelve
// logins made twelve registrations.
func TestLoginReusesRegistration(t *testing.T) {
	a := newStrictAS(t, time.Hour)
	store := &FileStore{Dir: t.TempDir()}
	ctx := testCtx(t, 30*time.Second)
	login := func() string {
		t.Helper()
		ac, _ := New(a.srv.URL+"/mcp", &Config{User: newPerson(t, 0), Store: store})
		if err := ac.Login(ctx); err != nil {
			t.Fatal(err)
		}
		return a.lastAuthorize.Get("redirect_uri")
	}
	first := login()
	if again := login(); again != first {
		t.Errorf("second login redirects to %s, want the registered %s", again, first)
	}
	// The registered port is taken now: another port, the same client.
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(strings.TrimSuffix(first, "/callback"), "http://"))
	ln, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if third := login(); third == first {
		t.Errorf("third login used the taken port %s", port)
	}
	if n := a.count(func() int { return a.registrations }); n != 1 {
		t.Errorf("%d registrations for three logins, want 1", n)
	}
}

// TestLoginWithWiderScope: Login with Config.Scopes gets a token with the
// wider scope although a narrower one is stored (tako login --scope); and
// a 403 insufficient_scope with a person at hand steps up, without one it
// says which scope a login needs. Before the fix a stored token was used
// as it was, and "logged in" kept the narrow scope.
func TestLoginWithWiderScope(t *testing.T) {
	a := newStrictAS(t, time.Hour)
	store := &MemoryStore{}
	ctx := testCtx(t, 60*time.Second)
	u := a.srv.URL + "/mcp"
	narrow, _ := New(u, &Config{User: newPerson(t, 0), Store: store, Scopes: []string{"mcp:read"}})
	if err := narrow.Login(ctx); err != nil {
		t.Fatal(err)
	}
	// Without a user step, the step-up names the scope to log in with.
	noUser, _ := New(u, &Config{Store: store})
	s, err := connectTo(ctx, noUser, u)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.CallTool(ctx, &mcp.CallToolParams{Name: "write"})
	s.Close()
	var lne *LoginNeededError
	if !errors.As(err, &lne) || !lne.StepUp || !slices.Contains(lne.Scopes, "mcp:write") || !errors.Is(err, ErrNoUserStep) {
		t.Fatalf("step-up without a user step: %v, want a *LoginNeededError for mcp:write", err)
	}
	// With one, the call steps up and goes through.
	p := newPerson(t, 0)
	withUser, _ := New(u, &Config{User: p, Store: store})
	s, err = connectTo(ctx, withUser, u)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "write"})
	s.Close()
	if err != nil || res.IsError {
		t.Fatalf("step-up: %v %v", res, err)
	}
	// Login with a wider scope than stored replaces the token.
	wide, _ := New(u, &Config{User: newPerson(t, 0), Store: store, Scopes: []string{"mcp:read", "mcp:write"}})
	if err := narrow.Logout(ctx); err != nil {
		t.Fatal(err)
	}
	if err := narrow.Login(ctx); err != nil {
		t.Fatal(err)
	}
	if err := wide.Login(ctx); err != nil {
		t.Fatal(err)
	}
	tok, _ := wide.Token(ctx)
	if tok == nil || !slices.Contains(strings.Fields(tok.Scope), "mcp:write") {
		t.Errorf("after Login with the wider scope the token has scope %q", tok.Scope)
	}
}

// TestLogoutRevokes: Logout revokes the refresh token, then the access
// token, at the server's revocation endpoint (RFC 7009), and forgets
// them; when the server cannot be reached it says so (ErrNotRevoked) and
// forgets them all the same. Before the fix nothing was revoked.
func TestLogoutRevokes(t *testing.T) {
	a := newStrictAS(t, time.Hour)
	store := &FileStore{Dir: t.TempDir()}
	ctx := testCtx(t, 30*time.Second)
	ac, _ := New(a.srv.URL+"/mcp", &Config{User: newPerson(t, 0), Store: store})
	if err := ac.Login(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ac.Logout(ctx); err != nil {
		t.Fatalf("Logout: %v", err)
	}
	a.mu.Lock()
	revs, live := slices.Clone(a.revocations), len(a.refresh)
	a.mu.Unlock()
	if !slices.Equal(revs, []string{"refresh_token", "access_token"}) || live != 0 {
		t.Errorf("revocations %v, %d live refresh tokens; want refresh_token then access_token, and none", revs, live)
	}
	if _, err := store.Load(ctx, ac.Resource(), ""); !errors.Is(err, ErrNotStored) {
		t.Errorf("after Logout the store holds %v", err)
	}

	// Unreachable: forgotten all the same, and said.
	ac, _ = New(a.srv.URL+"/mcp", &Config{User: newPerson(t, 0), Store: store})
	if err := ac.Login(ctx); err != nil {
		t.Fatal(err)
	}
	gone, _ := New(a.srv.URL+"/mcp", &Config{Store: store}) // a new run: metadata not yet fetched
	a.srv.CloseClientConnections()
	a.srv.Listener.Close()
	if err := gone.Logout(ctx); !errors.Is(err, ErrNotRevoked) {
		t.Errorf("Logout with the server gone: %v, want ErrNotRevoked", err)
	}
	if _, err := store.Load(ctx, gone.Resource(), ""); !errors.Is(err, ErrNotStored) {
		t.Errorf("after a Logout that could not revoke, the store holds %v", err)
	}
}

// TestDPoPKeyKeptWithToken: a DPoP-bound token is stored with its key
// (same file, same mode), so the next run presents it with the same key
// and needs no new login. Before the fix every run made a new key, and its
// stored token was useless.
func TestDPoPKeyKeptWithToken(t *testing.T) {
	a := newStrictAS(t, time.Hour)
	store := &FileStore{Dir: t.TempDir()}
	ctx := testCtx(t, 30*time.Second)
	u := a.srv.URL + "/mcp"
	first, _ := New(u, &Config{User: newPerson(t, 0), Store: store, DPoP: true})
	if err := first.Login(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Client{first, mustNew(t, u, &Config{Store: store})} {
		s, err := connectTo(ctx, c, u)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	a.mu.Lock()
	keys, authorizes := slices.Compact(slices.Clone(a.dpopKeys)), a.authorizes
	a.mu.Unlock()
	if len(keys) != 1 || keys[0] == "" || authorizes != 1 {
		t.Errorf("DPoP keys %v and %d logins over two runs, want one key and one login", keys, authorizes)
	}
	// A header for any request cannot carry a proof of one: refused,
	// not sent as a Bearer token the server would refuse anyway.
	if h, err := first.Header(ctx); !errors.Is(err, errDPoPHeader) || h.Get("Authorization") != "" {
		t.Errorf("Header of a DPoP-bound token: %v %v, want errDPoPHeader and no Authorization", h, err)
	}
	rec, _ := store.Load(ctx, first.Resource(), "")
	if rec.DPoPKey == "" {
		t.Error("the stored record has no DPoP key")
	}
	if printed := fmt.Sprintf("%v %+v %#v %s", rec, *rec, *rec, rec); strings.Contains(printed, rec.DPoPKey.Reveal()) {
		t.Errorf("the record prints its DPoP key: %s", printed)
	}
}

func mustNew(t *testing.T, u string, cfg *Config) *Client {
	t.Helper()
	c, err := New(u, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// helperEnv runs TestRefreshProcess as the helper process of
// TestTwoProcessesShareOneRefresh.
const helperEnv = "TAKO_AUTH_REFRESH_HELPER"

// TestTwoProcessesShareOneRefresh: two processes that share the token
// store both find the token expired and both refresh at once. With
// rotation the second use of a refresh token revokes the grant, so they
// must take turns: the second finds the first's new token under the
// store's lock. Before the fix both sent the same refresh token and the
// server logged the user out.
func TestTwoProcessesShareOneRefresh(t *testing.T) {
	if os.Getenv(helperEnv) != "" {
		t.Skip("the helper process")
	}
	a := newStrictAS(t, 2*time.Second)
	dir := t.TempDir()
	ctx := testCtx(t, 60*time.Second)
	u := a.srv.URL + "/mcp"
	login, _ := New(u, &Config{User: newPerson(t, 0), Store: &FileStore{Dir: dir}})
	if err := login.Login(ctx); err != nil {
		t.Fatal(err)
	}
	tok, _ := login.Token(ctx)
	<-time.After(time.Until(tok.Expiry) + 100*time.Millisecond) // the token's own end

	type helper struct {
		cmd   *exec.Cmd
		in    *os.File
		out   *bufio.Reader
		errOf func() string
	}
	var hs []helper
	for range 2 {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestRefreshProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), helperEnv+"=1", "TAKO_AUTH_TEST_DIR="+dir, "TAKO_AUTH_TEST_URL="+u)
		inR, inW, _ := os.Pipe()
		cmd.Stdin = inR
		stdout, _ := cmd.StdoutPipe()
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		inR.Close()
		hs = append(hs, helper{cmd, inW, bufio.NewReader(stdout), stderr.String})
	}
	// Both have loaded the expired token before either refreshes.
	for i, h := range hs {
		if line, err := h.out.ReadString('\n'); err != nil || line != "loaded\n" {
			t.Fatalf("helper %d: %q %v", i, line, err)
		}
	}
	for _, h := range hs {
		fmt.Fprintln(h.in, "go")
		h.in.Close()
	}
	for i, h := range hs {
		rest, _ := h.out.ReadString(0)
		if err := h.cmd.Wait(); err != nil || !strings.Contains(rest, "ok") {
			t.Errorf("helper %d: %v\n%s%s", i, err, rest, h.errOf())
		}
	}
	a.mu.Lock()
	refreshes, revoked := a.refreshes, a.revokedGrants
	a.mu.Unlock()
	if revoked != 0 || refreshes != 1 {
		t.Errorf("%d refreshes and %d grants revoked, want 1 and 0", refreshes, revoked)
	}
}

// TestRefreshProcess is the helper process of
// TestTwoProcessesShareOneRefresh: it loads the stored token, waits for
// "go", then makes a call (which refreshes) and prints "ok".
func TestRefreshProcess(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("run by TestTwoProcessesShareOneRefresh")
	}
	u := os.Getenv("TAKO_AUTH_TEST_URL")
	// The server outlives this process: its kept-alive connections are
	// closed here, not by the server.
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	ac := mustNew(t, u, &Config{Store: &FileStore{Dir: os.Getenv("TAKO_AUTH_TEST_DIR")}})
	ctx := testCtx(t, 30*time.Second)
	if ac.current(ctx) == nil {
		t.Fatal("nothing stored")
	}
	fmt.Println("loaded")
	if line, _ := bufio.NewReader(os.Stdin).ReadString('\n'); line != "go\n" {
		t.Fatalf("read %q", line)
	}
	s, err := connectTo(ctx, ac, u)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	fmt.Println("ok")
}
