// Package testserve stands up MCP servers on loopback for the tests of this
// module, over the wires tako dials, and probes what listens there: a
// Transport served over gRPC (GRPC), an mcptest.Server served over
// stateless Streamable HTTP (StatelessHTTP), one raw HTTP request whose
// status a test wants to see (RawStatus), an address where nothing
// listens (ClosedAddr), and the module's demo server, built
// (BuildDemoServer).
//
// It is a package, not a _test.go file, so that the tests of dial, the
// orchestrator, the tako command and the transports share one copy of each
// instead of keeping their own; being internal, nothing outside this module
// can import it. It is for tests only: every function takes the test, fails
// it on an error, and closes what it started when the test ends.
package testserve

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcpgrpc "github.com/tako-mcp/tako/grpc"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
)

// GRPC serves backend over gRPC with opts (as mcpgrpc.NewServer takes them)
// on ln, or on a new 127.0.0.1 listener when ln is nil, and returns the
// address it listens on. When the test ends the server is closed, and an
// error from its Serve fails the test: a server that did not stop cleanly
// is a bug the test should see. backend is the caller's to close.
func GRPC(t testing.TB, ln net.Listener, backend transport.Transport, opts *mcpgrpc.ServerOptions) string {
	t.Helper()
	srv, err := mcpgrpc.NewServer(backend, opts)
	if err != nil {
		if ln != nil {
			ln.Close()
		}
		t.Fatal(err)
	}
	if ln == nil {
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// StatelessHTTP serves srv over stateless (2026-07-28) Streamable HTTP, as
// a handler for an httptest server. Each POSTed request is served on a
// pipe of its own, as a stateless server serves each request alone, and
// answered with one JSON body; notifications are accepted and dropped, and
// there is no GET stream. That is enough for the calls a test of a client
// makes (tools/list, tools/call), not for a server's own requests.
//
// check, when not nil, vets each request first: when it returns a status
// other than 0 the request is answered with that status (a 401 with a
// WWW-Authenticate challenge for a Bearer token), so that a test can see
// its headers or credentials arrive.
func StatelessHTTP(srv *mcptest.Server, check func(r *http.Request) int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if check != nil {
			if code := check(r); code != 0 {
				if code == http.StatusUnauthorized {
					w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
				}
				http.Error(w, http.StatusText(code), code)
				return
			}
		}
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		msg, err := mcp.DecodeMessage(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if !msg.IsRequest() {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		ctx := r.Context()
		conn, wait := srv.Pipe(ctx)
		defer func() { conn.Close(); wait() }()
		if err := conn.Write(ctx, msg); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		for {
			m, err := conn.Read(ctx)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			if m.IsResponse() && m.ID.String() == msg.ID.String() {
				w.Header().Set("Content-Type", "application/json")
				w.Write(m.AppendJSON(nil))
				return
			}
			// Progress and log notifications have no stream to go to.
		}
	})
}

// RawStatus writes req, a whole HTTP request as it goes on the wire, on a
// new TCP connection to addr and returns the status of the answer: for
// requests no client library would send (a WebSocket handshake without a
// key, a Host header a browser under DNS rebinding sends). The exchange
// has 30 seconds.
func RawStatus(t testing.TB, addr, req string) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// ClosedAddr returns a 127.0.0.1 address nothing listened on a moment ago:
// a server that is not running, for a test of a refused connection, or an
// address for a server the test starts next (which then fails loudly in the
// rare case that another process took it in between).
func ClosedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// BuildDemoServer builds examples/demo-server, this module's stdio MCP
// server, into dir and returns the binary's path. It is for a TestMain,
// which builds it once for all of a package's tests (and keeps the error
// for the tests that need it to fail with: a demo server that does not
// build is a failure, not a skip). It finds the module from the current
// directory, so it works from any package's tests.
func BuildDemoServer(dir string) (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %v", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("not inside a module (go env GOMOD = %q)", gomod)
	}
	bin := filepath.Join(dir, "demo-server")
	cmd := exec.Command("go", "build", "-o", bin, "./examples/demo-server")
	cmd.Dir = filepath.Dir(gomod)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./examples/demo-server: %v\n%s", err, out)
	}
	return bin, nil
}
