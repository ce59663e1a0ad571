package interop

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/websocket"
)

// WebSocket is not a spec transport (checklist §8C); tako speaks it as the
// TypeScript SDK 1.x does (subprotocol "mcp", one JSON-RPC message per text
// frame). These tests put tako's bridge (websocket.Handler) in front of the
// stdio reference server, then talk to it with tako's own WebSocket client
// and with the TypeScript SDK's WebSocketClientTransport.

// bridgedProcess is one stdio server the bridge started for a client.
type bridgedProcess struct {
	pid    int
	closed chan struct{} // closed when the bridge has closed its Conn
}

// stdioBridge serves command over WebSocket with a fresh subprocess per
// client, on a local httptest server. It returns the ws:// URL and a
// channel that receives each subprocess the bridge starts.
func stdioBridge(t *testing.T, command string, args []string) (url string, started <-chan *bridgedProcess) {
	t.Helper()
	procs := make(chan *bridgedProcess, 16)
	h := &websocket.Handler{Backend: func(ctx context.Context) (transport.Conn, error) {
		conn, err := stdio.Start(ctx, &stdio.Options{Command: command, Args: args})
		if err != nil {
			return nil, err
		}
		p := &bridgedProcess{pid: conn.Pid(), closed: make(chan struct{})}
		select {
		case procs <- p:
		default:
		}
		return &closeNotifier{Conn: conn, p: p}, nil
	}}
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.Close()
		h.Close() // ends every bridge and its subprocess
	})
	return "ws" + strings.TrimPrefix(ts.URL, "http") + "/mcp", procs
}

// closeNotifier tells the test when the bridge has closed (and so ended)
// a subprocess.
type closeNotifier struct {
	*stdio.Conn
	p    *bridgedProcess
	once sync.Once
}

func (c *closeNotifier) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { close(c.p.closed) })
	return err
}

// connectWS dials url with tako's WebSocket client and runs the handshake;
// the session is closed when the test ends.
func connectWS(t *testing.T, ctx context.Context, url string, opts *transport.Options) *transport.Session {
	t.Helper()
	conn, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	s, err := transport.Connect(ctx, conn, opts)
	if err != nil {
		t.Fatalf("connect over %s: %v", url, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close session: %v", err)
		}
	})
	return s
}

// TestWebSocketBridgeEverything: tako's client, through tako's bridge, to
// the TypeScript reference server: the handshake, tools/list, a call, a
// notification, and server-to-client requests (sampling, roots) answered.
func TestWebSocketBridgeEverything(t *testing.T) {
	command, args := everything(t)
	url, _ := stdioBridge(t, command, args)
	ctx := testContext(t)
	model := &fakeModel{}
	roots := &rootsClient{}
	s := connectWS(t, ctx, url, &transport.Options{
		Handlers: transport.Handlers{Sampling: model.sample, Roots: roots.list},
	})

	info := s.ServerInfo()
	if info.ProtocolVersion != mcp.Version20251125 || info.Implementation.Name != everythingName {
		t.Errorf("server %q on %q, want %q on %q", info.Implementation.Name, info.ProtocolVersion, everythingName, mcp.Version20251125)
	}

	t.Run("ListTools", func(t *testing.T) {
		tools, err := s.ListTools(ctx)
		if err != nil {
			t.Fatalf("list tools: %v", err)
		}
		requireTools(t, tools, "echo", "get-sum", "toggle-simulated-logging", "trigger-sampling-request", "get-roots-list")
	})

	t.Run("Call", func(t *testing.T) {
		res := call(t, ctx, s, "echo", `{"message":"hello over websocket"}`)
		if got, want := res.Text(), "Echo: hello over websocket"; got != want {
			t.Errorf("echo: got %q, want %q", got, want)
		}
		res = call(t, ctx, s, "get-sum", `{"a":2,"b":40}`)
		if !strings.Contains(res.Text(), "42") {
			t.Errorf("get-sum: got %q, want 42 in it", res.Text())
		}
	})

	t.Run("Notification", func(t *testing.T) {
		logs := make(chan mcp.Notification, 16)
		unsubscribe := s.Subscribe(func(n mcp.Notification) {
			if n.Method == mcp.NotificationMessage {
				select {
				case logs <- n:
				default:
				}
			}
		})
		defer unsubscribe()
		// The server sends one log message at once, then one every 5 s,
		// until the tool is called again.
		call(t, ctx, s, "toggle-simulated-logging", `{}`)
		defer call(t, ctx, s, "toggle-simulated-logging", `{}`)
		select {
		case n := <-logs:
			var p struct {
				Level string          `json:"level"`
				Data  json.RawMessage `json:"data"`
			}
			if err := json.Unmarshal(n.Params, &p); err != nil || p.Level == "" {
				t.Errorf("log notification params %s: %v", n.Params, err)
			}
		case <-ctx.Done():
			t.Fatal("no notifications/message arrived over the bridge")
		}
	})

	t.Run("Progress", func(t *testing.T) {
		rec := newProgressRecorder(8)
		call(t, rec.context(ctx), s, "trigger-long-running-operation", `{"duration":0.1,"steps":2}`)
		checkProgress(t, rec.wait(t, ctx, 2), 2)
	})

	t.Run("Sampling", func(t *testing.T) {
		res := call(t, ctx, s, "trigger-sampling-request", `{"prompt":"what is tako?","maxTokens":42}`)
		prompt, _ := model.lastPrompt(t)
		if !strings.Contains(prompt, "what is tako?") {
			t.Errorf("sampling prompt %q does not contain the tool's prompt", prompt)
		}
		if !strings.Contains(res.Text(), fakeModelReply) {
			t.Errorf("tool result %q does not contain the sampled answer %q", res.Text(), fakeModelReply)
		}
	})

	t.Run("Roots", func(t *testing.T) {
		res := call(t, ctx, s, "get-roots-list", `{}`)
		if !strings.Contains(res.Text(), testRoots[0].URI) {
			t.Errorf("get-roots-list result %q does not contain %q", res.Text(), testRoots[0].URI)
		}
		if roots.calls.Load() == 0 {
			t.Error("the roots handler was never called")
		}
	})
}

