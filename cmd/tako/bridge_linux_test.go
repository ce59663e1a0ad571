package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tako-mcp/tako/internal/syncbuf"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/websocket"
)

// TestBridgeBinarySIGTERM runs the real tako binary as `tako bridge`,
// connects two clients (so two servers run), sends SIGTERM, and checks that
// tako exits with status 0 having ended both servers' process groups.
func TestBridgeBinarySIGTERM(t *testing.T) {
	bin := takoBinary(t)
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
		s := wsSession(ctx, t, url, nil)
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

// The tako binary, built once for the tests that run it.
var (
	takoBinOnce sync.Once
	takoBin     string
	takoBinErr  error
)

// takoBinary builds tako into TestMain's directory, once.
func takoBinary(t *testing.T) string {
	t.Helper()
	takoBinOnce.Do(func() {
		takoBin = filepath.Join(testDir, "tako")
		if out, err := exec.Command("go", "build", "-o", takoBin, ".").CombinedOutput(); err != nil {
			takoBinErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if takoBinErr != nil {
		t.Fatal(takoBinErr)
	}
	return takoBin
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

// Issue 20, point 3: after 100 clients came and went, the bridge still
// held 111 OS threads. No goroutine or process was left behind (TestMain's
// goleak check and the /proc count below show that): each live stdio
// server costs the bridge one OS thread, the one blocked in wait(2) for it
// (os/exec has no other way to wait for a child), and the Go runtime keeps
// the threads it made for reuse instead of ending them. So the bridge's
// threads grow with the clients it serves at once, and with no cap a
// hundred clients at once made a hundred threads. With --max-clients the
// threads are bounded by the cap, however many clients come: here 100
// clients at once against a cap of 8 leave no server behind and at most
// the cap's threads above the runtime's own.
func TestBridgeThreadsBoundedByMaxClients(t *testing.T) {
	const maxClients, clients = 8, 100
	bin := takoBinary(t)
	helper, starts := countedHelper(t)
	cmd := exec.Command(bin, append([]string{"bridge", "--listen-ws", "127.0.0.1:0", "--max-clients", strconv.Itoa(maxClients)}, helper...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("tako bridge after SIGTERM: %v", err)
		}
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("no URL from tako bridge: %v; stderr %q", err, stderr.String())
	}
	url := strings.TrimSpace(line)
	pid := cmd.Process.Pid
	base := threads(t, pid)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var refused atomic.Int64
	errs := make(chan error, clients)
	for range clients {
		go func() { errs <- oneClient(ctx, url, &refused) }()
	}
	for range clients {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// Each client's server is ended once its session has closed; wait
	// for the last ones, within a deadline.
	for len(children(t, pid)) > 0 {
		if ctx.Err() != nil {
			t.Fatalf("servers still running after the clients left: %v", children(t, pid))
		}
		time.Sleep(10 * time.Millisecond)
	}
	n := threads(t, pid)
	t.Logf("%d clients (%d refusals along the way), %d servers started; threads: %d at the start, %d after", clients, refused.Load(), starts(), base, n)
	if starts() != clients {
		t.Errorf("%d servers started for %d clients", starts(), clients)
	}
	if refused.Load() == 0 {
		t.Error("no client was ever refused: the cap did not bind")
	}
	// The runtime's own threads (one per P, sysmon, a spare or two) come
	// on top of one per server waited for.
	if limit := base + maxClients + runtime.NumCPU() + 8; n > limit {
		t.Errorf("the bridge holds %d threads after %d clients, more than the %d a cap of %d allows", n, clients, limit, maxClients)
	}
}

// oneClient connects to the bridge at url, retrying while it answers 503
// (the cap), lists the tools and leaves.
func oneClient(ctx context.Context, url string, refused *atomic.Int64) error {
	for {
		conn, err := websocket.Dial(ctx, url, nil)
		var he *websocket.HandshakeError
		if errors.As(err, &he) && he.StatusCode == 503 {
			refused.Add(1)
			select {
			case <-ctx.Done():
				return err
			case <-time.After(5 * time.Millisecond):
			}
			continue
		}
		if err != nil {
			return err
		}
		s, err := transport.Connect(ctx, conn, nil)
		if err != nil {
			return err
		}
		_, err = s.ListTools(ctx)
		s.Close()
		return err
	}
}

// threads is the number of OS threads of process pid, from
// /proc/PID/status.
func threads(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatalf("/proc/%d/status: %q", pid, l)
			}
			return n
		}
	}
	t.Fatalf("/proc/%d/status has no Threads line", pid)
	return 0
}
