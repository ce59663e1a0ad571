package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tako-mcp/tako/internal/syncbuf"
	"github.com/tako-mcp/tako/mcptest"
)

// TestBridgeRefusesDNSRebindingInChromium is the attack of issue 20, point
// 1, made by a real browser. Chromium loads a page from
// http://evil.example:PORT, the bridge's port, which it resolves to the
// attacker's server on 127.0.0.2 (--host-resolver-rules). The page opens
// ws://evil.example:PORT/mcp, and the attacker's server passes that
// connection on to the bridge on 127.0.0.1: what DNS rebinding achieves
// once the name resolves to this machine. The bridge sees the browser's
// own handshake (Host evil.example:PORT, Origin http://evil.example:PORT)
// and refuses it, and no server starts; the same page gets in (and a
// server starts) once the user lists evil.example with --allow-host,
// which shows the refusal is the Host check's and not the harness's.
func TestBridgeRefusesDNSRebindingInChromium(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		mcptest.SkipOrFail(t, "chromium is not installed (apt-get install -y chromium)")
	}
	helper, starts := countedHelper(t)

	url := bridge(t, append([]string{"--listen-ws", "127.0.0.1:0"}, helper...)...)
	if got := rebindInChromium(t, chromium, url); !strings.HasPrefix(got, "HTTP/1.1 403") {
		t.Fatalf("the bridge answered the rebound page with %q, want 403", got)
	}
	if n := starts(); n != 0 {
		t.Fatalf("the bridge started %d servers for the rebound page", n)
	}

	url = bridge(t, append([]string{"--listen-ws", "127.0.0.1:0", "--allow-host", "evil.example"}, helper...)...)
	if got := rebindInChromium(t, chromium, url); !strings.HasPrefix(got, "HTTP/1.1 101") {
		t.Fatalf("with --allow-host evil.example the bridge answered %q, want 101", got)
	}
	deadline := time.Now().Add(30 * time.Second)
	for starts() == 0 { // the server starts just after the 101
		if time.Now().After(deadline) {
			t.Fatal("no server started for the page that got in")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// rebindInChromium serves the attacker's page on 127.0.0.2 at the port of
// the bridge at bridgeURL, has Chromium load it as http://evil.example:PORT,
// and returns the status line the bridge answered the page's WebSocket
// handshake with.
func rebindInChromium(t *testing.T, chromium, bridgeURL string) string {
	t.Helper()
	bridgeAddr, port := urlHost(t, bridgeURL)
	ln, err := net.Listen("tcp", "127.0.0.2:"+port)
	if err != nil {
		t.Fatalf("the attacker's server cannot listen on the bridge's port: %v", err)
	}
	a := &attacker{ln: ln, bridge: bridgeAddr, page: rebindingPage(port), answered: make(chan string, 1), done: make(chan struct{})}
	a.wg.Add(1)
	go a.serve()
	defer a.close()

	profile, err := os.MkdirTemp("", "tako-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for range 10 { // its helpers may still write there for a moment
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--user-data-dir="+profile, "--host-resolver-rules=MAP evil.example 127.0.0.2",
		"--dump-dom", "http://evil.example:"+port+"/")
	var out syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var status string
	select {
	case status = <-a.answered:
	case <-ctx.Done():
	}
	close(a.done) // lets the page finish loading
	if err := cmd.Wait(); err != nil && status == "" {
		t.Logf("chromium: %v", err)
	}
	if status == "" {
		t.Fatalf("the page's WebSocket handshake never reached the bridge; chromium said:\n%s", out.String())
	}
	t.Logf("the bridge answered Chromium's handshake with %q", strings.TrimSpace(status))
	return strings.TrimSpace(status)
}

// rebindingPage opens the WebSocket to its own origin's name and port, and
// sends initialize once in. The script after it is held back by the
// attacker's server until the bridge has answered, so that Chromium does
// not finish the page (and exit, with --dump-dom) before that.
func rebindingPage(port string) string {
	return `<!doctype html><title>a page</title>
<script>
var ws = new WebSocket("ws://evil.example:` + port + `/mcp", "mcp");
ws.onopen = function () {
  ws.send(JSON.stringify({jsonrpc: "2.0", id: 1, method: "initialize",
    params: {protocolVersion: "2025-11-25", capabilities: {}, clientInfo: {name: "page", version: "1"}}}));
};
ws.onmessage = function (e) { document.title = "answered: " + e.data; };
</script>
<script src="/wait.js"></script>
`
}

// attacker is the server of evil.example: it serves the page, and passes
// the connection of its WebSocket on to the bridge.
type attacker struct {
	ln       net.Listener
	bridge   string
	page     string
	answered chan string    // the bridge's status line
	done     chan struct{}  // closed when /wait.js may be answered
	wg       sync.WaitGroup // every goroutine
	mu       sync.Mutex
	conns    []net.Conn
}

func (a *attacker) track(c net.Conn) {
	a.mu.Lock()
	a.conns = append(a.conns, c)
	a.mu.Unlock()
}

func (a *attacker) close() {
	a.ln.Close()
	a.mu.Lock()
	for _, c := range a.conns {
		c.Close()
	}
	a.mu.Unlock()
	a.wg.Wait()
}

func (a *attacker) serve() {
	defer a.wg.Done()
	for {
		c, err := a.ln.Accept()
		if err != nil {
			return
		}
		a.track(c)
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			defer c.Close()
			r := bufio.NewReader(c)
			if start, err := r.Peek(len("GET /mcp")); err == nil && string(start) == "GET /mcp" {
				a.relay(c, r)
			} else {
				a.answer(c, r)
			}
		}()
	}
}

// relay passes a connection to the bridge, and notes the status line of
// the bridge's answer.
func (a *attacker) relay(c net.Conn, r *bufio.Reader) {
	b, err := net.Dial("tcp", a.bridge)
	if err != nil {
		return
	}
	a.track(b)
	defer b.Close()
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		io.Copy(b, r) // the browser's handshake and frames, as sent
	}()
	br := bufio.NewReader(b)
	status, err := br.ReadString('\n')
	if err != nil {
		return
	}
	select {
	case a.answered <- status:
	default:
	}
	io.WriteString(c, status)
	io.Copy(c, br)
}

// answer serves the page's requests: the page, the held-back script, and
// nothing else.
func (a *attacker) answer(c net.Conn, r *bufio.Reader) {
	for {
		req, err := http.ReadRequest(r)
		if err != nil {
			return
		}
		req.Body.Close()
		status, ctype, body := "200 OK", "text/html", a.page
		switch req.URL.Path {
		case "/":
		case "/wait.js":
			select {
			case <-a.done:
			case <-time.After(30 * time.Second):
			}
			ctype, body = "text/javascript", "/* the bridge has answered */"
		default:
			status, ctype, body = "404 Not Found", "text/plain", "no"
		}
		if _, err := fmt.Fprintf(c, "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s", status, ctype, len(body), body); err != nil {
			return
		}
	}
}
