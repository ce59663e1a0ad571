package dial_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc/credentials"

	"github.com/tako-mcp/tako/auth"
	"github.com/tako-mcp/tako/dial"
	mcpgrpc "github.com/tako-mcp/tako/grpc"
	"github.com/tako-mcp/tako/internal/testpki"
	"github.com/tako-mcp/tako/internal/testserve"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/websocket"
)

// *auth.Client plugs into every seam dial has.
var (
	_ dial.Authorizer               = (*auth.Client)(nil)
	_ credentials.PerRPCCredentials = (*auth.Client)(nil)
)

// mustDial dials s and closes the Transport when the test ends.
func mustDial(t *testing.T, s dial.Server, opts *transport.Options) transport.Transport {
	t.Helper()
	tr, err := dial.Dial(testContext(t), s, opts)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

// echo checks that tr lists the echo tool and that calling it echoes.
func echo(t *testing.T, tr transport.Transport, msg string) {
	t.Helper()
	ctx := testContext(t)
	tools, err := tr.ListTools(ctx)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "echo") {
		t.Fatalf("tools %v lack echo", names)
	}
	args, _ := json.Marshal(map[string]string{"message": msg})
	res, err := tr.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	if got := res.Text(); !strings.Contains(got, msg) {
		t.Errorf("echo answered %q, want %q in it", got, msg)
	}
}

// wantError checks that err is a *dial.Error of op for server, with each
// of contains in its message, and returns it.
func wantError(t *testing.T, err error, server, op string, contains ...string) *dial.Error {
	t.Helper()
	t.Log(err)
	var de *dial.Error
	if !errors.As(err, &de) {
		t.Fatalf("err = %v (%T), want a *dial.Error", err, err)
	}
	if de.Server != server || de.Op != op {
		t.Errorf("Server %q, Op %q; want %q, %q (%v)", de.Server, de.Op, server, op, err)
	}
	for _, s := range contains {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not contain %q", err, s)
		}
	}
	return de
}

func TestDialStdio(t *testing.T) {
	tr := mustDial(t, dial.Server{Command: demo(t), Args: []string{"-name", "first"}}, nil)
	if _, ok := tr.(*transport.Session); !ok {
		t.Errorf("a stdio server is a %T, want a *transport.Session", tr)
	}
	echo(t, tr, "hello over stdio")
	if got := tr.ServerInfo().Implementation.Name; got != "first" {
		t.Errorf("server name %q: the arguments did not reach the command", got)
	}
}

func TestDialStdioErrors(t *testing.T) {
	ctx := testContext(t)
	_, err := dial.Dial(ctx, dial.Server{Command: "no-such-mcp-server-here"}, nil)
	de := wantError(t, err, "no-such-mcp-server-here", "start", `server "no-such-mcp-server-here" (no-such-mcp-server-here): start: exec: "no-such-mcp-server-here": executable file not found`)
	if !errors.Is(de, exec.ErrNotFound) {
		t.Errorf("%v does not wrap exec.ErrNotFound", err)
	}

	// A server that exits at once: the handshake fails with its exit
	// status and its stderr, said once.
	_, err = dial.Dial(ctx, dial.Server{Name: "demo", Command: demo(t), Args: []string{"-no-such-flag"}}, nil)
	wantError(t, err, "demo", "handshake", "exited with status 2; stderr: ")
	var ee *stdio.ExitError
	if !errors.As(err, &ee) {
		t.Errorf("%v does not wrap a *stdio.ExitError", err)
	}
	if n := strings.Count(err.Error(), "handshake"); n != 1 {
		t.Errorf("%q says handshake %d times", err, n)
	}
}

// TestDialHTTPEverything: Streamable HTTP to the npm reference server.
func TestDialHTTPEverything(t *testing.T) {
	url := everythingHTTP(t, "streamableHttp")
	tr := mustDial(t, dial.Server{URL: url}, nil)
	echo(t, tr, "hello over streamable http")
}

