package testserve_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	mcpgrpc "github.com/tako-mcp/tako/grpc"
	"github.com/tako-mcp/tako/internal/testserve"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/streamablehttp"
	"github.com/tako-mcp/tako/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// connect runs the handshake on conn; the session is closed when the test
// ends.
func connect(t *testing.T, ctx context.Context, conn transport.Conn) *transport.Session {
	t.Helper()
	s, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func echo(t *testing.T, tr transport.Transport, msg string) {
	t.Helper()
	res, err := tr.CallTool(testContext(t), &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"message":"` + msg + `"}`)})
	if err != nil || res.Text() != msg {
		t.Fatalf("echo: %v, %v; want %q", res, err, msg)
	}
}

// GRPC serves a Transport that a gRPC client reaches on loopback, and
// stops it when the test ends (TestMain's leak check sees to that).
func TestGRPC(t *testing.T) {
	ctx := testContext(t)
	conn, wait := mcptest.NewReference(mcptest.Options{}).Pipe(context.Background())
	t.Cleanup(func() { wait() }) // after the backend's Close
	backend := connect(t, ctx, conn)
	addr := testserve.GRPC(t, nil, backend, &mcpgrpc.ServerOptions{InsecurePlaintext: true})
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Errorf("listening on %s, want loopback", addr)
	}
	c, err := mcpgrpc.Dial(ctx, addr, &mcpgrpc.Options{InsecurePlaintext: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	echo(t, c, "over grpc")
}

// StatelessHTTP answers a Streamable HTTP client's calls, and a check that
// refuses a request answers it with its status, a 401 with a challenge.
func TestStatelessHTTP(t *testing.T) {
	hs := httptest.NewServer(testserve.StatelessHTTP(mcptest.NewReference(mcptest.Options{}), func(r *http.Request) int {
		if r.Header.Get("Authorization") != "Bearer tok" {
			return http.StatusUnauthorized
		}
		return 0
	}))
	t.Cleanup(hs.Close)
	ctx := testContext(t)
	conn, err := streamablehttp.Dial(ctx, hs.URL+"/mcp", &streamablehttp.Options{Header: http.Header{"Authorization": {"Bearer tok"}}})
	if err != nil {
		t.Fatal(err)
	}
	echo(t, connect(t, ctx, conn), "over http")

	res, err := http.Post(hs.URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Bearer ") {
		t.Errorf("without the token: HTTP %d, WWW-Authenticate %q", res.StatusCode, res.Header.Get("WWW-Authenticate"))
	}
	http.DefaultClient.CloseIdleConnections()
}

// RawStatus sends the request as written, Host header and all.
func TestRawStatus(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host != "evil.example" {
			w.WriteHeader(http.StatusTeapot)
			return
		}
		w.WriteHeader(http.StatusForbidden)
	}))
	t.Cleanup(hs.Close)
	addr := strings.TrimPrefix(hs.URL, "http://")
	if got := testserve.RawStatus(t, addr, "GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n"); got != http.StatusForbidden {
		t.Errorf("HTTP %d, want 403", got)
	}
}

// ClosedAddr is on loopback, and a connection to it is refused.
func TestClosedAddr(t *testing.T) {
	addr := testserve.ClosedAddr(t)
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Errorf("%s is not on loopback", addr)
	}
	if c, err := net.DialTimeout("tcp", addr, 10*time.Second); err == nil {
		c.Close()
		t.Errorf("something listens on %s", addr)
	}
}

// BuildDemoServer's binary is a stdio MCP server with the demo's tools.
func TestBuildDemoServer(t *testing.T) {
	bin, err := testserve.BuildDemoServer(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	conn, err := stdio.Start(ctx, &stdio.Options{Command: bin})
	if err != nil {
		t.Fatal(err)
	}
	echo(t, connect(t, ctx, conn), "from the demo server")
}
