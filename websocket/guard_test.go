package websocket_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gorilla "github.com/gorilla/websocket"

	"github.com/tako-mcp/tako/internal/syncbuf"
	"github.com/tako-mcp/tako/internal/testserve"
	"github.com/tako-mcp/tako/internal/waitgroup"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/websocket"
)

// countingBridge serves h, whose Backend is the reference server, and
// returns its URL and the number of backends started so far.
func countingBridge(t *testing.T, h *websocket.Handler) (url string, started func() int) {
	t.Helper()
	rb := &referenceBackend{srv: mcptest.NewReference(mcptest.Options{})}
	var n atomic.Int64
	h.Backend = func(ctx context.Context) (transport.Conn, error) {
		n.Add(1)
		return rb.backend(ctx)
	}
	// After the Handler's Close (see referenceBridge), and bounded: a
	// backend left open would otherwise hang the test.
	t.Cleanup(func() {
		if !waitgroup.WaitTimeout(&rb.wg, 30*time.Second) {
			t.Error("a backend was still open 30s after the Handler closed")
		}
	})
	return startBridge(t, h), func() int { return int(n.Load()) }
}

func hostOf(url string) string {
	return strings.TrimSuffix(strings.TrimPrefix(url, "ws://"), "/mcp")
}

// handshake dials url with tako's client, the given headers sent as they
// are (Host included), and returns the HTTP status the server answered:
// 101 when the upgrade succeeded.
func handshake(t *testing.T, url string, header http.Header) (int, error) {
	t.Helper()
	conn, err := websocket.Dial(limit(t), url, &websocket.Options{Header: header})
	if err == nil {
		conn.Close()
		return http.StatusSwitchingProtocols, nil
	}
	var he *websocket.HandshakeError
	if errors.As(err, &he) {
		return he.StatusCode, err
	}
	t.Fatalf("Dial %s: %v", url, err)
	return 0, err
}

// TestHandlerRefusesDNSRebinding: a page whose own name was rebound to
// 127.0.0.1 sends that name as Host and as Origin. They agree, which the
// Handler's old same-origin check took for a local page: the upgrade
// succeeded and a backend started. Now the Host gives the page away, and
// nothing starts; a foreign or null Origin is refused too.
func TestHandlerRefusesDNSRebinding(t *testing.T) {
	url, started := countingBridge(t, &websocket.Handler{})
	_, port, _ := net.SplitHostPort(hostOf(url))
	for _, tc := range []struct {
		name   string
		header http.Header
	}{
		{"rebound name", http.Header{"Host": {"evil.example:" + port}, "Origin": {"http://evil.example:" + port}}},
		{"rebound name, no Origin", http.Header{"Host": {"evil.example:" + port}}},
		{"foreign origin", http.Header{"Origin": {"https://evil.example"}}},
		{"null origin", http.Header{"Origin": {"null"}}},
		{"another port's page", http.Header{"Origin": {"http://127.0.0.1:1"}}},
	} {
		status, err := handshake(t, url, tc.header)
		if status != http.StatusForbidden || !errors.Is(err, transport.ErrAuthRequired) {
			t.Errorf("%s: HTTP %d (%v), want 403", tc.name, status, err)
		}
	}
	if n := started(); n != 0 {
		t.Fatalf("%d backends started for refused clients", n)
	}
	// A local page and a program get in.
	for _, header := range []http.Header{
		{"Origin": {"http://" + hostOf(url)}},
		{"Host": {"localhost:" + port}, "Origin": {"http://localhost:" + port}},
		nil,
	} {
		if status, err := handshake(t, url, header); status != http.StatusSwitchingProtocols {
			t.Errorf("headers %v: HTTP %d (%v), want the upgrade", header, status, err)
		}
	}
	// A name the user listed, and an origin the user listed.
	url, _ = countingBridge(t, &websocket.Handler{AllowedHosts: []string{"mybox.lan"}, AllowedOrigins: []string{"http://localhost:5173"}})
	_, port, _ = net.SplitHostPort(hostOf(url))
	for _, header := range []http.Header{
		{"Host": {"mybox.lan:" + port}, "Origin": {"http://mybox.lan:" + port}},
		{"Origin": {"http://localhost:5173"}},
	} {
		if status, err := handshake(t, url, header); status != http.StatusSwitchingProtocols {
			t.Errorf("listed, headers %v: HTTP %d (%v), want the upgrade", header, status, err)
		}
	}
}

// TestHandlerRequiresToken: with Token set, a client without it (or with
// another) is refused with 401 before anything starts; the token passes as
// a bearer header or as ?token= (a browser's only way).
func TestHandlerRequiresToken(t *testing.T) {
	url, started := countingBridge(t, &websocket.Handler{Token: "s3cret-token"})
	for _, u := range []string{url, url + "?token=guess"} {
		status, err := handshake(t, u, nil)
		if status != http.StatusUnauthorized || !errors.Is(err, transport.ErrAuthRequired) {
			t.Errorf("%s: HTTP %d (%v), want 401", u, status, err)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("the refusal shows the token: %v", err)
		}
	}
	if n := started(); n != 0 {
		t.Fatalf("%d backends started for clients without the token", n)
	}
	if status, err := handshake(t, url, http.Header{"Authorization": {"Bearer s3cret-token"}}); status != 101 {
		t.Errorf("bearer header: HTTP %d (%v)", status, err)
	}
	if status, err := handshake(t, url+"?token=s3cret-token", nil); status != 101 {
		t.Errorf("query parameter: HTTP %d (%v)", status, err)
	}
	// The token does not lift the Host rule, and the client's error does
	// not show the token of the URL it dialled.
	status, err := handshake(t, url+"?token=s3cret-token", http.Header{"Host": {"evil.example"}})
	if status != http.StatusForbidden || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "token=REDACTED") {
		t.Errorf("the token with a rebound Host: HTTP %d (%v), want 403 and the token redacted", status, err)
	}
}

