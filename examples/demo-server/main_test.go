package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tako-mcp/tako/internal/syncbuf"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/transport/transporttest"
)

// childEnv makes the test binary run as the demo server: the subprocess
// tests start it again with this variable set, so that they exercise a real
// process over real pipes without a separate build step.
const childEnv = "TAKO_DEMO_SERVER_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		main()
		return
	}
	goleak.VerifyTestMain(m)
}

// inProcess runs the server in this process over pipes and returns the
// client's end and the server's exit status channel.
func inProcess(t *testing.T, args ...string) (transport.Conn, <-chan int, *syncbuf.Buffer) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stderr := &syncbuf.Buffer{}
	code := make(chan int, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		code <- run(ctx, args, inR, outW, stderr)
		outW.Close()
	}()
	client := stdio.NewStreamConn(outR, inW, stdio.StreamOptions{})
	t.Cleanup(func() {
		client.Close()
		cancel()
		select {
		case c := <-code:
			if c != exitOK && c != exitDied {
				t.Errorf("server exited with %d; stderr:\n%s", c, stderr)
			}
		case <-time.After(transporttest.Timeout):
			t.Error("server did not stop")
		}
	})
	return client, code, stderr
}

// TestInProcess runs the transport conformance kit against the demo server
// running in this process, over the stdio framing.
func TestInProcess(t *testing.T) {
	transporttest.Run(t, func(t *testing.T) transport.Conn {
		c, _, _ := inProcess(t)
		return c
	})
}

// subprocess starts the test binary as the demo server.
func subprocess(t *testing.T, args ...string) *stdio.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), transporttest.Timeout)
	defer cancel()
	conn, err := stdio.Start(ctx, &stdio.Options{
		Command: os.Args[0],
		Args:    args,
		// A race-enabled binary sleeps a second at exit unless told not
		// to; the child's exit is on every subtest's path.
		Env: []string{childEnv + "=1", "GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")},
	})
	if err != nil {
		t.Fatalf("start demo server: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestSubprocess runs the kit against the demo server as a child process,
// as `make demo` and the CLI use it.
func TestSubprocess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process per subtest")
	}
	transporttest.Run(t, func(t *testing.T) transport.Conn { return subprocess(t) })
}

func connect(t *testing.T, conn transport.Conn, version string) *transport.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), transporttest.Timeout)
	defer cancel()
	s, err := transport.Connect(ctx, conn, &transport.Options{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestFlagsShapeTheServer(t *testing.T) {
	conn, _, _ := inProcess(t, "-versions", "2025-06-18,2024-11-05", "-page-size", "2", "-name", "shaped", "-v")
	s := connect(t, conn, "")
	info := s.ServerInfo()
	if info.ProtocolVersion != mcp.Version20250618 || info.Implementation.Name != "shaped" {
		t.Fatalf("server info %+v", info)
	}
	ctx, cancel := context.WithTimeout(context.Background(), transporttest.Timeout)
	defer cancel()
	tools, err := s.ListTools(ctx)
	if err != nil || len(tools) != 10 {
		t.Fatalf("ListTools over pages of 2: %d tools, %v", len(tools), err)
	}
}

func TestJunkLinesAreSkipped(t *testing.T) {
	conn, _, _ := inProcess(t, "-junk")
	s := connect(t, conn, "")
	ctx, cancel := context.WithTimeout(context.Background(), transporttest.Timeout)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.ToolEcho, Arguments: []byte(`{"message":"through junk"}`)})
	if err != nil || res.Text() != "through junk" {
		t.Fatalf("echo through junk: %v %+v", err, res)
	}
}

func TestDieOnCrashesMidCall(t *testing.T) {
	conn := subprocess(t, "-die-on", mcptest.ToolSleep)
	s := connect(t, conn, mcp.Version20251125)
	ctx, cancel := context.WithTimeout(context.Background(), transporttest.Timeout)
	defer cancel()
	_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.ToolSleep, Arguments: []byte(`{"ms":1}`)})
	if !errors.Is(err, transport.ErrConnectionLost) {
		t.Fatalf("call to a crashing server: %v, want ErrConnectionLost", err)
	}
	var exit *stdio.ExitError
	select {
	case <-s.Done():
	case <-ctx.Done():
		t.Fatal("session did not end")
	}
	if errors.As(s.Err(), &exit) && !strings.Contains(exit.Error(), "3") {
		t.Errorf("exit error %v, want status 3", exit)
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-versions", "1999-01-01"}, {"-nope"}, {"extra"}, {"-die-on", "nope"}} {
		var stderr syncbuf.Buffer
		if code := run(context.Background(), args, strings.NewReader(""), io.Discard, &stderr); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
		}
		if stderr.String() == "" {
			t.Errorf("%q: nothing on stderr", args)
		}
	}
}

func TestEndsWhenStdinEnds(t *testing.T) {
	var stderr syncbuf.Buffer
	var stdout bytes.Buffer
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
	if code := run(context.Background(), nil, in, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), `"id":1`) {
		t.Fatalf("stdout %q", stdout.String())
	}
}
