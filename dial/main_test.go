package dial_test

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
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tako-mcp/tako/internal/testserve"
	"github.com/tako-mcp/tako/mcptest"
)

// demoServer is examples/demo-server, built once by TestMain; empty with
// demoErr saying why when it could not be built.
var (
	demoServer string
	demoErr    error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tako-dial-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	demoServer, demoErr = testserve.BuildDemoServer(dir)
	// Every Transport a test dialled is closed once the tests pass: a
	// goroutine left is a leak in dial or below (an HTTP transport's idle
	// connections, a child's reaper).
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		os.RemoveAll(dir)
		os.Exit(code)
	}))
}

func demo(t *testing.T) string {
	t.Helper()
	if demoErr != nil {
		t.Fatal(demoErr)
	}
	return demoServer
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// everythingHTTP starts the npm reference server
// (@modelcontextprotocol/server-everything) in mode (streamableHttp or sse)
// on a free loopback port and returns its endpoint's URL. The interop
// module's loopback.cjs makes its express app bind 127.0.0.1 only.
func everythingHTTP(t *testing.T, mode string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		mcptest.SkipOrFail(t, "node is not on PATH: install Node.js 20 or later, then run `npm ci` in the repository root")
	}
	script, _ := filepath.Abs(filepath.Join("..", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	preload, _ := filepath.Abs(filepath.Join("..", "interop", "testdata", "loopback.cjs"))
	for _, f := range []string{script, preload} {
		if _, err := os.Stat(f); err != nil {
			mcptest.SkipOrFail(t, f+" is missing: run `npm ci` in the repository root")
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // the server binds it a moment later; a clash fails loudly
	cmd := exec.Command(node, "--require", preload, script, mode)
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan bool, 1)
	readDone := make(chan struct{})
	t.Cleanup(func() {
		cmd.Process.Kill()
		select {
		case <-readDone:
		case <-time.After(10 * time.Second):
			t.Error("server-everything's output did not end after it was killed")
		}
		cmd.Wait()
	})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(out)
		listening := regexp.MustCompile(`(?:listening on port|running on port) (\d+)`)
		found := false
		for sc.Scan() {
			if !found && listening.MatchString(sc.Text()) {
				found = true
				ready <- true
			}
		}
		if !found {
			ready <- false
		}
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatal("server-everything ended before it listened")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("server-everything did not listen within 30s")
	}
	path := "/mcp"
	if mode == "sse" {
		path = "/sse"
	}
	return "http://127.0.0.1:" + strconv.Itoa(port) + path
}