// TestDialSSEEverything: Kind SSE to the reference server's 2024-11-05
// HTTP+SSE endpoint, whose /sse refuses the first POST; the revision is
// negotiated as on any wire, and can be pinned.
func TestDialSSEEverything(t *testing.T) {
	url := everythingHTTP(t, "sse")
	tr := mustDial(t, dial.Server{Kind: dial.SSE, URL: url}, nil)
	echo(t, tr, "hello over sse")
	tr = mustDial(t, dial.Server{Kind: dial.SSE, URL: url}, &transport.Options{ProtocolVersion: mcp.Version20241105})
	echo(t, tr, "hello over sse, 2024-11-05")
	if v := tr.ServerInfo().ProtocolVersion; v != mcp.Version20241105 {
		t.Errorf("protocol %q, want %s", v, mcp.Version20241105)
	}
}

// fakeAuth is an Authorizer whose token changes when it is told of a 401.
type fakeAuth struct {
	mu      sync.Mutex
	token   string
	refused int
}

func (a *fakeAuth) AuthorizeRequest(req *http.Request) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	req.Header.Set("Authorization", "Bearer "+a.token)
	return nil
}

func (a *fakeAuth) HandleUnauthorized(ctx context.Context, resp *http.Response) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.refused++
	a.token = "fresh"
	return nil
}

// TestDialHTTPHeaderAndAuth: Header reaches every request, and the
// Authorizer is plugged into the HTTP seam: per request, and told of a
// 401, after which the request goes again with the new token.
func TestDialHTTPHeaderAndAuth(t *testing.T) {
	var bad atomic.Int32
	hs := httptest.NewServer(testserve.StatelessHTTP(mcptest.NewReference(mcptest.Options{}), func(r *http.Request) int {
		switch {
		case r.Header.Get("X-Team") != "blue":
			bad.Add(1)
			return http.StatusForbidden
		case r.Header.Get("Authorization") != "Bearer fresh":
			return http.StatusUnauthorized
		}
		return 0
	}))
	t.Cleanup(hs.Close)
	a := &fakeAuth{token: "stale"}
	tr := mustDial(t, dial.Server{URL: hs.URL + "/mcp", Header: http.Header{"X-Team": {"blue"}}, Auth: a}, nil)
	echo(t, tr, "authorized")
	if a.refused != 1 || bad.Load() != 0 {
		t.Errorf("told of %d refusals (want 1); %d requests without the header", a.refused, bad.Load())
	}

	// AuthFunc: called for the server at Dial; its error is the "auth" step's.
	var asked string
	tr = mustDial(t, dial.Server{URL: hs.URL + "/mcp", Header: http.Header{"X-Team": {"blue"}}, AuthFunc: func(ctx context.Context, s *dial.Server) (dial.Authorizer, error) {
		asked = s.URL
		return &fakeAuth{token: "fresh"}, nil
	}}, nil)
	echo(t, tr, "factory")
	if asked != hs.URL+"/mcp" {
		t.Errorf("AuthFunc asked for %q", asked)
	}
	_, err := dial.Dial(testContext(t), dial.Server{Name: "x", URL: hs.URL + "/mcp", AuthFunc: func(context.Context, *dial.Server) (dial.Authorizer, error) {
		return nil, errors.New("no login stored")
	}}, nil)
	wantError(t, err, "x", "auth", "no login stored")
}

// TestDialHTTPS: a CA pins the server's certificate; without it the
// system's roots refuse the test CA's certificate, and the error says so
// once. The TLS RoundTripper dial makes is closed with the Transport
// (TestMain's goleak check would find its connections otherwise).
func TestDialHTTPS(t *testing.T) {
	p := testpki.New(t)
	hs := httptest.NewUnstartedServer(testserve.StatelessHTTP(mcptest.NewReference(mcptest.Options{}), nil))
	hs.TLS = &tls.Config{Certificates: []tls.Certificate{p.Server.TLS(t)}}
	hs.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below is expected
	hs.StartTLS()
	t.Cleanup(hs.Close)
	tr := mustDial(t, dial.Server{URL: hs.URL + "/mcp", TLS: &dial.TLS{CAFile: p.CA.File}}, nil)
	echo(t, tr, "hello over https")
	tr.Close()

	_, err := dial.Dial(testContext(t), dial.Server{URL: hs.URL + "/mcp"}, nil)
	wantError(t, err, "localhost-"+port(t, hs.URL), "handshake", "certificate signed by unknown authority")
	if n := strings.Count(err.Error(), hs.URL); n > 1 {
		t.Errorf("%q names the URL %d times", err, n)
	}
}

