package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

// servers are the server binaries, built on first use by testBins so that
// `go test -run xxx` (the repository's compile check) builds nothing.
var servers struct {
	once sync.Once
	dir  string
	bins Bins
	err  error
}

// testBins returns servers/gosdk and servers/bridge built into a temporary
// directory, building them the first time.
func testBins(tb testing.TB) Bins {
	tb.Helper()
	servers.once.Do(func() {
		dir, err := os.MkdirTemp("", "tako-bench-")
		if err != nil {
			servers.err = err
			return
		}
		servers.dir = dir
		// go test puts its own toolchain first on PATH, so "go" is the one
		// running these tests.
		build := exec.Command("go", "build", "-o", dir+string(os.PathSeparator), "./servers/gosdk", "./servers/bridge", "./servers/tiny")
		if out, err := build.CombinedOutput(); err != nil {
			servers.err = fmt.Errorf("building the servers: %v\n%s", err, out)
			return
		}
		servers.bins = Bins{GoSDK: filepath.Join(dir, "gosdk"), Bridge: filepath.Join(dir, "bridge"), Tiny: filepath.Join(dir, "tiny")}
	})
	if servers.err != nil {
		tb.Fatal(servers.err)
	}
	return servers.bins
}

// TestMain removes the server binaries after the run and checks that no
// goroutine outlived the clients: every client's Close must end what it
// started, or the next benchmark would pay for it.
func TestMain(m *testing.M) {
	code := m.Run()
	CloseIdleHTTP()
	if servers.dir != "" {
		os.RemoveAll(servers.dir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "bench: goroutines left behind:", err)
			code = 1
		}
	}
	os.Exit(code)
}
