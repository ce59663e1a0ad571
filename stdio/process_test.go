//go:build unix

package stdio_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tako-mcp/tako/internal/syncbuf"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
)

func TestRoundTrip(t *testing.T) {
	c := startServer(t, "echo", stdio.Options{})
	for i, id := range []mcp.ID{mcp.Int64ID(1), mcp.StringID("two"), mcp.Int64ID(-3)} {
		params := fmt.Sprintf(`{"n":%d,"text":"line\nbreak \u2028 \"quoted\""}`, i)
		m := mustCall(t, c, id, "echo", json.RawMessage(params))
		if !jsonEqual(m.Result, []byte(params)) {
			t.Errorf("result %s, want %s", m.Result, params)
		}
	}
	if c.Pid() <= 0 {
		t.Errorf("Pid() = %d", c.Pid())
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && fmt.Sprint(x) == fmt.Sprint(y)
}

// A 16 MiB message goes both ways intact: no line-length limit short of
// MaxMessageSize (the official Go SDK fails this one).
func TestMessage16MiB(t *testing.T) {
	c := startServer(t, "echo", stdio.Options{})
	var data strings.Builder
	for data.Len() < 16<<20 {
		data.WriteString("0123456789 \"quoted\" \\ back\nslash é ")
	}
	params, err := json.Marshal(map[string]string{"data": data.String()})
	if err != nil {
		t.Fatal(err)
	}
	m := mustCall(t, c, mcp.Int64ID(1), "echo", json.RawMessage(params))
	if !bytes.Equal(m.Result, params) {
		t.Fatalf("result of %d bytes differs from the %d bytes sent", len(m.Result), len(params))
	}
}

// A line over the cap is discarded as it streams past; Read reports it as a
// MessageError carrying the id of the response it was, wherever the id
// stands, and the connection reads on.
func TestOverCapLine(t *testing.T) {
	const limit = 1 << 20
	for _, tc := range []struct {
		name   string
		id     mcp.ID
		idLast bool
		size   int
	}{
		{"id first", mcp.Int64ID(7), false, 3 << 20},
		{"id last", mcp.StringID("big \"one\""), true, 3 << 20},
		{"just over, buffered", mcp.Int64ID(8), true, limit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startServer(t, "echo", stdio.Options{MaxMessageSize: limit})
			_, err := call(t, c, tc.id, "huge", serverParams{Size: tc.size, IDLast: tc.idLast})
			var me *transport.MessageError
			if !errors.As(err, &me) {
				t.Fatalf("Read: %v, want a *transport.MessageError", err)
			}
			if me.ID != tc.id {
				t.Errorf("MessageError.ID = %s, want %s", me.ID, tc.id)
			}
			if !errors.Is(err, transport.ErrMessageTooLarge) {
				t.Errorf("error %v does not wrap ErrMessageTooLarge", err)
			}
			var te *stdio.TooLargeError
			if !errors.As(err, &te) || te.Limit != limit || te.Size <= limit || te.Request {
				t.Errorf("TooLargeError = %+v", te)
			}
			if !strings.Contains(err.Error(), "limit") {
				t.Errorf("error %q does not mention the limit", err)
			}
			m := mustCall(t, c, mcp.Int64ID(100), "echo", json.RawMessage(`{"after":true}`))
			if string(m.Result) != `{"after":true}` {
				t.Errorf("next result %s", m.Result)
			}
		})
	}
	t.Run("under the cap", func(t *testing.T) {
		c := startServer(t, "echo", stdio.Options{MaxMessageSize: limit})
		m := mustCall(t, c, mcp.Int64ID(9), "huge", serverParams{Size: limit - 1000})
		if len(m.Result) < limit-2000 {
			t.Errorf("result of %d bytes", len(m.Result))
		}
	})
}

