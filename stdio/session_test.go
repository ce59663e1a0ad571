//go:build unix

package stdio_test

// Tests of the whole client (Session over a stdio Conn) against a real
// subprocess: the demo server, built once from examples/demo-server.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tako-mcp/tako/internal/testserve"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
)

var demo struct {
	once sync.Once
	path string
	err  error
}

// demoServer builds examples/demo-server once per test binary.
func demoServer(t testing.TB) string {
	t.Helper()
	demo.once.Do(func() {
		dir, err := os.MkdirTemp("", "tako-demo-")
		if err != nil {
			demo.err = err
			return
		}
		demo.path, demo.err = testserve.BuildDemoServer(dir)
	})
	if demo.err != nil {
		t.Fatal(demo.err)
	}
	return demo.path
}

func startSession(t testing.TB, opts stdio.Options, topts *transport.Options) (*transport.Session, *stdio.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := stdio.Start(ctx, &opts)
	if err != nil {
		t.Fatal(err)
	}
	s, err := transport.Connect(ctx, conn, topts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, conn
}

// groupGone reports whether no process of the group led by pid is left.
func groupGone(pid int) bool {
	return errors.Is(syscall.Kill(-pid, 0), syscall.ESRCH)
}

func TestSessionThousandConcurrentCalls(t *testing.T) {
	s, _ := startSession(t, stdio.Options{Command: demoServer(t)}, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for i := range 1000 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg := fmt.Sprintf("call %d", i)
			args, _ := json.Marshal(map[string]string{"message": msg})
			res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: args})
			switch {
			case err != nil:
				errs <- err
			case res.Text() != msg:
				errs <- fmt.Errorf("call %d answered %q", i, res.Text())
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestSessionServerKilledMidCall(t *testing.T) {
	for _, version := range []string{"", mcp.Version20251125} {
		t.Run("version="+version, func(t *testing.T) {
			s, conn := startSession(t, stdio.Options{Command: demoServer(t)}, &transport.Options{ProtocolVersion: version})
			const calls = 20
			errs := make(chan error, calls)
			var started sync.WaitGroup
			for range calls {
				started.Add(1)
				go func() {
					// The server announces each call with a progress
					// notification before it sleeps, so the kill lands
					// while every call is in flight on the server.
					var once sync.Once
					ctx := transport.WithProgress(context.Background(), func(mcp.ProgressParams) { once.Do(started.Done) })
					_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "sleep", Arguments: json.RawMessage(`{"ms":600000}`)})
					once.Do(started.Done)
					errs <- err
				}()
			}
			started.Wait()
			killed := time.Now()
			if err := syscall.Kill(conn.Pid(), syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			for range calls {
				err := <-errs
				var exit *stdio.ExitError
				if !errors.As(err, &exit) || !errors.Is(err, transport.ErrConnectionLost) {
					t.Fatalf("call failed with %v, want an *stdio.ExitError", err)
				}
				if exit.Signal == "" {
					t.Errorf("ExitError does not name the signal: %+v", exit)
				}
			}
			elapsed := time.Since(killed)
			t.Logf("all %d calls failed %v after the kill", calls, elapsed)
			if elapsed > 100*time.Millisecond {
				t.Errorf("pending calls failed %v after the kill, want within 100ms", elapsed)
			}
			<-s.Done()
			s.Close()
			if !groupGone(conn.Pid()) {
				t.Error("process group still alive after Close")
			}
		})
	}
}

func TestConnectFailureLeavesNothing(t *testing.T) {
	tests := []struct {
		name    string
		command string
		args    []string
		timeout time.Duration
		want    func(error) bool
	}{
		{
			name: "server exits at once", command: "/bin/sh", args: []string{"-c", "echo boom on stderr >&2; exit 7"},
			want: func(err error) bool {
				var exit *stdio.ExitError
				return errors.As(err, &exit) && exit.ExitCode == 7 && strings.Contains(exit.Stderr, "boom on stderr")
			},
		},
		{
			name: "server answers garbage", command: "/bin/sh", args: []string{"-c", "while read -r line; do echo 'this is not JSON'; echo '{\"not\":\"jsonrpc\"}'; done"},
			timeout: 500 * time.Millisecond,
			want:    func(err error) bool { return errors.Is(err, context.DeadlineExceeded) },
		},
		{
			name: "server never answers", command: "/bin/sh", args: []string{"-c", "exec sleep 600"},
			timeout: 300 * time.Millisecond,
			want:    func(err error) bool { return errors.Is(err, context.DeadlineExceeded) },
		},
		{
			name: "server closes stdout", command: "/bin/sh", args: []string{"-c", "exec >&-; exec sleep 600"},
			timeout: 5 * time.Second,
			want:    func(err error) bool { return errors.Is(err, transport.ErrConnectionLost) },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			timeout := tc.timeout
			if timeout == 0 {
				timeout = 10 * time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			conn, err := stdio.Start(ctx, &stdio.Options{Command: tc.command, Args: tc.args, TermGrace: 200 * time.Millisecond, StdinGrace: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			s, err := transport.Connect(ctx, conn, &transport.Options{ProbeTimeout: 100 * time.Millisecond})
			if err == nil {
				s.Close()
				t.Fatal("Connect succeeded")
			}
			t.Logf("Connect: %v", err)
			if !tc.want(err) {
				t.Errorf("unexpected error %v", err)
			}
			if !groupGone(conn.Pid()) {
				t.Error("process group still alive after a failed Connect")
			}
		})
	}
	t.Run("command not found", func(t *testing.T) {
		_, err := stdio.Start(context.Background(), &stdio.Options{Command: "tako-no-such-command"})
		if !errors.Is(err, exec.ErrNotFound) {
			t.Fatalf("Start: %v", err)
		}
	})
}

func TestSessionHugeResult(t *testing.T) {
	s, _ := startSession(t, stdio.Options{Command: demoServer(t), MaxMessageSize: 20 << 20}, nil)
	const size = 16 << 20
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "big", Arguments: json.RawMessage(fmt.Sprintf(`{"bytes":%d}`, size))})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Text()
	if len(text) != size || strings.Trim(text, "x") != "" {
		t.Fatalf("got %d bytes, want %d x's", len(text), size)
	}
	// Past the cap: that call fails with a clear error, and the session
	// carries on.
	_, err = s.CallTool(context.Background(), &mcp.CallToolParams{Name: "big", Arguments: json.RawMessage(`{"bytes":21000000}`)})
	if !errors.Is(err, transport.ErrMessageTooLarge) {
		t.Fatalf("over the cap: %v", err)
	}
	t.Logf("over the cap: %v", err)
	res, err = s.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"message":"still here"}`)})
	if err != nil || res.Text() != "still here" {
		t.Fatalf("after the oversized message: %v %v", res, err)
	}
}

// BenchmarkSessionCallTool measures a tools/call round trip through the whole
// client against a real subprocess (the demo server).
func BenchmarkSessionCallTool(b *testing.B) {
	s, _ := startSession(b, stdio.Options{Command: demoServer(b)}, &transport.Options{ProtocolVersion: mcp.Version20251125})
	params := &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"message":"hi"}`)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.CallTool(ctx, params); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSessionHugeResult measures a 16 MiB tool result through the whole
// client: reading the line, decoding the envelope and the content block.
func BenchmarkSessionHugeResult(b *testing.B) {
	s, _ := startSession(b, stdio.Options{Command: demoServer(b)}, &transport.Options{ProtocolVersion: mcp.Version20251125})
	params := &mcp.CallToolParams{Name: "big", Arguments: json.RawMessage(`{"bytes":16777216}`)}
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(16 << 20)
	for b.Loop() {
		res, err := s.CallTool(ctx, params)
		if err != nil || len(res.Content) != 1 {
			b.Fatal(res, err)
		}
	}
}

// BenchmarkSessionConcurrent measures calls/s with 16 callers on one session.
func BenchmarkSessionConcurrent(b *testing.B) {
	s, _ := startSession(b, stdio.Options{Command: demoServer(b)}, &transport.Options{ProtocolVersion: mcp.Version20251125})
	params := &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"message":"hi"}`)}
	b.ReportAllocs()
	b.SetParallelism(8) // 8 × GOMAXPROCS(2) = 16 callers
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.CallTool(context.Background(), params); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
