package main

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/websocket"
)

// TestBridgeBinarySIGTERM runs the real tako binary as `tako bridge`,
// connects two clients (so two servers run), sends SIGTERM, and checks that
// tako exits with status 0 having ended both servers' process groups.
func TestBridgeBinarySIGTERM(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "tako")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.Command(bin, "bridge", "--listen-ws", "127.0.0.1:0", "--stdio", demoCommand(t))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill() // in case the test fails before SIGTERM
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("no URL from tako bridge: %v; stderr %q", err, stderr.String())
	}
	url := strings.TrimSpace(line)

	for range 2 {
		conn, err := websocket.Dial(ctx, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := transport.Connect(ctx, conn, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.ListTools(ctx); err != nil {
			t.Fatal(err)
		}
	}
	servers := children(t, cmd.Process.Pid)
	if len(servers) != 2 {
		t.Fatalf("tako bridge has children %v, want the two servers", servers)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("tako bridge after SIGTERM: %v; stderr %q", err, stderr.String())
	}
	// Each server leads its own process group (stdio starts it so).
	for _, pid := range servers {
		if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("the process group of server %d is still there after tako exited: kill -0 gives %v", pid, err)
		}
	}
}

// children lists the child processes of pid, from every thread's
// /proc/PID/task/TID/children.
func children(t *testing.T, pid int) []int {
	t.Helper()
	tasks, err := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	if err != nil || len(tasks) == 0 {
		t.Skipf("cannot list the children of %d: %v", pid, err)
	}
	var pids []int
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, field := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(field); err == nil {
				pids = append(pids, n)
			}
		}
	}
	return pids
}
