package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tako-mcp/tako/internal/syncbuf"
	"github.com/tako-mcp/tako/internal/testpki"
	"github.com/tako-mcp/tako/internal/testserve"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/websocket"
)

// bridge runs `tako bridge` with args in the background and returns the
// URL it printed. The bridge is interrupted (as by SIGINT) when the test
// ends, and must then exit with status 0.
func bridge(t *testing.T, args ...string) string {
	t.Helper()
	url, _ := startBridgeCmd(t, args...)
	return url
}

// startBridgeCmd is bridge, and also returns interrupt, which interrupts
// the bridge and returns its exit status (the cleanup then does nothing).
func startBridgeCmd(t *testing.T, args ...string) (url string, interrupt func() int) {
	t.Helper()
	url, interrupt, _ = startBridgeStderr(t, args...)
	return url, interrupt
}

// startBridgeStderr is startBridgeCmd, and also returns what the bridge
// has written on stderr so far.
func startBridgeStderr(t *testing.T, args ...string) (url string, interrupt func() int, stderr func() string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	errBuf := &syncbuf.Buffer{}
	done := make(chan int, 1)
	go func() {
		code := run(ctx, append([]string{"bridge"}, args...), pw, errBuf)
		pw.Close()
		done <- code
	}()
	out := bufio.NewReader(pr)
	line, err := out.ReadString('\n')
	if err != nil {
		cancel()
		code := <-done
		t.Fatalf("tako bridge %q printed no URL: %v (exit %d, stderr %q)", args, err, code, errBuf.String())
	}
	// Drain the rest, so that the bridge never blocks on stdout.
	go io.Copy(io.Discard, out)
	var once sync.Once
	code := -1
	interrupt = func() int {
		once.Do(func() {
			cancel()
			code = <-done
		})
		return code
	}
	t.Cleanup(func() {
		if code := interrupt(); code != 0 {
			t.Errorf("tako bridge exited with %d after the interrupt, want 0; stderr %q", code, errBuf.String())
		}
	})
	return strings.TrimSpace(line), interrupt, errBuf.String
}

// wsSession dials url over WebSocket with opts and runs the MCP handshake;
// the caller closes the session.
func wsSession(ctx context.Context, t *testing.T, url string, opts *websocket.Options) *transport.Session {
	t.Helper()
	conn, err := websocket.Dial(ctx, url, opts)
	if err != nil {
		t.Fatal(err)
	}
	s, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestBridgeWSInterrupt: an interrupted bridge closes its clients'
// connections, ends their servers and exits with status 0. (TestMain's
// goleak check then shows that no stdio Conn outlived it: their goroutines
// end only once the server process has been reaped.)
func TestBridgeWSInterrupt(t *testing.T) {
	url, interrupt := startBridgeCmd(t, "--listen-ws", "127.0.0.1:0", "--stdio", demoCommand(t))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var sessions []*transport.Session
	for range 3 {
		s := wsSession(ctx, t, url, nil)
		defer s.Close()
		if _, err := s.ListTools(ctx); err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, s)
	}
	if code := interrupt(); code != 0 {
		t.Fatalf("exit status %d after the interrupt, want 0", code)
	}
	for _, s := range sessions {
		select {
		case <-s.Done():
		case <-ctx.Done():
			t.Fatal("a client's session outlived the bridge")
		}
		if !errors.Is(s.Err(), transport.ErrConnectionLost) {
			t.Errorf("session error %v, want ErrConnectionLost", s.Err())
		}
	}
	if _, err := websocket.Dial(ctx, url, nil); err == nil {
		t.Error("the bridge still accepts clients after the interrupt")
	}
}