func TestJunkLinesSkipped(t *testing.T) {
	var logs syncbuf.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c := startServer(t, "echo", stdio.Options{Logger: logger})
	m := mustCall(t, c, mcp.Int64ID(1), "junk", nil)
	if string(m.Result) != "{}" {
		t.Errorf("result %s", m.Result)
	}
	out := logs.String()
	if n := strings.Count(out, "level=WARN"); n != 3 {
		t.Errorf("%d warnings, want 3 (two non-JSON lines, one JSON line that is not JSON-RPC):\n%s", n, out)
	}
	if !strings.Contains(out, "this line is not JSON") {
		t.Errorf("log does not show the skipped line:\n%s", out)
	}
}

func TestBatchLine(t *testing.T) {
	c := startServer(t, "echo", stdio.Options{})
	m := mustCall(t, c, mcp.Int64ID(5), "batch", nil)
	if string(m.Result) != `{"batched":true}` {
		t.Errorf("first batch element %+v", m)
	}
	n, err := c.Read(context.Background())
	if err != nil || n.Method != "notifications/message" {
		t.Errorf("second batch element %+v, %v", n, err)
	}
}

// The server exits on its own: Read delivers what it wrote last, then an
// *ExitError with its status and stderr; Write then fails the same way.
func TestServerExit(t *testing.T) {
	var logs syncbuf.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := startServer(t, "echo", stdio.Options{Logger: logger})
	ctx := context.Background()
	stderr := "starting\nfatal: boom\n"
	if err := c.Write(ctx, request(t, mcp.Int64ID(1), "die", serverParams{Code: 3, Stderr: stderr})); err != nil {
		t.Fatal(err)
	}
	m, err := c.Read(ctx)
	if err != nil || m.Method != "notifications/message" {
		t.Fatalf("Read = %+v, %v; want the server's last notification", m, err)
	}
	_, err = c.Read(ctx)
	var ee *stdio.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("Read: %v, want *stdio.ExitError", err)
	}
	if !errors.Is(err, transport.ErrConnectionLost) {
		t.Errorf("%v does not wrap ErrConnectionLost", err)
	}
	if ee.ExitCode != 3 || ee.Signal != "" || ee.Stderr != stderr {
		t.Errorf("ExitError = %+v", ee)
	}
	if msg := ee.Error(); !strings.Contains(msg, "status 3") || !strings.Contains(msg, "fatal: boom") || strings.Contains(msg, "\n") {
		t.Errorf("Error() = %q", msg)
	}
	if c.Stderr() != stderr {
		t.Errorf("Stderr() = %q", c.Stderr())
	}
	if err := c.Write(ctx, request(t, mcp.Int64ID(2), "echo", nil)); !errors.As(err, &ee) {
		t.Errorf("Write after exit: %v, want the *ExitError", err)
	}
	if _, err := c.Read(ctx); !errors.As(err, &ee) {
		t.Errorf("second Read after exit: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := c.Read(ctx); !errors.As(err, &ee) {
		t.Errorf("Read after Close of a dead server: %v, want the *ExitError", err)
	}
	if !strings.Contains(logs.String(), `line="fatal: boom"`) {
		t.Errorf("stderr lines not logged at Debug:\n%s", logs.String())
	}
}

func TestStderrLimit(t *testing.T) {
	c := startServer(t, "echo", stdio.Options{StderrLimit: 1000})
	big := strings.Repeat("x", 10000) + "the end\n"
	if err := c.Write(context.Background(), request(t, mcp.Int64ID(1), "die", serverParams{Code: 1, Stderr: big})); err != nil {
		t.Fatal(err)
	}
	var err error
	for err == nil {
		_, err = c.Read(context.Background())
	}
	var ee *stdio.ExitError
	if !errors.As(err, &ee) {
		t.Fatal(err)
	}
	if ee.Stderr != big[len(big)-1000:] {
		t.Errorf("Stderr has %d bytes ending %q", len(ee.Stderr), ee.Stderr[max(0, len(ee.Stderr)-20):])
	}
}

