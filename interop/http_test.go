package interop

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/streamablehttp"
	"github.com/tako-mcp/tako/transport"
)

// Tests of tako's Streamable HTTP Conn (and its 2024-11-05 HTTP+SSE
// fallback) against real HTTP servers: the Go peers in their -http modes and
// server-everything in its streamableHttp and sse modes.

// startServer starts a server process and returns its URL, which it reads
// from the process's output with pattern (its first group is the URL or the
// port). The process is killed when the test ends.
func startServer(t *testing.T, fromStderr bool, pattern *regexp.Regexp, toURL func(string) string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var pipe *os.File
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	pipe = r
	if fromStderr {
		cmd.Stderr = w
	} else {
		cmd.Stdout = w
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	w.Close()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		pipe.Close()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		sent := false
		for sc.Scan() {
			if m := pattern.FindStringSubmatch(sc.Text()); m != nil && !sent {
				found <- m[1]
				sent = true
			}
		}
		if !sent {
			close(found)
		}
	}()
	select {
	case v, ok := <-found:
		if !ok {
			t.Fatalf("%s %v exited without saying where it listens", name, args)
		}
		return toURL(v)
	case <-time.After(30 * time.Second):
		t.Fatalf("%s %v did not say where it listens within 30s", name, args)
	}
	return ""
}

var urlLine = regexp.MustCompile(`^(http://\S+)$`)

// goPeerHTTP starts a Go peer with -http on a loopback port.
func goPeerHTTP(t *testing.T, bin string, flags ...string) string {
	args := append([]string{"-http", "127.0.0.1:0"}, flags...)
	return startServer(t, false, urlLine, func(s string) string { return s }, nil, filepath.Join(peerBin, bin), args...)
}

// everythingHTTP starts server-everything in mode (streamableHttp or sse)
// on a free loopback port. Its express app binds every interface unless
// told otherwise; testdata/loopback.cjs makes it bind 127.0.0.1.
func everythingHTTP(t *testing.T, mode string) string {
	node, args := everything(t)
	script := args[0]
	port := freePort(t)
	pattern := regexp.MustCompile(`(?:listening on port|running on port) (\d+)`)
	path := "/mcp"
	if mode == "sse" {
		path = "/sse"
	}
	return startServer(t, true, pattern, func(p string) string { return "http://127.0.0.1:" + p + path },
		[]string{"PORT=" + strconv.Itoa(port)}, node, "--require", "./testdata/loopback.cjs", script, mode)
}

// freePort finds a port the kernel considers free. The server binds it a
// moment later; a clash fails the test loudly, it cannot pass wrongly.
func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// connectHTTP runs tako's handshake over Streamable HTTP.
func connectHTTP(t *testing.T, ctx context.Context, url string, opts *transport.Options) *transport.Session {
	t.Helper()
	conn, err := streamablehttp.Dial(ctx, url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	s, err := transport.Connect(ctx, conn, opts)
	if err != nil {
		t.Fatalf("connect to %s: %v", url, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close session with %s: %v", url, err)
		}
	})
	return s
}

// TestGoPeersHTTP: list and call on every era each Go peer speaks over
// HTTP: the go-sdk's stateful and stateless Streamable HTTP handlers and its
// 2024-11-05 SSE handler, mcp-go's stateful and stateless servers.
func TestGoPeersHTTP(t *testing.T) {
	legacy := []string{mcp.Version20251125, mcp.Version20250618, mcp.Version20250326, mcp.Version20241105}
	type era struct{ pin, want string }
	eraList := func(negotiated string, modern bool, pins []string) []era {
		out := []era{{"", negotiated}}
		if modern {
			out = append(out, era{mcp.Version20260728, mcp.Version20260728})
		}
		for _, p := range pins {
			out = append(out, era{p, p})
		}
		return out
	}
	servers := []struct {
		name  string
		bin   string
		flags []string
		eras  []era
	}{
		// The stateful go-sdk handler answers server/discover, but lists
		// only the legacy revisions: tako then initializes with 2025-11-25.
		{"gosdk-stateful", "gosdk", nil, eraList(mcp.Version20251125, false, legacy)},
		{"gosdk-stateless", "gosdk", []string{"-stateless"}, eraList(mcp.Version20260728, true, legacy)},
		{"gosdk-sse", "gosdk", []string{"-sse"}, eraList(mcp.Version20251125, false, legacy)},
		{"mcpgo-stateful", "mcpgo", nil, eraList(mcp.Version20260728, true, legacy)},
		{"mcpgo-stateless", "mcpgo", []string{"-stateless"}, eraList(mcp.Version20260728, true, legacy)},
	}
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			t.Parallel()
			url := goPeerHTTP(t, srv.bin, srv.flags...)
			for _, e := range srv.eras {
				name := e.pin
				if name == "" {
					name = "negotiated"
				}
				t.Run(name, func(t *testing.T) {
					ctx := testContext(t)
					s := connectHTTP(t, ctx, url, &transport.Options{ProtocolVersion: e.pin})
					if got := s.ServerInfo().ProtocolVersion; got != e.want {
						t.Errorf("negotiated %q, want %q", got, e.want)
					}
					tools, err := s.ListTools(ctx)
					if err != nil {
						t.Fatalf("list tools: %v", err)
					}
					requireTools(t, tools, "add", "echo")
					res := call(t, ctx, s, "echo", `{"message":"over http"}`)
					if got, want := res.Text(), "Echo: over http"; got != want {
						t.Errorf("echo: got %q, want %q", got, want)
					}
					res = call(t, ctx, s, "add", `{"a":2,"b":3}`)
					if got, want := res.Text(), "5"; got != want {
						t.Errorf("add: got %q, want %q", got, want)
					}
				})
			}
		})
	}
}

