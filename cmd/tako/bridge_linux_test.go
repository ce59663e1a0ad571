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

// children lists the child processes of pid: every process in /proc whose
// stat names pid as its parent. /proc/PID/task/TID/children would be
// shorter, but it exists only in kernels built with CONFIG_PROC_CHILDREN,
// and a test that skipped without it would check nothing there.
func children(t *testing.T, pid int) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil || len(stats) == 0 {
		t.Fatalf("cannot list the processes in /proc: %v (%d found)", err, len(stats))
	}
	var pids []int
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the process ended since the Glob
		}
		if ppid, ok := statParent(string(b)); ok && ppid == pid {
			n, err := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			pids = append(pids, n)
		}
	}
	return pids
}

// statParent returns the parent pid from the text of /proc/PID/stat:
// "pid (comm) state ppid ...". comm may hold spaces and parentheses, so the
// fields are counted from the last ')'.
func statParent(stat string) (int, bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

// TestStatParentCommWithParens: a command name may hold spaces and
// parentheses, which must not shift the fields children reads.
func TestStatParentCommWithParens(t *testing.T) {
	for stat, want := range map[string]int{
		"123 (demo-server) S 77 123 123 0 -1":   77,
		"123 (a) b) (c) R 4242 123 123 0 -1":    4242,
		"9 (x y z) S 1 9 9 0 -1 4194560 97 0 0": 1,
	} {
		if got, ok := statParent(stat); !ok || got != want {
			t.Errorf("statParent(%q) = %d, %v; want %d", stat, got, ok, want)
		}
	}
	if _, ok := statParent("garbage"); ok {
		t.Error(`statParent("garbage") reported a parent`)
	}
}
