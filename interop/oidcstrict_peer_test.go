package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The strict authorization server: panva's oidc-provider (pinned in the
// root package.json), run by oidc/server.mjs with real login and consent
// pages, refresh-token rotation with reuse detection, resource-bound JWT
// access tokens that live 20 s, revocation and DPoP. server.mjs says what
// it demands of a client. The tests read its events (one JSON line each on
// stdout) to count what tako asked of it.

// The strict server's one account.
const (
	strictUser     = "alice"
	strictPassword = "correct horse battery staple"
)

// strictOIDC is a running oidc/server.mjs.
type strictOIDC struct {
	Issuer   string
	Resource string // the MCP resource it issues tokens for

	stdin  io.WriteCloser
	stderr *tailBuffer
	marks  atomic.Int64

	mu      sync.Mutex
	events  []oidcEvent
	changed chan struct{} // closed, and replaced, on every event
	ended   bool          // stdout reached end of file
}

// oidcEvent is one line of server.mjs's stdout.
type oidcEvent struct {
	Event string `json:"event"`
	T     int64  `json:"t"` // milliseconds since the epoch

	// "request": a request to the token, revocation or registration
	// endpoint, as answered.
	Route              string `json:"route"`
	Status             int    `json:"status"`
	GrantType          string `json:"grant_type"`
	TokenTypeHint      string `json:"token_type_hint"`
	Scope              string `json:"scope"`
	Resource           string `json:"resource"`
	ClientID           string `json:"client_id"`
	DPoP               bool   `json:"dpop"`
	Error              string `json:"error"`
	ErrorDescription   string `json:"error_description"`
	GrantedScope       string `json:"granted_scope"`
	RefreshTokenIssued bool   `json:"refresh_token_issued"`
	Registered         *struct {
		ApplicationType         string   `json:"application_type"`
		RedirectURIs            []string `json:"redirect_uris"`
		GrantTypes              []string `json:"grant_types"`
		Scope                   string   `json:"scope"`
		TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	} `json:"registered"`

	// "authorization": a successful authorization request.
	Prompt      string `json:"prompt"`
	RedirectURI string `json:"redirect_uri"`

	// "token_error": why a token request failed, beyond its error code.
	Detail string `json:"detail"`

	Grant string `json:"grant"` // grant_revoked, refresh_token_consumed, consent
	User  string `json:"user"`  // login, login_failed
	ID    string `json:"id"`    // mark
	// Issuer is the ready event's.
	Issuer string `json:"issuer"`
}

// String is the event in a line, for failure messages.
func (e oidcEvent) String() string {
	var b strings.Builder
	b.WriteString(e.Event)
	add := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, " %s=%q", k, v)
		}
	}
	add("route", e.Route)
	if e.Status != 0 {
		add("status", strconv.Itoa(e.Status))
	}
	add("grant_type", e.GrantType)
	add("scope", e.Scope)
	add("prompt", e.Prompt)
	add("resource", e.Resource)
	add("client_id", e.ClientID)
	add("error", e.Error)
	add("error_description", e.ErrorDescription)
	add("detail", e.Detail)
	add("granted_scope", e.GrantedScope)
	if e.RefreshTokenIssued {
		b.WriteString(" refresh_token_issued")
	}
	if e.Registered != nil {
		add("application_type", e.Registered.ApplicationType)
		add("registered_scope", e.Registered.Scope)
		add("redirect_uris", strings.Join(e.Registered.RedirectURIs, " "))
	}
	add("grant", e.Grant)
	return b.String()
}

// isReuse: the server saw a refresh token used a second time (and so
// revoked the grant).
func (e oidcEvent) isReuse() bool {
	return e.Event == "token_error" && e.Detail == "refresh token already used"
}

// isRefresh: a refresh token request (any outcome).
func (e oidcEvent) isRefresh() bool {
	return e.Event == "request" && e.Route == "token" && e.GrantType == "refresh_token"
}

// startStrictOIDC starts oidc/server.mjs for the MCP resource at resource
// and waits until it listens. It ends when the test does.
func startStrictOIDC(t *testing.T, ctx context.Context, resource string) *strictOIDC {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		requireInstalled(t, "node is not on PATH: install Node.js 20 or later, then run `npm ci` in the repository root")
	}
	if _, err := os.Stat(filepath.Join("..", "node_modules", "oidc-provider", "package.json")); err != nil {
		requireInstalled(t, "oidc-provider is not installed: run `npm ci` in the repository root (it installs the version pinned in package-lock.json)")
	}
	cmd := exec.Command(node, filepath.Join("oidc", "server.mjs"), "--resource", resource, "--user", strictUser, "--password", strictPassword)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &strictOIDC{Resource: resource, stderr: &tailBuffer{max: 64 << 10}, changed: make(chan struct{})}
	cmd.Stderr = p.stderr
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd, err)
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		p.read(stdout)
	}()
	// The server exits when its stdin closes; SIGKILL to its group if it
	// has not within 5 s.
	t.Cleanup(func() {
		p.stdin.Close()
		select {
		case <-read:
		case <-time.After(5 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-read
		}
		cmd.Wait()
		if t.Failed() {
			t.Logf("oidc/server.mjs stderr:\n%s", p.stderr)
		}
	})
	ready, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ev, err := p.waitFor(ready, func(e oidcEvent) bool { return e.Event == "ready" })
	if err != nil {
		t.Fatalf("oidc/server.mjs did not start: %v\n%s", err, p.stderr)
	}
	p.Issuer = ev.Issuer
	return p
}