// TestEverythingHTTP: list, call, a notification that reaches a
// subscriber (a log message on the standalone GET stream, or on the one
// SSE stream of the 2024-11-05 transport), and server-to-client requests
// (sampling, roots) answered by POST.
func TestEverythingHTTP(t *testing.T) {
	for _, mode := range []string{"streamableHttp", "sse"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			url := everythingHTTP(t, mode)
			ctx := testContext(t)
			model := &fakeModel{}
			roots := &rootsClient{}
			s := connectHTTP(t, ctx, url, &transport.Options{
				LogLevel: mcp.LevelDebug,
				Handlers: transport.Handlers{Sampling: model.sample, Roots: roots.list},
			})
			if got := s.ServerInfo().ProtocolVersion; got != mcp.Version20251125 {
				t.Errorf("negotiated %q, want %q", got, mcp.Version20251125)
			}
			logs := make(chan mcp.Notification, 16)
			defer s.Subscribe(func(n mcp.Notification) {
				if n.Method == mcp.NotificationMessage {
					select {
					case logs <- n:
					default:
					}
				}
			})()

			tools, err := s.ListTools(ctx)
			if err != nil {
				t.Fatalf("list tools: %v", err)
			}
			requireTools(t, tools, "echo", "get-sum", "trigger-sampling-request", "get-roots-list", "toggle-simulated-logging")

			res := call(t, ctx, s, "echo", `{"message":"hello over `+mode+`"}`)
			if got, want := res.Text(), "Echo: hello over "+mode; got != want {
				t.Errorf("echo: got %q, want %q", got, want)
			}

			res = call(t, ctx, s, "trigger-sampling-request", `{"prompt":"what is tako?","maxTokens":42}`)
			if !strings.Contains(res.Text(), fakeModelReply) {
				t.Errorf("sampling: tool result %q lacks the client's answer %q", res.Text(), fakeModelReply)
			}
			res = call(t, ctx, s, "get-roots-list", `{}`)
			if !strings.Contains(res.Text(), testRoots[0].URI) {
				t.Errorf("roots: tool result %q lacks %q", res.Text(), testRoots[0].URI)
			}

			// The server logs once at once and then every 5 seconds, on
			// the standalone stream: wait for one.
			call(t, ctx, s, "toggle-simulated-logging", `{}`)
			select {
			case n := <-logs:
				if !strings.Contains(string(n.Params), "level") {
					t.Errorf("log notification without a level: %s", n.Params)
				}
			case <-ctx.Done():
				t.Fatal("no notifications/message reached the subscriber")
			}
		})
	}
}

// TestEverythingHTTPEras pins each legacy revision over Streamable HTTP.
func TestEverythingHTTPEras(t *testing.T) {
	url := everythingHTTP(t, "streamableHttp")
	for _, v := range []string{mcp.Version20241105, mcp.Version20250326, mcp.Version20250618, mcp.Version20251125} {
		t.Run(v, func(t *testing.T) {
			ctx := testContext(t)
			s := connectHTTP(t, ctx, url, &transport.Options{ProtocolVersion: v})
			if got := s.ServerInfo().ProtocolVersion; got != v {
				t.Fatalf("negotiated %q, want %q", got, v)
			}
			res := call(t, ctx, s, "echo", fmt.Sprintf(`{"message":"era %s"}`, v))
			if got, want := res.Text(), "Echo: era "+v; got != want {
				t.Errorf("echo: got %q, want %q", got, want)
			}
		})
	}
}