// The server is killed while a Read waits: the Read returns the
// *ExitError at once (the issue asks for 100 ms; the assertion allows 1 s
// for loaded machines, and the test logs the measured figures).
func TestKilledWhileReading(t *testing.T) {
	const runs = 10
	var lat []time.Duration
	for range runs {
		c := startServer(t, "echo", stdio.Options{})
		mustCall(t, c, mcp.Int64ID(1), "echo", nil) // it is up and serving
		done := make(chan error, 1)
		go func() {
			_, err := c.Read(context.Background())
			done <- err
		}()
		start := time.Now()
		if err := syscall.Kill(c.Pid(), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		err := <-done
		lat = append(lat, time.Since(start))
		var ee *stdio.ExitError
		if !errors.As(err, &ee) || ee.Signal != "SIGKILL" || ee.ExitCode != -1 {
			t.Fatalf("Read: %v (%+v), want an ExitError for SIGKILL", err, ee)
		}
		if !strings.Contains(err.Error(), "killed by SIGKILL") {
			t.Errorf("Error() = %q", err)
		}
		_ = c.Close()
	}
	slices.Sort(lat)
	t.Logf("death detection latency over %d runs: min %v, median %v, max %v", runs, lat[0], lat[runs/2], lat[runs-1])
	if lat[runs-1] > time.Second {
		t.Errorf("a pending Read took %v to notice the death", lat[runs-1])
	}
}

// A grandchild that holds the server's stdout (as npx's child does) does
// not delay the ExitError: the rest of the group is killed on exit.
func TestGrandchildDoesNotHoldStdout(t *testing.T) {
	for _, setsid := range []bool{false, true} {
		t.Run(fmt.Sprintf("setsid=%v", setsid), func(t *testing.T) {
			c := startServer(t, "echo", stdio.Options{})
			gpid := spawnGrandchild(t, c, setsid)
			if setsid {
				// It left the group, so only the read deadline ends the
				// pipe; the test cleans up after it.
				t.Cleanup(func() { _ = syscall.Kill(gpid, syscall.SIGKILL); reap(gpid) })
			}
			start := time.Now()
			if err := c.Write(context.Background(), request(t, mcp.Int64ID(2), "die", serverParams{Code: 0})); err != nil {
				t.Fatal(err)
			}
			var err error
			for err == nil {
				_, err = c.Read(context.Background())
			}
			elapsed := time.Since(start)
			var ee *stdio.ExitError
			if !errors.As(err, &ee) || ee.ExitCode != 0 {
				t.Fatalf("Read: %v", err)
			}
			t.Logf("ExitError after %v", elapsed)
			if elapsed > time.Second {
				t.Errorf("ExitError took %v", elapsed)
			}
			if !setsid {
				if status, ok := reap(gpid); !ok || !status.Signaled() || status.Signal() != syscall.SIGKILL {
					t.Errorf("grandchild: reaped %v, status %v; want killed by SIGKILL", ok, status)
				}
			}
		})
	}
}

// After Close no process of the server's group remains, grandchildren
// included.
func TestCloseKillsGrandchild(t *testing.T) {
	c := startServer(t, "echo", stdio.Options{})
	pgid := c.Pid()
	gpid := spawnGrandchild(t, c, false)
	if g, err := syscall.Getpgid(gpid); err != nil || g != pgid {
		t.Fatalf("grandchild's group %d, %v; want %d", g, err, pgid)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if status, ok := reap(gpid); !ok || !status.Signaled() || status.Signal() != syscall.SIGKILL {
		t.Errorf("grandchild: reaped %v, status %v; want killed by SIGKILL", ok, status)
	}
	if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("kill(-%d, 0) = %v after Close, want ESRCH", pgid, err)
	}
}

// A server that ignores both the end of stdin and SIGTERM is SIGKILLed,
// and Close returns within its bound.
func TestCloseStubbornServer(t *testing.T) {
	const grace = 100 * time.Millisecond
	c := startServer(t, "stubborn", stdio.Options{StdinGrace: grace, TermGrace: grace})
	mustCall(t, c, mcp.Int64ID(1), "echo", nil) // SIGTERM is ignored from here on
	start := time.Now()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	t.Logf("Close of a stubborn server took %v (graces 2×%v)", elapsed, grace)
	if elapsed < 2*grace || elapsed > 2*grace+time.Second {
		t.Errorf("Close took %v, want about %v", elapsed, 2*grace)
	}
	if err := syscall.Kill(c.Pid(), 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("server still there after Close: %v", err)
	}
}

// A well-behaved server exits when its stdin closes, well inside
// StdinGrace, and Close returns then.
func TestCloseGraceful(t *testing.T) {
	c := startServer(t, "echo", stdio.Options{StdinGrace: 10 * time.Second})
	mustCall(t, c, mcp.Int64ID(1), "echo", nil)
	start := time.Now()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("Close took %v; the server should have exited on EOF", elapsed)
	}
	t.Logf("Close of a server that exits on EOF took %v", time.Since(start))
}

