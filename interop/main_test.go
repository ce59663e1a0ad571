package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
)

// peerBin is the directory TestMain builds the Go peers into.
var peerBin string

// TestMain builds the Go peer servers once for every test, runs the tests,
// and then checks that no goroutine outlived them (every Session and stdio
// Conn must end its goroutines on Close).
func TestMain(m *testing.M) {
	if os.Getenv(touchClientEnv) != "" {
		os.Exit(touchClient(os.Args[1:]))
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "tako-interop-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "interop:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	// go test puts its own toolchain first on PATH, so "go" is the one
	// running these tests.
	// everything-server is the official Go SDK's own conformance server,
	// built from the module cache at the pinned version.
	build := exec.Command("go", "build", "-o", dir+string(os.PathSeparator), "./servers/gosdk", "./servers/mcpgo",
		"github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "interop: building the Go peers:", err)
		return 1
	}
	peerBin = dir

	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "interop: goroutines left behind:", err)
			return 1
		}
	}
	return code
}

// testContext bounds a whole test, so that a peer that hangs fails the test
// instead of the run. Its cancel is registered before any Session's Close,
// and cleanups run last-in first-out, so sessions close first.
func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// connect starts command as a stdio MCP server and runs tako's handshake
// against it. The session is closed when the test ends, and a Close error
// fails the test.
func connect(t *testing.T, ctx context.Context, command string, args []string, opts *transport.Options) *transport.Session {
	t.Helper()
	conn, err := stdio.Start(ctx, &stdio.Options{Command: command, Args: args})
	if err != nil {
		t.Fatalf("start %s %v: %v", command, args, err)
	}
	s, err := transport.Connect(ctx, conn, opts)
	if err != nil {
		t.Fatalf("connect to %s %v: %v", command, args, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close session with %s: %v", command, err)
		}
	})
	return s
}

// requireInstalled stops a test whose peer is not installed. Under CI it
// fails, saying what to install, because a CI run that skips its interop
// tests proves nothing; elsewhere it skips with the same explanation.
func requireInstalled(t *testing.T, msg string) {
	t.Helper()
	mcptest.SkipOrFail(t, msg)
}

// everything returns the command that runs the TypeScript reference server
// in stdio mode. It runs the installed script with node directly rather than
// through npx, which would resolve the package again on every start.
func everything(t *testing.T) (command string, args []string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		requireInstalled(t, "node is not on PATH: install Node.js 20 or later, then run `npm ci` in the repository root")
	}
	script, err := filepath.Abs(filepath.Join("..", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		requireInstalled(t, script+" is missing: run `npm ci` in the repository root (it installs the version pinned in package-lock.json)")
	}
	return node, []string{script, "stdio"}
}

// toolNames returns the names of tools, sorted.
func toolNames(tools []mcp.Tool) []string {
	names := make([]string, len(tools))
	for i := range tools {
		names[i] = tools[i].Name
	}
	slices.Sort(names)
	return names
}

// requireTools fails t unless every name in want is among tools, and every
// tool has an input schema that is a JSON object.
func requireTools(t *testing.T, tools []mcp.Tool, want ...string) {
	t.Helper()
	names := toolNames(tools)
	for _, w := range want {
		if !slices.Contains(names, w) {
			t.Errorf("tools/list lacks %q; got %v", w, names)
		}
	}
	for _, tool := range tools {
		var schema map[string]any
		if err := json.Unmarshal(tool.InputSchema, &schema); err != nil {
			t.Errorf("tool %q: inputSchema is not a JSON object: %v (%s)", tool.Name, err, tool.InputSchema)
		}
	}
}

// call calls a tool with arguments given as JSON text and fails the test on
// a protocol error or a tool error.
func call(t *testing.T, ctx context.Context, s *transport.Session, name, args string) *mcp.CallToolResult {
	t.Helper()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("call %s %s: %v", name, args, err)
	}
	if res.IsError {
		t.Fatalf("call %s %s: tool error: %s", name, args, res.Text())
	}
	return res
}