// TestHandlerCapsClients: past MaxClients a client is refused with HTTP
// 503 and a one-line reason, before a backend starts, and the refusal is
// logged; once a client has gone, the next one gets in.
func TestHandlerCapsClients(t *testing.T) {
	logs := &syncbuf.Buffer{}
	url, started := countingBridge(t, &websocket.Handler{MaxClients: 2, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	var sessions []*transport.Session
	for range 2 {
		s, err := transport.Connect(limit(t), dial(t, url, nil), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		sessions = append(sessions, s)
	}
	for range 3 {
		_, err := websocket.Dial(limit(t), url, nil)
		var he *websocket.HandshakeError
		if !errors.As(err, &he) || he.StatusCode != http.StatusServiceUnavailable || !strings.Contains(he.Body, "at most 2") || strings.Contains(he.Body, "\n") {
			t.Fatalf("the third client: %v, want HTTP 503 with a one-line reason", err)
		}
	}
	if n := started(); n != 2 {
		t.Errorf("%d backends started, want 2", n)
	}
	if got := strings.Count(logs.String(), "too many clients"); got != 3 {
		t.Errorf("logged %d refusals, want 3:\n%s", got, logs.String())
	}
	// The session is gone once its backend is; the slot then frees. Its
	// Handler returns a moment later: dial again until then.
	sessions[0].Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := websocket.Dial(limit(t), url, nil)
		if err == nil {
			conn.Close()
			break
		}
		var he *websocket.HandshakeError
		if !errors.As(err, &he) || he.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("after a client left: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestHandlerCapsClientsByDefault: the zero MaxClients is
// DefaultMaxClients, not unbounded.
func TestHandlerCapsClientsByDefault(t *testing.T) {
	url, started := countingBridge(t, &websocket.Handler{})
	var conns []*gorilla.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	d := &gorilla.Dialer{Subprotocols: []string{"mcp"}}
	for i := range websocket.DefaultMaxClients {
		c, _, err := d.DialContext(limit(t), url, nil)
		if err != nil {
			t.Fatalf("client %d of %d: %v", i+1, websocket.DefaultMaxClients, err)
		}
		conns = append(conns, c)
		// An answer from its backend: the upgrade's answer comes before
		// the backend starts, so it alone does not say the backend did.
		if err := c.WriteMessage(gorilla.TextMessage, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)); err != nil {
			t.Fatalf("client %d: %v", i+1, err)
		}
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		if _, _, err := c.ReadMessage(); err != nil {
			t.Fatalf("client %d: no answer from its backend: %v", i+1, err)
		}
	}
	_, resp, err := d.DialContext(limit(t), url, nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("client %d: %v, want HTTP 503", websocket.DefaultMaxClients+1, err)
	}
	resp.Body.Close()
	if n := started(); n != websocket.DefaultMaxClients {
		t.Errorf("%d backends started, want %d", n, websocket.DefaultMaxClients)
	}
}

// TestHandlerStartsBackendAfterUpgrade: the backend used to start before
// the upgrade, so a request that looks like a WebSocket handshake but
// cannot complete one (no key, another version, not a GET) started a
// backend for nothing and ended it at once. Now nothing starts until the
// connection is upgraded.
func TestHandlerStartsBackendAfterUpgrade(t *testing.T) {
	url, started := countingBridge(t, &websocket.Handler{})
	addr := hostOf(url)
	const key = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
	for _, tc := range []struct{ name, req string }{
		{"no key", "GET /mcp HTTP/1.1\r\nHost: " + addr + "\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: mcp\r\n\r\n"},
		{"version 8", "GET /mcp HTTP/1.1\r\nHost: " + addr + "\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 8\r\n" + key + "Sec-WebSocket-Protocol: mcp\r\n\r\n"},
		{"POST", "POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nContent-Length: 0\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n" + key + "Sec-WebSocket-Protocol: mcp\r\n\r\n"},
	} {
		status := testserve.RawStatus(t, addr, tc.req)
		if status < 400 {
			t.Errorf("%s: HTTP %d, want a refusal", tc.name, status)
		}
	}
	if n := started(); n != 0 {
		t.Fatalf("%d backends started for handshakes that failed", n)
	}
	if status := testserve.RawStatus(t, addr, "GET /mcp HTTP/1.1\r\nHost: "+addr+"\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"+key+"Sec-WebSocket-Protocol: mcp\r\n\r\n"); status != 101 {
		t.Fatalf("a complete handshake: HTTP %d", status)
	}
}

// TestBackendFailsClosesWithReason: a backend that cannot start (which is
// now known only after the upgrade) closes the connection with code 1011
// and a reason, which the client's first call reports.
func TestBackendFailsClosesWithReason(t *testing.T) {
	url := startBridge(t, &websocket.Handler{Backend: func(context.Context) (transport.Conn, error) {
		return nil, errors.New("no such server")
	}})
	conn := dial(t, url, nil)
	_, err := transport.Connect(limit(t), conn, nil)
	if !errors.Is(err, transport.ErrConnectionLost) || !strings.Contains(err.Error(), "1011") || !strings.Contains(err.Error(), "could not be started") {
		t.Fatalf("Connect: %v, want the connection lost with code 1011 and the reason", err)
	}
}
