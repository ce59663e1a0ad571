package main

import (
	"context"
	"errors"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tako-mcp/tako/internal/testpki"
	"github.com/tako-mcp/tako/internal/testserve"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/websocket"
)

// countedHelper returns the flags that serve the helper server, which
// records every start, and a function that counts the starts so far.
func countedHelper(t *testing.T) (args []string, starts func() int) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "starts")
	args = append(helperArgs(t, "server"), "--env", helperStartsEnv+"="+file)
	return args, func() int {
		b, err := os.ReadFile(file)
		if errors.Is(err, os.ErrNotExist) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), "\n")
	}
}

// wsHandshake dials url with tako's client, sending header as it is (Host
// included), and returns the HTTP status: 101 when the upgrade succeeded.
// A client that got in lists the tools, so that its server has surely
// started (and recorded it) by the time this returns.
func wsHandshake(t *testing.T, url string, header http.Header) (int, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := websocket.Dial(ctx, url, &websocket.Options{Header: header})
	var he *websocket.HandshakeError
	if errors.As(err, &he) {
		return he.StatusCode, err
	}
	if err != nil {
		t.Fatalf("Dial %s: %v", url, err)
	}
	s, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		t.Fatalf("Connect through %s: %v", url, err)
	}
	defer s.Close()
	if _, err := s.ListTools(ctx); err != nil {
		t.Fatalf("ListTools through %s: %v", url, err)
	}
	return http.StatusSwitchingProtocols, nil
}

func urlHost(t *testing.T, url string) (hostport, port string) {
	t.Helper()
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host, u.Port()
}

// Issue 20, point 1: the WebSocket bridge compared the Origin's host with
// the request's Host. A web page that rebinds its own name to 127.0.0.1
// sends that name in both, so the upgrade succeeded (101), a server
// process started and answered initialize: any page a user visited could
// call the server's tools. Now the attacker's name in Host is refused, as
// are a foreign and a null Origin, and no server starts for any of them.
func TestBridgeRefusesDNSRebinding(t *testing.T) {
	helper, starts := countedHelper(t)
	url := bridge(t, append([]string{"--listen-ws", "127.0.0.1:0"}, helper...)...)
	host, port := urlHost(t, url)
	for _, tc := range []struct {
		name   string
		header http.Header
	}{
		{"a rebound name", http.Header{"Host": {"evil.example:" + port}, "Origin": {"http://evil.example:" + port}}},
		{"a rebound name, without Origin", http.Header{"Host": {"evil.example:" + port}}},
		{"a page of another site", http.Header{"Origin": {"https://evil.example"}}},
		{"a sandboxed page (Origin null)", http.Header{"Origin": {"null"}}},
		{"a page on another port of this machine", http.Header{"Origin": {"http://127.0.0.1:1"}}},
	} {
		status, err := wsHandshake(t, url, tc.header)
		if status != http.StatusForbidden {
			t.Errorf("%s: HTTP %d (%v), want 403", tc.name, status, err)
		}
	}
	if n := starts(); n != 0 {
		t.Fatalf("the bridge started %d servers for refused clients", n)
	}
	// The bridge's own page, a loopback name and a program get in (and so
	// the count above would have seen a start).
	for _, header := range []http.Header{
		{"Origin": {"http://" + host}},
		{"Host": {"localhost:" + port}, "Origin": {"http://localhost:" + port}},
		{"Host": {"[::1]:" + port}},
		nil,
	} {
		if status, err := wsHandshake(t, url, header); status != http.StatusSwitchingProtocols {
			t.Errorf("headers %v: HTTP %d (%v), want the upgrade", header, status, err)
		}
	}
	if n := starts(); n != 4 {
		t.Errorf("%d servers started for 4 clients", n)
	}
}