// TestBridgeWS is the README's example: serve a stdio server over
// WebSocket with tako bridge, then list and call its tools with --ws.
func TestBridgeWS(t *testing.T) {
	url := bridge(t, "--listen-ws", "127.0.0.1:0", "--stdio", demoCommand(t))
	if !strings.HasPrefix(url, "ws://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") {
		t.Fatalf("bridge printed %q, want ws://127.0.0.1:PORT/mcp", url)
	}
	r := tako(t, "tools", "--ws", url)
	if r.code != 0 || !strings.Contains(r.stdout, "\necho(message) ") {
		t.Fatalf("tools --ws: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = tako(t, "call", "echo", `{"message":"hello over websocket"}`, "--ws", url, "--header", "Authorization: Bearer x")
	if r.code != 0 || r.stdout != "hello over websocket\n" {
		t.Fatalf("call --ws: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// The bridge also answers at /.
	r = tako(t, "tools", "--json", "--ws", strings.TrimSuffix(url, "mcp"))
	if r.code != 0 || !strings.Contains(r.stdout, `"echo"`) {
		t.Fatalf("tools --ws at /: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestBridgeWSUnreachable: --ws to a port where nobody listens fails with
// status 3 and one line that says what could not be reached.
func TestBridgeWSUnreachable(t *testing.T) {
	addr := testserve.ClosedAddr(t)
	r := tako(t, "tools", "--ws", "ws://"+addr+"/mcp")
	r.wantFailure(t, 3, "reach ws://"+addr+"/mcp", "connection refused")
}

// TestBridgeWSListenFails: an address that cannot be listened on ends the
// bridge with status 3.
func TestBridgeWSListenFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	r := tako(t, "bridge", "--listen-ws", ln.Addr().String(), "--stdio", demoCommand(t))
	r.wantFailure(t, 3, "bridge --listen-ws "+ln.Addr().String())
}

// TestBridgeWSTLS: with --tls-cert and --tls-key the bridge serves wss://,
// which a client that trusts the certificate's CA reaches.
func TestBridgeWSTLS(t *testing.T) {
	p := testpki.New(t)
	url := bridge(t, "--listen-ws", "127.0.0.1:0", "--stdio", demoCommand(t), "--tls-cert", p.Server.CertFile, "--tls-key", p.Server.KeyFile)
	if !strings.HasPrefix(url, "wss://") {
		t.Fatalf("bridge printed %q, want a wss:// URL", url)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s := wsSession(ctx, t, url, &websocket.Options{TLSClientConfig: &tls.Config{RootCAs: p.CA.Pool}})
	defer s.Close()
	tools, err := s.ListTools(ctx)
	if err != nil || len(tools) == 0 {
		t.Fatalf("list tools over wss: %v, %d tools", err, len(tools))
	}
	// A client that does not trust it is refused.
	r := tako(t, "tools", "--ws", url)
	r.wantFailure(t, 3, "certificate")
}

// TestBridgeWSServesHTTPServer: the bridge reaches its server through dial
// like every other command, so an --http server can be served over
// WebSocket too (before, bridge served --stdio servers only: "--http is not
// supported as its server yet"), with its --header.
func TestBridgeWSServesHTTPServer(t *testing.T) {
	u := referenceHTTP(t, mcptest.NewReference(mcptest.Options{}))
	url := bridge(t, "--listen-ws", "127.0.0.1:0", "--http", u, "--header", "X-Team: blue")
	r := tako(t, "call", "echo", `{"message":"from http, over websocket"}`, "--ws", url)
	if r.code != 0 || r.stdout != "from http, over websocket\n" {
		t.Fatalf("call --ws to a bridged --http server: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = tako(t, "bridge", "--listen-ws", "127.0.0.1:0", "--grpc", "127.0.0.1:9", "--plaintext")
	r.wantFailure(t, exitUsage, "a --grpc one has no message stream to bridge")
}

// TestBridgeCommandNotFound: a bridge whose command cannot start says so
// at once, exit 3, and listens on nothing. Before, it started, printed its
// URL, answered every client with a failure and said nothing.
func TestBridgeCommandNotFound(t *testing.T) {
	for _, cmd := range []string{"no-such-server-for-tako", "/nonexistent/tako-test/server"} {
		r := tako(t, "bridge", "--listen-ws", "127.0.0.1:0", "--stdio", cmd)
		r.wantFailure(t, exitFailure, "bridge: cannot start "+cmd+": ")
		if r.stdout != "" {
			t.Errorf("the bridge printed %q", r.stdout)
		}
	}
}