// TestWebSocketBridgeClientsAreSeparate: two clients get two subprocesses,
// and one leaving does not disturb the other.
func TestWebSocketBridgeClientsAreSeparate(t *testing.T) {
	command, args := everything(t)
	url, started := stdioBridge(t, command, args)
	ctx := testContext(t)
	a := connectWS(t, ctx, url, nil)
	pa := <-started
	conn, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	pb := <-started
	if pa.pid == pb.pid {
		t.Fatalf("both clients share subprocess %d", pa.pid)
	}
	b.Close()
	select {
	case <-pb.closed:
	case <-ctx.Done():
		t.Fatal("the second client's subprocess was not closed")
	}
	res := call(t, ctx, a, "echo", `{"message":"still here"}`)
	if res.Text() != "Echo: still here" {
		t.Errorf("echo: %q", res.Text())
	}
}

// TestWebSocketBridgeTypeScriptClient: the TypeScript SDK 1.x
// WebSocketClientTransport lists and calls a tool through tako's bridge.
func TestWebSocketBridgeTypeScriptClient(t *testing.T) {
	command, args := everything(t) // checks node and the npm peers
	sdk, err := filepath.Abs(filepath.Join("..", "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "client", "websocket.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sdk); err != nil {
		requireInstalled(t, sdk+" is missing: run `npm ci` in the repository root (it installs @modelcontextprotocol/sdk 1.x as pinned)")
	}
	url, _ := stdioBridge(t, command, args)
	ctx := testContext(t)

	// Node 20 has a global WebSocket only behind a flag; Node 22 has it by
	// default.
	nodeArgs := []string{}
	if exec.CommandContext(ctx, command, "-e", "process.exit(typeof WebSocket === 'undefined' ? 1 : 0)").Run() != nil {
		nodeArgs = append(nodeArgs, "--experimental-websocket")
	}
	nodeArgs = append(nodeArgs, filepath.Join("websocket", "sdk-client.mjs"), url)
	cmd := exec.CommandContext(ctx, command, nodeArgs...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %v: %v\nstderr:\n%s", nodeArgs, err, stderr.String())
	}
	var got struct {
		Tools  []string `json:"tools"`
		Echo   string   `json:"echo"`
		Server string   `json:"server"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	for _, want := range []string{"echo", "get-sum"} {
		if !slices.Contains(got.Tools, want) {
			t.Errorf("the TypeScript client listed %v, without %q", got.Tools, want)
		}
	}
	if got.Echo != "Echo: hello over websocket" {
		t.Errorf("the TypeScript client's echo: %q", got.Echo)
	}
	if got.Server != everythingName {
		t.Errorf("server name %q, want %q", got.Server, everythingName)
	}
}

// TestWebSocketBridgeBackendCannotStart: a bridge whose server cannot be
// started closes the new connection with code 1011 and a reason (the
// backend starts only once the upgrade succeeded), which the client's
// first call reports.
func TestWebSocketBridgeBackendCannotStart(t *testing.T) {
	url, _ := stdioBridge(t, "/nonexistent/tako-no-such-server", nil)
	conn, err := websocket.Dial(testContext(t), url, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	_, err = transport.Connect(testContext(t), conn, nil)
	if !errors.Is(err, transport.ErrConnectionLost) || !strings.Contains(err.Error(), "1011") || !strings.Contains(err.Error(), "could not be started") {
		t.Fatalf("connect: %v, want the connection lost with code 1011 and the reason", err)
	}
}