func port(t *testing.T, url string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(strings.TrimPrefix(strings.TrimPrefix(url, "https://"), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Issue 21: a failed connection was reported in every layer's words,
// "connect: mcp handshake: initialize: write: mcp http: initialize: Post
// ...". Now the server, the step and the cause are each said once.
func TestDialErrorSaysItOnce(t *testing.T) {
	addr := testserve.ClosedAddr(t)
	for _, c := range []struct {
		s    dial.Server
		op   string
		want string
	}{
		{dial.Server{Name: "news", URL: "http://" + addr + "/mcp"}, "handshake", `server "news" (http://` + addr + `/mcp): handshake: dial tcp ` + addr + `: connect: connection refused`},
		{dial.Server{Name: "news", URL: "ws://" + addr + "/mcp"}, "connect", `server "news" (ws://` + addr + `/mcp): connect: dial tcp ` + addr + `: connect: connection refused`},
	} {
		_, err := dial.Dial(testContext(t), c.s, nil)
		wantError(t, err, "news", c.op)
		if err.Error() != c.want {
			t.Errorf("error\n %q\nwant\n %q", err, c.want)
		}
	}
}

// TestDialWebSocket: the websocket package's bridge Handler over
// httptest, in front of the demo server on stdio; the Header and the
// Authorizer's credentials arrive with the opening handshake.
func TestDialWebSocket(t *testing.T) {
	bin := demo(t)
	h := &websocket.Handler{Backend: func(ctx context.Context) (transport.Conn, error) {
		return stdio.Start(ctx, &stdio.Options{Command: bin})
	}}
	t.Cleanup(func() { h.Close() })
	var seen http.Header
	var mu sync.Mutex
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = r.Header.Clone()
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	url := "ws" + strings.TrimPrefix(hs.URL, "http") + "/mcp"
	tr := mustDial(t, dial.Server{URL: url, Header: http.Header{"X-Team": {"blue"}}, Auth: &fakeAuth{token: "tok"}}, nil)
	echo(t, tr, "hello over websocket")
	mu.Lock()
	defer mu.Unlock()
	if seen.Get("X-Team") != "blue" || seen.Get("Authorization") != "Bearer tok" {
		t.Errorf("the upgrade carried %v", seen)
	}
}

// TestDialWSS: a wss:// server whose certificate a test CA signed.
func TestDialWSS(t *testing.T) {
	p := testpki.New(t)
	bin := demo(t)
	h := &websocket.Handler{Backend: func(ctx context.Context) (transport.Conn, error) {
		return stdio.Start(ctx, &stdio.Options{Command: bin})
	}}
	t.Cleanup(func() { h.Close() })
	hs := httptest.NewUnstartedServer(h)
	hs.TLS = &tls.Config{Certificates: []tls.Certificate{p.Server.TLS(t)}}
	hs.StartTLS()
	t.Cleanup(hs.Close)
	url := "wss" + strings.TrimPrefix(hs.URL, "https")
	tr := mustDial(t, dial.Server{URL: url, TLS: &dial.TLS{CAFile: p.CA.File, ServerName: "mcp.test"}}, nil)
	echo(t, tr, "hello over wss")
}

// grpcServer serves the demo server over gRPC on loopback, with mutual TLS
// (p's server certificate, p's CA for the clients), or in plain text when
// p is nil, and returns its address.
func grpcServer(t *testing.T, p *testpki.PKI) string {
	t.Helper()
	ctx := testContext(t)
	deps := mcpgrpc.NewDependents()
	conn, err := stdio.Start(ctx, &stdio.Options{Command: demo(t)})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := transport.Connect(ctx, conn, &transport.Options{Handlers: deps.Handlers()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	opts := &mcpgrpc.ServerOptions{Dependents: deps, InsecurePlaintext: p == nil}
	if p != nil {
		if opts.TLS, err = mcpgrpc.ServerTLSConfig(mcpgrpc.TLSOptions{CertFile: p.Server.CertFile, KeyFile: p.Server.KeyFile, CAFile: p.CA.File}); err != nil {
			t.Fatal(err)
		}
	}
	return testserve.GRPC(t, nil, sess, opts)
}

// TestDialGRPC: mutual TLS with certificates made at test time; the
// session options' Handlers reach the gRPC client, so a server's sampling
// request is answered (the CLI's own dialer dropped them).
func TestDialGRPC(t *testing.T) {
	p := testpki.New(t)
	addr := grpcServer(t, p)
	tls := &dial.TLS{CAFile: p.CA.File, CertFile: p.Client.CertFile, KeyFile: p.Client.KeyFile, ServerName: "mcp.test"}
	sampled := 0
	opts := &transport.Options{Handlers: transport.Handlers{Sampling: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
		sampled++
		return &mcp.CreateMessageResult{Role: "assistant", Content: json.RawMessage(`{"type":"text","text":"a haiku"}`), Model: "m"}, nil
	}}}
	tr := mustDial(t, dial.Server{Kind: dial.GRPC, URL: addr, TLS: tls}, opts)
	if _, ok := tr.(*mcpgrpc.Client); !ok {
		t.Errorf("a grpc server is a %T, want a *mcpgrpc.Client", tr)
	}
	echo(t, tr, "hello over grpc")
	res, err := tr.CallTool(testContext(t), &mcp.CallToolParams{Name: "sample", Arguments: json.RawMessage(`{"prompt":"write a haiku"}`)})
	if err != nil || res.Text() != "a haiku" || sampled != 1 {
		t.Errorf("sample: %v, %v; sampled %d times", res, err, sampled)
	}

	// grpc:// says the kind by itself.
	tr = mustDial(t, dial.Server{URL: "grpc://" + addr, TLS: tls}, nil)
	echo(t, tr, "grpc scheme")

	// Without a client certificate the server refuses, and the error says why.
	_, err = dial.Dial(testContext(t), dial.Server{Kind: dial.GRPC, URL: addr, TLS: &dial.TLS{CAFile: p.CA.File, ServerName: "mcp.test"}}, nil)
	wantError(t, err, "localhost-"+port(t, "http://"+addr), "connect", "certificate required")
}

func TestDialGRPCPlaintext(t *testing.T) {
	addr := grpcServer(t, nil)
	tr := mustDial(t, dial.Server{Kind: dial.GRPC, URL: addr, TLS: &dial.TLS{Plaintext: true}, Header: http.Header{"X-Team": {"blue"}}}, nil)
	echo(t, tr, "in the clear")
}

// TestDialRefusesBadServers: what cannot work is refused before anything
// starts, with ErrInvalid or ErrUnsupported.
func TestDialRefusesBadServers(t *testing.T) {
	for _, c := range []struct {
		s    dial.Server
		want error
		msg  string
	}{
		{dial.Server{}, dial.ErrInvalid, "needs a Command or a URL"},
		{dial.Server{Command: "x", URL: "http://h/mcp"}, dial.ErrInvalid, "not both"},
		{dial.Server{URL: "ftp://h/mcp"}, dial.ErrUnsupported, `"ftp"`},
		{dial.Server{URL: "127.0.0.1:50051"}, dial.ErrInvalid, "a gRPC target needs Kind grpc"},
		{dial.Server{URL: "localhost:50051"}, dial.ErrInvalid, "a gRPC target needs Kind grpc"},
		{dial.Server{URL: "h/mcp"}, dial.ErrInvalid, "no scheme"},
		{dial.Server{Kind: dial.HTTP, URL: "ws://h/mcp"}, dial.ErrUnsupported, "http:// or https://"},
		{dial.Server{Kind: dial.WebSocket, URL: "http://h/mcp"}, dial.ErrUnsupported, "ws:// or wss://"},
		{dial.Server{Kind: "carrier-pigeon", URL: "http://h/mcp"}, dial.ErrUnsupported, "carrier-pigeon"},
		{dial.Server{Kind: dial.Stdio, URL: "http://h/mcp"}, dial.ErrInvalid, "not a URL"},
		{dial.Server{Kind: dial.GRPC}, dial.ErrInvalid, "target"},
		{dial.Server{Command: "x", Header: http.Header{"X-Key": {"k"}}}, dial.ErrInvalid, "Header and TLS are for a server reached at a URL"},
		{dial.Server{Command: "x", TLS: &dial.TLS{CAFile: "ca.pem"}}, dial.ErrInvalid, "Header and TLS are for a server reached at a URL"},
		{dial.Server{URL: "http://h/mcp", TLS: &dial.TLS{CAFile: "ca.pem"}}, dial.ErrInvalid, "plain-text URL"},
		{dial.Server{URL: "https://h/mcp", TLS: &dial.TLS{Plaintext: true}}, dial.ErrInvalid, "Plaintext is for grpc"},
		{dial.Server{URL: "https://h/mcp", TLS: &dial.TLS{CertFile: "c.pem"}}, dial.ErrInvalid, "go together"},
		{dial.Server{URL: "https://h/mcp", TLS: &dial.TLS{CAFile: "/no/such/ca.pem"}}, dial.ErrInvalid, "CA file"},
		{dial.Server{Kind: dial.GRPC, URL: "h:1", TLS: &dial.TLS{Plaintext: true, CAFile: "x"}}, dial.ErrInvalid, "Plaintext goes without"},
		{dial.Server{Kind: dial.GRPC, URL: "h:1", TLS: &dial.TLS{Plaintext: true}, Auth: &fakeAuth{}}, dial.ErrUnsupported, "PerRPCCredentials"},
	} {
		_, err := dial.Dial(testContext(t), c.s, nil)
		var de *dial.Error
		if !errors.As(err, &de) || de.Op != "check" || !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%+v: %v, want a check error wrapping %v with %q", c.s, err, c.want, c.msg)
		}
		if cerr := c.s.Check(); cerr == nil || cerr.Error() != err.Error() {
			t.Errorf("%+v: Check says %v, Dial %v", c.s, cerr, err)
		}
	}
	// Check starts and reaches nothing: a command that is not there, a
	// host nobody serves and a CA that pins are all fine to it.
	p := testpki.New(t)
	for _, s := range []dial.Server{
		{Command: "no-such-mcp-server-here"},
		{URL: "https://unreachable.invalid/mcp", TLS: &dial.TLS{CAFile: p.CA.File, CertFile: p.Client.CertFile, KeyFile: p.Client.KeyFile}},
		{URL: "wss://unreachable.invalid/mcp"},
		{Kind: dial.GRPC, URL: "unreachable.invalid:1", TLS: &dial.TLS{CAFile: p.CA.File}},
		{Kind: dial.GRPC, URL: "unreachable.invalid:1"},
	} {
		if err := s.Check(); err != nil {
			t.Errorf("Check(%+v): %v", s, err)
		}
	}
}

// TestErrorTargetHidesSecrets: the URL an error names has no
// credentials and no query.
func TestErrorTargetHidesSecrets(t *testing.T) {
	_, err := dial.Dial(testContext(t), dial.Server{URL: "ftp://user:hunter2@h/mcp?api_key=k123"}, nil)
	if err == nil || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "k123") {
		t.Errorf("error %v", err)
	}
}