// --allow-host and --allow-origin add names and pages the user trusts;
// the rest stay refused.
func TestBridgeAllowHostAndOrigin(t *testing.T) {
	helper, _ := countedHelper(t)
	url := bridge(t, append([]string{"--listen-ws", "127.0.0.1:0", "--allow-host", "mybox.lan", "--allow-origin", "http://localhost:5173"}, helper...)...)
	_, port := urlHost(t, url)
	for _, tc := range []struct {
		header http.Header
		want   int
	}{
		{http.Header{"Host": {"mybox.lan:" + port}, "Origin": {"http://mybox.lan:" + port}}, 101},
		{http.Header{"Origin": {"http://localhost:5173"}}, 101},
		{http.Header{"Host": {"evil.example:" + port}, "Origin": {"http://evil.example:" + port}}, 403},
		{http.Header{"Origin": {"http://localhost:5174"}}, 403},
	} {
		if status, err := wsHandshake(t, url, tc.header); status != tc.want {
			t.Errorf("headers %v: HTTP %d (%v), want %d", tc.header, status, err, tc.want)
		}
	}
}

// --token makes a random token, prints the URL with it, and refuses every
// client without it (401, exit 3 for tako itself) before a server starts;
// the client's failure does not show the token it sent. --token-env takes
// the token from the environment and does not print it.
func TestBridgeRequiresToken(t *testing.T) {
	helper, starts := countedHelper(t)
	url, _, stderr := startBridgeStderr(t, append([]string{"--listen-ws", "127.0.0.1:0", "--token"}, helper...)...)
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	token := u.Query().Get("token")
	if len(token) < 26 {
		t.Fatalf("the bridge printed %q, want a URL with a token", url)
	}
	bare := strings.TrimSuffix(url, "?"+u.RawQuery)
	r := tako(t, "tools", "--ws", bare)
	r.wantFailure(t, 3, "401")
	r = tako(t, "tools", "--ws", bare+"?token=guess")
	r.wantFailure(t, 3, "401")
	if strings.Contains(r.stderr, "guess") {
		t.Errorf("the failure shows the token that was sent: %q", r.stderr)
	}
	if n := starts(); n != 0 {
		t.Fatalf("%d servers started for clients without the token", n)
	}
	if s := stderr(); !strings.Contains(s, "refused") || strings.Contains(s, token) {
		t.Errorf("stderr %q: want the refusals, never the token", s)
	}
	if r := tako(t, "tools", "--ws", url); r.code != 0 {
		t.Errorf("tools --ws with the printed URL: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := tako(t, "tools", "--ws", bare, "--header", "Authorization: Bearer "+token); r.code != 0 {
		t.Errorf("tools --ws with the token as a bearer header: exit %d, stderr %q", r.code, r.stderr)
	}

	t.Setenv("TAKO_TEST_BRIDGE_TOKEN", "from-the-environment")
	url = bridge(t, append([]string{"--listen-ws", "127.0.0.1:0", "--token-env", "TAKO_TEST_BRIDGE_TOKEN"}, helper...)...)
	if strings.Contains(url, "from-the-environment") {
		t.Errorf("the bridge printed the token of --token-env: %q", url)
	}
	tako(t, "tools", "--ws", url).wantFailure(t, 3, "401")
	if r := tako(t, "tools", "--ws", url+"?token=from-the-environment"); r.code != 0 {
		t.Errorf("tools --ws with the token of --token-env: exit %d, stderr %q", r.code, r.stderr)
	}
}

// Issue 20, point 3: the WebSocket bridge had no cap on its clients, each
// of which starts a server process. Past --max-clients a client is refused
// with HTTP 503 and a one-line reason before anything starts, and the
// bridge says so on stderr; once a client has left, the next gets in.
func TestBridgeCapsClients(t *testing.T) {
	helper, starts := countedHelper(t)
	url, _, stderr := startBridgeStderr(t, append([]string{"--listen-ws", "127.0.0.1:0", "--max-clients", "2"}, helper...)...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var sessions []*transport.Session
	for range 2 {
		s := wsSession(ctx, t, url, nil)
		defer s.Close()
		sessions = append(sessions, s)
	}
	_, err := websocket.Dial(ctx, url, nil)
	var he *websocket.HandshakeError
	if !errors.As(err, &he) || he.StatusCode != http.StatusServiceUnavailable || !strings.Contains(he.Body, "at most 2") || strings.Contains(he.Body, "\n") {
		t.Fatalf("the third client: %v, want HTTP 503 with a one-line reason", err)
	}
	r := tako(t, "tools", "--ws", url)
	r.wantFailure(t, 3, "503", "at most 2")
	if n := starts(); n != 2 {
		t.Errorf("%d servers started, want 2", n)
	}
	if s := stderr(); strings.Count(s, "too many clients") != 2 || !strings.Contains(s, "level=WARN") {
		t.Errorf("stderr %q: want a line per refused client", s)
	}
	sessions[0].Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		// The slot frees once the left client's server has ended, a
		// moment after its session: try until then.
		status, err := wsHandshake(t, url, nil)
		if status == http.StatusSwitchingProtocols {
			break
		}
		if status != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("after a client left: HTTP %d (%v)", status, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The default the help gives is the Handler's (which the websocket
	// tests check), since the bridge leaves MaxClients zero.
	want := "at once (default " + strconv.Itoa(websocket.DefaultMaxClients) + ")"
	if !strings.Contains(strings.Join(strings.Fields(usage()), " "), want) {
		t.Errorf("tako help all does not say %q", want)
	}
	if !strings.Contains(commands["bridge"].help, "(default "+strconv.Itoa(websocket.DefaultMaxClients)+")") {
		t.Errorf("tako help bridge does not give the default of --max-clients, %d", websocket.DefaultMaxClients)
	}
}

// Issue 20, point 3: the bridge started a server before the upgrade had
// succeeded, so requests that look like a WebSocket handshake but cannot
// complete one (no key, another version, not a GET) each started and ended
// a server process. Now none starts until the upgrade.
func TestBridgeStartsBackendAfterUpgrade(t *testing.T) {
	helper, starts := countedHelper(t)
	url := bridge(t, append([]string{"--listen-ws", "127.0.0.1:0"}, helper...)...)
	addr, _ := urlHost(t, url)
	const (
		key     = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
		upgrade = "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Protocol: mcp\r\n"
	)
	for _, tc := range []struct{ name, req string }{
		{"no key", "GET /mcp HTTP/1.1\r\nHost: " + addr + "\r\n" + upgrade + "Sec-WebSocket-Version: 13\r\n\r\n"},
		{"version 8", "GET /mcp HTTP/1.1\r\nHost: " + addr + "\r\n" + upgrade + "Sec-WebSocket-Version: 8\r\n" + key + "\r\n"},
		{"POST", "POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nContent-Length: 0\r\n" + upgrade + "Sec-WebSocket-Version: 13\r\n" + key + "\r\n"},
	} {
		if status := testserve.RawStatus(t, addr, tc.req); status < 400 {
			t.Errorf("%s: HTTP %d, want a refusal", tc.name, status)
		}
	}
	if n := starts(); n != 0 {
		t.Fatalf("%d servers started for handshakes that failed", n)
	}
	if status, err := wsHandshake(t, url, nil); status != http.StatusSwitchingProtocols || starts() != 1 {
		t.Fatalf("a real client: HTTP %d (%v), %d servers started", status, err, starts())
	}
}

// The flags of --listen-ws are checked before anything starts.
func TestBridgeWSFlagsAreUsageErrors(t *testing.T) {
	p := testpki.New(t)
	demo := demoCommand(t)
	for _, tc := range []struct {
		name string
		args []string
		says string
	}{
		{"--max-clients 0", []string{"--listen-ws", "127.0.0.1:0", "--max-clients", "0"}, "--max-clients wants"},
		{"--max-clients x", []string{"--listen-ws", "127.0.0.1:0", "--max-clients", "x"}, "--max-clients wants"},
		{"both token flags", []string{"--listen-ws", "127.0.0.1:0", "--token", "--token-env", "HOME"}, "give one of them"},
		{"an empty token variable", []string{"--listen-ws", "127.0.0.1:0", "--token-env", "TAKO_TEST_NO_SUCH_VARIABLE"}, "$TAKO_TEST_NO_SUCH_VARIABLE is empty"},
		{"an origin that is not one", []string{"--listen-ws", "127.0.0.1:0", "--allow-origin", "localhost:5173"}, "--allow-origin wants an origin"},
		{"a token for the gRPC end", []string{"--listen-grpc", "127.0.0.1:0", "--tls-cert", p.Server.CertFile, "--tls-key", p.Server.KeyFile, "--client-ca", p.CA.File, "--token"}, "are for --listen-ws"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refused(t, append(append([]string{"bridge"}, tc.args...), "--stdio", demo)...).wantFailure(t, 2, tc.says)
		})
	}
	tako(t, "tools", "--stdio", demo, "--token").wantFailure(t, 2, "flags of tako bridge")
}
