package localguard_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/tako-mcp/tako/internal/localguard"
	"github.com/tako-mcp/tako/internal/syncbuf"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// serve runs g.Wrap around a handler that counts the requests it is given,
// on a real server on 127.0.0.1, and returns its host:port and the count.
func serve(t *testing.T, g *localguard.Guard) (addr string, served func() int) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		io.WriteString(w, "ok")
	})))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), func() int { return int(n.Load()) }
}

// send writes a request to addr over TCP, with exactly the Host and the
// headers given (no Host line at all for an empty host, as HTTP/1.0
// allows), and returns the status and the body.
func send(t *testing.T, addr, host, target string, header http.Header) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var b strings.Builder
	if host == "" {
		fmt.Fprintf(&b, "GET %s HTTP/1.0\r\n", target)
	} else {
		fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n", target, host)
	}
	for k, vs := range header {
		for _, v := range vs {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	b.WriteString("\r\n")
	if _, err := io.WriteString(conn, b.String()); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(body)
}

func origin(o string) http.Header { return http.Header{"Origin": {o}} }

// TestGuardRefusesDNSRebinding: a page whose name was rebound to 127.0.0.1
// sends its own name as Host and as Origin, which agree; the Host gives it
// away. Loopback names pass, with or without the port, and so do the
// names the user lists.
func TestGuardRefusesDNSRebinding(t *testing.T) {
	addr, served := serve(t, &localguard.Guard{AllowHosts: []string{"mybox.lan", "pinned.lan:1"}})
	_, port, _ := net.SplitHostPort(addr)
	tests := []struct {
		name   string
		host   string
		header http.Header
		want   int
	}{
		{"rebound name", "evil.example:" + port, origin("http://evil.example:" + port), 403},
		{"rebound name without Origin", "evil.example:" + port, nil, 403},
		{"rebound name, no port", "evil.example", nil, 403},
		{"a name that ends like localhost", "localhost.evil.example:" + port, nil, 403},
		{"localhost with a trailing dot", "localhost.:" + port, nil, 403},
		{"a listed name on another port", "pinned.lan:" + port, nil, 403},
		{"empty Host", "", nil, 403},
		{"127.0.0.1", "127.0.0.1:" + port, nil, 200},
		{"127.0.0.1 without the port", "127.0.0.1", nil, 200},
		{"another loopback address", "127.0.0.2:" + port, nil, 200},
		{"localhost", "localhost:" + port, nil, 200},
		{"LOCALHOST", "LOCALHOST", nil, 200},
		{"[::1]", "[::1]:" + port, nil, 200},
		{"[::1] without the port", "[::1]", nil, 200},
		{"a listed name", "MyBox.lan:" + port, nil, 200},
		{"a listed name with its port", "pinned.lan:1", nil, 200},
		{"a listed name, its own origin", "mybox.lan:" + port, origin("http://mybox.lan:" + port), 200},
	}
	want200 := 0
	for _, tc := range tests {
		status, body := send(t, addr, tc.host, "/", tc.header)
		if status != tc.want {
			t.Errorf("%s: Host %q: HTTP %d %q, want %d", tc.name, tc.host, status, body, tc.want)
		}
		if tc.want == 200 {
			want200++
		} else if !strings.Contains(body, "does not name this machine") || strings.Count(body, "\n") != 1 {
			t.Errorf("%s: body %q is not the one-line reason", tc.name, body)
		}
	}
	if served() != want200 {
		t.Errorf("the handler served %d requests, want %d", served(), want200)
	}
}

// TestGuardRefusesForeignOrigin: a page of another origin (another site,
// another port of this machine, a sandboxed frame or file: page with
// Origin null) is refused; the server's own origin, a listed one and a
// request without Origin pass.
func TestGuardRefusesForeignOrigin(t *testing.T) {
	addr, _ := serve(t, &localguard.Guard{AllowOrigins: []string{"http://localhost:5173/"}})
	tests := []struct {
		name   string
		header http.Header
		want   int
	}{
		{"another site", origin("https://evil.example"), 403},
		{"null", origin("null"), 403},
		{"another port of this machine", origin("http://127.0.0.1:1"), 403},
		{"another name of this machine", origin("http://localhost:" + strings.Split(addr, ":")[1]), 403},
		{"not a URL", origin("127.0.0.1"), 403},
		{"a path", origin("http://" + addr + "/x"), 403},
		{"two Origins", http.Header{"Origin": {"http://" + addr, "http://" + addr}}, 403},
		{"an empty Origin", origin(""), 403},
		{"the server's own origin", origin("http://" + addr), 200},
		{"a listed origin", origin("HTTP://LOCALHOST:5173"), 200},
		{"no Origin", nil, 200},
	}
	for _, tc := range tests {
		status, body := send(t, addr, addr, "/", tc.header)
		if status != tc.want {
			t.Errorf("%s: HTTP %d %q, want %d", tc.name, status, body, tc.want)
		}
	}
	// "*" accepts every origin, null included.
	addr, _ = serve(t, &localguard.Guard{AllowOrigins: []string{"*"}})
	if status, body := send(t, addr, addr, "/", origin("null")); status != 200 {
		t.Errorf(`AllowOrigins "*": Origin null: HTTP %d %q`, status, body)
	}
}

// TestGuardRequiresToken: with a Token, a request without it or with
// another one is refused with 401 and WWW-Authenticate: Bearer, and the
// refusal never shows the token; the header or the query parameter pass.
func TestGuardRequiresToken(t *testing.T) {
	token := localguard.NewToken()
	logs := &syncbuf.Buffer{}
	g := &localguard.Guard{Token: token, Logger: slog.New(slog.NewTextHandler(logs, nil))}
	addr, served := serve(t, g)
	tests := []struct {
		name   string
		target string
		header http.Header
		want   int
	}{
		{"no token", "/", nil, 401},
		{"another token", "/?token=" + localguard.NewToken(), nil, 401},
		{"a prefix of the token", "/?token=" + token[:len(token)-1], nil, 401},
		{"the token in another scheme", "/", http.Header{"Authorization": {"Basic " + token}}, 401},
		{"Authorization: Bearer", "/", http.Header{"Authorization": {"Bearer " + token}}, 200},
		{"authorization: bearer", "/", http.Header{"Authorization": {"bearer " + token}}, 200},
		{"query parameter", "/mcp?token=" + token, nil, 200},
	}
	for _, tc := range tests {
		status, body := send(t, addr, addr, tc.target, tc.header)
		if status != tc.want {
			t.Errorf("%s: HTTP %d %q, want %d", tc.name, status, body, tc.want)
		}
		if strings.Contains(body, token) {
			t.Errorf("%s: the answer shows the token: %q", tc.name, body)
		}
	}
	// The token does not lift the Host rule.
	if status, _ := send(t, addr, "evil.example", "/?token="+token, nil); status != 403 {
		t.Errorf("the token with a rebound Host: HTTP %d, want 403", status)
	}
	if served() != 3 {
		t.Errorf("served %d requests, want 3", served())
	}
	if strings.Contains(logs.String(), token) || strings.Count(logs.String(), "level=WARN") != 5 {
		t.Errorf("log: %q, want five warnings without the token", logs.String())
	}
	req := httptest.NewRequest("GET", "http://127.0.0.1/", nil)
	res := httptest.NewRecorder()
	g.Wrap(http.NotFoundHandler()).ServeHTTP(res, req)
	if res.Code != 401 || res.Header().Get("WWW-Authenticate") != "Bearer" {
		t.Errorf("no token: HTTP %d, WWW-Authenticate %q", res.Code, res.Header().Get("WWW-Authenticate"))
	}
	if a, b := localguard.NewToken(), localguard.NewToken(); a == b || len(a) < 26 {
		t.Errorf("NewToken gave %q and %q", a, b)
	}
}

// Check returns a typed error: errors.Is tells the reason, StatusCode the
// answer. A request that arrived at a non-loopback address of this machine
// may name that address (an IP literal is never a rebound name), but not
// another one.
func TestGuardCheckTypedErrors(t *testing.T) {
	g := &localguard.Guard{Token: "t"}
	for _, tc := range []struct {
		host, origin, auth string
		reason             error
		status             int
	}{
		{"evil.example", "", "Bearer t", localguard.ErrHost, 403},
		{"127.0.0.1", "http://evil.example", "Bearer t", localguard.ErrOrigin, 403},
		{"127.0.0.1", "", "", localguard.ErrToken, 401},
	} {
		req := httptest.NewRequest("GET", "http://x/", nil)
		req.Host = tc.host
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		req.Header.Set("Authorization", tc.auth)
		err := g.Check(req)
		var re *localguard.RefusedError
		if !errors.Is(err, tc.reason) || !errors.As(err, &re) || re.StatusCode() != tc.status {
			t.Errorf("Host %q, Origin %q: %v, want %v with status %d", tc.host, tc.origin, err, tc.reason, tc.status)
		}
	}

	at := func(local, host string) error {
		req := httptest.NewRequest("GET", "http://x/", nil)
		req.Host = host
		return (&localguard.Guard{}).Check(req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.ParseIP(local), Port: 8765})))
	}
	if err := at("192.0.2.7", "192.0.2.7:8765"); err != nil {
		t.Errorf("the address the connection arrived at: %v", err)
	}
	if err := at("192.0.2.7", "192.0.2.8:8765"); !errors.Is(err, localguard.ErrHost) {
		t.Errorf("another address: %v, want ErrHost", err)
	}
	if err := at("0.0.0.0", "0.0.0.0:8765"); !errors.Is(err, localguard.ErrHost) {
		t.Errorf("the unspecified address: %v, want ErrHost", err)
	}
}