func TestCloseTwiceAndConcurrently(t *testing.T) {
	c := startServer(t, "echo", stdio.Options{})
	readErr := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		readErr <- err
	}()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.Close()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Close #%d: %v", i, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close again: %v", err)
	}
	if err := <-readErr; !errors.Is(err, transport.ErrClosed) {
		t.Errorf("pending Read: %v, want ErrClosed", err)
	}
	if _, err := c.Read(context.Background()); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Read after Close: %v", err)
	}
	if err := c.Write(context.Background(), request(t, mcp.Int64ID(1), "echo", nil)); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Write after Close: %v", err)
	}
}

func TestStartCommandNotFound(t *testing.T) {
	_, err := stdio.Start(context.Background(), &stdio.Options{Command: "tako-no-such-command-3f9a"})
	if !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("Start: %v, want exec.ErrNotFound", err)
	}
	_, err = stdio.Start(context.Background(), &stdio.Options{Command: "/nonexistent/tako-server"})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Start of a missing path: %v, want fs.ErrNotExist", err)
	}
	if _, err := stdio.Start(context.Background(), &stdio.Options{}); err == nil {
		t.Error("Start with no command succeeded")
	}
}

func TestEnvAndDir(t *testing.T) {
	t.Setenv("TAKO_STDIO_TEST_VAR", "parent")
	t.Setenv("TAKO_STDIO_TEST_INHERITED", "inherited")
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := startServer(t, "echo", stdio.Options{Env: []string{"TAKO_STDIO_TEST_VAR=child"}, Dir: dir})
	m := mustCall(t, c, mcp.StringID("cwd"), "cwd", nil)
	if want, _ := json.Marshal(map[string]string{"value": dir}); string(m.Result) != string(want) {
		t.Errorf("cwd: %s, want %s", m.Result, want)
	}
	for name, want := range map[string]string{"TAKO_STDIO_TEST_VAR": "child", "TAKO_STDIO_TEST_INHERITED": "inherited"} {
		m := mustCall(t, c, mcp.StringID(name), "env", serverParams{Name: name})
		var got struct{ Value string }
		if err := json.Unmarshal(m.Result, &got); err != nil || got.Value != want {
			t.Errorf("%s in the child = %q (%v), want %q", name, got.Value, err, want)
		}
	}
}