// progressRecorder collects the progress notifications of one call. The
// session delivers them on its event goroutine, which may run after the call
// has returned, so tests wait for them on the channel rather than reading a
// counter.
type progressRecorder struct {
	ch chan mcp.ProgressParams
}

func newProgressRecorder(capacity int) *progressRecorder {
	return &progressRecorder{ch: make(chan mcp.ProgressParams, capacity)}
}

// context returns ctx with r as its progress callback. A notification beyond
// the channel's capacity is dropped rather than blocking the session.
func (r *progressRecorder) context(ctx context.Context) context.Context {
	return transport.WithProgress(ctx, func(p mcp.ProgressParams) {
		select {
		case r.ch <- p:
		default:
		}
	})
}

// wait returns the first n notifications, failing the test if ctx ends first.
func (r *progressRecorder) wait(t *testing.T, ctx context.Context, n int) []mcp.ProgressParams {
	t.Helper()
	got := make([]mcp.ProgressParams, 0, n)
	for len(got) < n {
		select {
		case p := <-r.ch:
			got = append(got, p)
		case <-ctx.Done():
			t.Fatalf("got %d progress notifications, want %d: %v", len(got), n, ctx.Err())
		}
	}
	return got
}

// drain returns the notifications received so far without waiting.
func (r *progressRecorder) drain() []mcp.ProgressParams {
	var got []mcp.ProgressParams
	for {
		select {
		case p := <-r.ch:
			got = append(got, p)
		default:
			return got
		}
	}
}

// checkProgress fails t unless progress increases and every notification
// carries the expected total.
func checkProgress(t *testing.T, got []mcp.ProgressParams, total float64) {
	t.Helper()
	last := 0.0
	for i, p := range got {
		if p.Progress <= last {
			t.Errorf("progress notification %d: progress %v does not increase (previous %v)", i, p.Progress, last)
		}
		last = p.Progress
		if p.Total == nil || *p.Total != total {
			t.Errorf("progress notification %d: total %v, want %v", i, p.Total, total)
		}
	}
}

// fakeModel answers sampling requests for the tests and remembers what it
// was asked.
type fakeModel struct {
	mu       sync.Mutex
	requests []*mcp.CreateMessageParams
}

const (
	fakeModelName  = "tako-fake-model"
	fakeModelReply = "sampled by tako"
)

func (m *fakeModel) sample(_ context.Context, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	m.mu.Lock()
	m.requests = append(m.requests, req)
	m.mu.Unlock()
	return &mcp.CreateMessageResult{
		Role:       "assistant",
		Content:    json.RawMessage(`{"type":"text","text":"` + fakeModelReply + `"}`),
		Model:      fakeModelName,
		StopReason: mcp.StopEndTurn,
	}, nil
}

// lastPrompt returns the text of the last sampling request's first message.
func (m *fakeModel) lastPrompt(t *testing.T) (prompt string, req *mcp.CreateMessageParams) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.requests) == 0 {
		t.Fatal("the sampling handler was never called")
	}
	req = m.requests[len(m.requests)-1]
	if len(req.Messages) == 0 {
		t.Fatal("sampling request has no messages")
	}
	blocks, err := req.Messages[0].Blocks()
	if err != nil {
		t.Fatalf("sampling request: decode message content: %v (%s)", err, req.Messages[0].Content)
	}
	if len(blocks) == 0 || blocks[0].Type != mcp.ContentText {
		t.Fatalf("sampling request: first message is not text: %s", req.Messages[0].Content)
	}
	return blocks[0].Text, req
}

// testRoots are the roots the tests' Roots handler reports.
var testRoots = []mcp.Root{{URI: "file:///tmp/tako-interop-root", Name: "tako interop"}}

// rootsClient answers roots/list for the tests and counts the requests.
type rootsClient struct {
	calls atomic.Int32
}

func (r *rootsClient) list(context.Context) ([]mcp.Root, error) {
	r.calls.Add(1)
	return testRoots, nil
}