func (p *strictOIDC) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var e oidcEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			fmt.Fprintf(p.stderr, "stdout: not an event: %s\n", sc.Bytes())
			continue
		}
		p.mu.Lock()
		p.events = append(p.events, e)
		close(p.changed)
		p.changed = make(chan struct{})
		p.mu.Unlock()
	}
	p.mu.Lock()
	p.ended = true
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
}

// waitFor returns the first event since the start for which match is
// true, waiting for it until ctx ends.
func (p *strictOIDC) waitFor(ctx context.Context, match func(oidcEvent) bool) (oidcEvent, error) {
	for {
		p.mu.Lock()
		for _, e := range p.events {
			if match(e) {
				p.mu.Unlock()
				return e, nil
			}
		}
		ch, ended := p.changed, p.ended
		p.mu.Unlock()
		if ended {
			return oidcEvent{}, fmt.Errorf("the server exited")
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return oidcEvent{}, context.Cause(ctx)
		}
	}
}

// Sync returns once every event the server wrote before now has been read:
// it asks the server for a mark and waits for it.
func (p *strictOIDC) Sync(t *testing.T, ctx context.Context) {
	t.Helper()
	id := strconv.FormatInt(p.marks.Add(1), 10)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.Issuer+"/.tako/mark?id="+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("mark: %v", err)
	}
	resp.Body.Close()
	if _, err := p.waitFor(ctx, func(e oidcEvent) bool { return e.Event == "mark" && e.ID == id }); err != nil {
		t.Fatalf("mark %s: %v", id, err)
	}
}

// Events returns the events read so far, from the n-th on.
func (p *strictOIDC) Events(from int) []oidcEvent {
	p.mu.Lock()
	defer p.mu.Unlock()
	if from > len(p.events) {
		from = len(p.events)
	}
	return append([]oidcEvent(nil), p.events[from:]...)
}

// Mark syncs and returns the number of events so far, for Events(mark)
// after a step.
func (p *strictOIDC) Mark(t *testing.T, ctx context.Context) int {
	t.Helper()
	p.Sync(t, ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.events)
}

// since syncs and returns the events after mark that match.
func (p *strictOIDC) since(t *testing.T, ctx context.Context, mark int, match func(oidcEvent) bool) []oidcEvent {
	t.Helper()
	p.Sync(t, ctx)
	var out []oidcEvent
	for _, e := range p.Events(mark) {
		if match(e) {
			out = append(out, e)
		}
	}
	return out
}

// describe lists events for a failure message: a run of one event is
// written once with its count, and the marks, the ready event and the
// refresh_token_consumed that follows each rotation are left out.
func describe(events []oidcEvent) string {
	var lines []string
	var runs []int
	for _, e := range events {
		if e.Event == "mark" || e.Event == "ready" || e.Event == "refresh_token_consumed" {
			continue
		}
		s := e.String()
		if n := len(lines); n > 0 && lines[n-1] == s {
			runs[n-1]++
			continue
		}
		lines, runs = append(lines, s), append(runs, 1)
	}
	if len(lines) == 0 {
		return " (none)"
	}
	var b strings.Builder
	for i, l := range lines {
		b.WriteString("\n\t")
		b.WriteString(l)
		if runs[i] > 1 {
			fmt.Fprintf(&b, " (%d times)", runs[i])
		}
	}
	return b.String()
}

// metadata fetches the server's authorization server metadata.
func (p *strictOIDC) metadata(t *testing.T, ctx context.Context, wellKnown string) map[string]any {
	t.Helper()
	var md map[string]any
	status := getJSON(t, ctx, p.Issuer+wellKnown, &md)
	if status != http.StatusOK {
		t.Fatalf("GET %s: status %d", wellKnown, status)
	}
	return md
}

// post posts form to an endpoint of the server (with the header pairs
// hdr) and returns the status and the decoded JSON answer.
func (p *strictOIDC) post(t *testing.T, ctx context.Context, endpoint string, form url.Values, hdr ...string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", endpoint, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Fatalf("POST %s: %v", endpoint, err)
	}
	var out map[string]any
	if len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatalf("POST %s: status %d, not JSON: %q", endpoint, resp.StatusCode, body)
		}
	}
	return resp.StatusCode, out
}

// getJSON GETs u into v and returns the status.
func getJSON(t *testing.T, ctx context.Context, u string, v any) int {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v); err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
	}
	return resp.StatusCode
}

// tailBuffer keeps the last max bytes written to it: a child's stderr,
// bounded, for failure messages.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b = append(b.b, p...)
	if over := len(b.b) - b.max; over > 0 {
		b.b = append(b.b[:0], b.b[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.b)
}
