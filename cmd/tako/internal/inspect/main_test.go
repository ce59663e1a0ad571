package inspect

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tako-mcp/tako/dial"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/stdio"
)

// serverEnv, set in the environment of the test binary, makes it an MCP
// server on stdio (mcptest's reference tools) instead of running tests:
// the tests reach it as a person's server, a real subprocess. startsEnv
// names a file it appends a line to as it starts, so that a test can count
// the servers started.
const (
	serverEnv = "TAKO_INSPECT_TEST_SERVER"
	startsEnv = "TAKO_INSPECT_TEST_STARTS"
)

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) != "" {
		os.Exit(serveStdio())
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

func serveStdio() int {
	if f := os.Getenv(startsEnv); f != "" {
		w, err := os.OpenFile(f, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return 5
		}
		fmt.Fprintf(w, "%d\n", os.Getpid())
		w.Close()
	}
	srv := mcptest.NewReference(mcptest.Options{DisableRecording: true})
	conn := stdio.NewStreamConn(os.Stdin, os.Stdout, stdio.StreamOptions{})
	if err := srv.Serve(context.Background(), conn); err != nil {
		return 1
	}
	return 0
}

// testServer is the test binary as a stdio server; starts, when not
// empty, is the file its starts are counted in.
func testServer(t *testing.T, starts string) dial.Server {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := dial.Server{Name: "ref", Command: exe, Env: []string{serverEnv + "=1"}}
	if starts != "" {
		s.Env = append(s.Env, startsEnv+"="+starts)
	}
	return s
}

// countStarts is how many servers started with that file.
func countStarts(file string) int {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	return len(strings.Fields(string(b)))
}

// testClient bounds every request of a test (an event stream answered
// where a refusal was due would otherwise never end).
var testClient = &http.Client{Timeout: 30 * time.Second}

// running is an inspector serving on loopback for a test.
type running struct {
	ins  *Inspector
	base string
	done chan error
}

// start runs an inspector with cfg until the test ends, and returns once
// it printed its URL, as a person would wait for it: by then it has added
// cfg.Servers (returning once it listened let a test ask for s1 before it
// was there, seen as a 404 in TestProgressAndCancel and
// TestShutdownEndsEverything). Its Run must return nil after the test's
// cancel.
func start(t *testing.T, cfg *Config) *running {
	t.Helper()
	cfg.NoBrowser = true
	printed := make(chan struct{})
	var once sync.Once
	out := cfg.Out
	if out == nil {
		out = io.Discard
	}
	cfg.Out = writerFunc(func(b []byte) (int, error) {
		once.Do(func() { close(printed) })
		return out.Write(b)
	})
	ins, err := newInspector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{ins: ins, base: "http://" + ln.Addr().String(), done: make(chan error, 1)}
	go func() { r.done <- ins.serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-r.done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("the inspector did not shut down within 20 s")
		}
	})
	select {
	case <-printed:
	case <-time.After(20 * time.Second):
		t.Fatal("the inspector printed no URL within 20 s")
	}
	return r
}

// req sends a request; hdr are "Name: value" lines; body, when not nil,
// is sent as JSON.
func (r *running) req(t *testing.T, method, path string, body any, hdr ...string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	req, err := http.NewRequest(method, r.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range hdr {
		k, v, _ := strings.Cut(h, ": ")
		if strings.EqualFold(k, "Host") {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// api is req with the token, decoding a 200's JSON into v.
func (r *running) api(t *testing.T, method, path string, body, v any) {
	t.Helper()
	code, b := r.req(t, method, path, body, "Authorization: Bearer "+r.ins.token)
	if code != http.StatusOK {
		t.Fatalf("%s %s: HTTP %d %s", method, path, code, b)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s %s: %v (%s)", method, path, err, b)
		}
	}
}

// stream is the page's event stream, read by the test.
type stream struct {
	events chan streamEvent
	cancel context.CancelFunc
	done   chan struct{}
}

type streamEvent struct {
	Type string
	Data json.RawMessage
}

func (r *running) follow(t *testing.T) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", r.base+"/api/events?token="+r.ins.token, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		cancel()
		t.Fatalf("events: HTTP %d", resp.StatusCode)
	}
	s := &stream{events: make(chan streamEvent, 4096), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		var ev streamEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.Type = line[7:]
			case strings.HasPrefix(line, "data: "):
				ev.Data = json.RawMessage(line[6:])
			case line == "" && ev.Type != "":
				select {
				case s.events <- ev:
				default:
				}
				ev = streamEvent{}
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-s.done })
	return s
}

// wait returns the first event of type typ for which match is true,
// failing the test after 30 s.
func (s *stream) wait(t *testing.T, typ string, match func(json.RawMessage) bool) json.RawMessage {
	t.Helper()
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	for {
		select {
		case ev := <-s.events:
			if ev.Type == typ && (match == nil || match(ev.Data)) {
				return ev.Data
			}
		case <-timer.C:
			t.Fatalf("no %s event within 30 s", typ)
		}
	}
}

// connected waits for the server id to be connected.
func (s *stream) connected(t *testing.T, r *running, id string) {
	t.Helper()
	var sum summary
	r.api(t, "GET", "/api/servers/"+id, nil, &sum)
	if sum.State == stateConnected {
		return
	}
	s.wait(t, "server", func(d json.RawMessage) bool {
		var sum summary
		json.Unmarshal(d, &sum)
		if sum.ID == id && sum.State == stateFailed {
			t.Fatalf("%s failed: %s", id, sum.Error)
		}
		return sum.ID == id && sum.State == stateConnected
	})
}

// runEnded waits for the run id to end and returns it.
func (s *stream) runEnded(t *testing.T, id string) run {
	t.Helper()
	var out run
	s.wait(t, "run", func(d json.RawMessage) bool {
		json.Unmarshal(d, &out)
		return out.ID == id && out.State != "running"
	})
	return out
}

// textOf is the first text block of a run's view.
func textOf(t *testing.T, r run) string {
	t.Helper()
	var res mcp.CallToolResult
	if err := json.Unmarshal(r.View, &res); err != nil {
		t.Fatalf("the run's view: %v (%s)", err, r.View)
	}
	text, _ := res.FirstText()
	return text
}