// Many goroutines write at once; every line arrives whole.
func TestConcurrentWrites(t *testing.T) {
	c := startServer(t, "echo", stdio.Options{})
	const writers, each = 8, 200
	ctx := context.Background()
	results := make(map[int64]string)
	readDone := make(chan error, 1)
	go func() {
		for len(results) < writers*each {
			m, err := c.Read(ctx)
			if err != nil {
				readDone <- err
				return
			}
			n, _ := m.ID.Int64()
			results[n] = string(m.Result)
		}
		readDone <- nil
	}()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				n := int64(w*each + i)
				params := fmt.Sprintf(`{"n":%d,"pad":%q}`, n, strings.Repeat("p", int(n%97)*50))
				if err := c.Write(ctx, request(t, mcp.Int64ID(n), "echo", json.RawMessage(params))); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := <-readDone; err != nil {
		t.Fatal(err)
	}
	for n, r := range results {
		if !strings.HasPrefix(r, fmt.Sprintf(`{"n":%d,`, n)) {
			t.Fatalf("response %d carries %.40s", n, r)
		}
	}
}

// A server that never reads stdin fills the pipe; Write then honours its
// context, and Close still ends everything.
func TestWriteHonoursContext(t *testing.T) {
	c := startServer(t, "deaf", stdio.Options{StdinGrace: 50 * time.Millisecond, TermGrace: 50 * time.Millisecond})
	big := json.RawMessage(`{"data":"` + strings.Repeat("x", 4<<20) + `"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := c.Write(ctx, request(t, mcp.Int64ID(1), "echo", big))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Write to a full pipe: %v, want DeadlineExceeded", err)
	}
	// A second writer waiting for its turn gives up by its own context too.
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if err := c.Write(ctx2, request(t, mcp.Int64ID(2), "echo", nil)); !errors.Is(err, context.Canceled) {
		t.Errorf("Write with a cancelled context: %v", err)
	}
	// A Write blocked with no deadline is ended by Close.
	wrote := make(chan error, 1)
	go func() { wrote <- c.Write(context.Background(), request(t, mcp.Int64ID(3), "echo", big)) }()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Write blocked during Close: %v, want ErrClosed", err)
	}
}

// spawnGrandchild has the server start a sleeping child of its own that
// holds the server's stdout and stderr, and returns its pid.
func spawnGrandchild(t *testing.T, c *stdio.Conn, setsid bool) int {
	t.Helper()
	setSubreaper(t)
	m := mustCall(t, c, mcp.Int64ID(1), "spawn", serverParams{Setsid: setsid})
	var r struct{ Pid int }
	if err := json.Unmarshal(m.Result, &r); err != nil || r.Pid <= 0 {
		t.Fatalf("spawn: %s, %v", m.Result, err)
	}
	return r.Pid
}

// A server that closes its stdin but lives on: a Write gets EPIPE, which
// is an error wrapping ErrConnectionLost (and no SIGPIPE kills us: Go
// ignores it for descriptors other than 1 and 2).
func TestServerClosesStdin(t *testing.T) {
	c := startServer(t, "closestdin", stdio.Options{StdinGrace: -1, TermGrace: 100 * time.Millisecond})
	ctx := context.Background()
	if m, err := c.Read(ctx); err != nil || m.Method != "notifications/message" {
		t.Fatalf("Read: %+v, %v", m, err)
	}
	err := c.Write(ctx, request(t, mcp.Int64ID(1), "echo", nil))
	if !errors.Is(err, transport.ErrConnectionLost) || !errors.Is(err, syscall.EPIPE) {
		t.Errorf("Write: %v, want ErrConnectionLost and EPIPE", err)
	}
}

// A server that closes its stdout but lives on: Read ends with an error
// wrapping ErrConnectionLost (not an ExitError: it has not exited).
func TestServerClosesStdout(t *testing.T) {
	c := startServer(t, "closestdout", stdio.Options{StdinGrace: -1, TermGrace: 100 * time.Millisecond})
	ctx := context.Background()
	if m, err := c.Read(ctx); err != nil || m.Method != "notifications/message" {
		t.Fatalf("Read: %+v, %v", m, err)
	}
	_, err := c.Read(ctx)
	var ee *stdio.ExitError
	if !errors.Is(err, transport.ErrConnectionLost) || errors.As(err, &ee) {
		t.Errorf("Read: %v, want ErrConnectionLost", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}
