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

// server is the benchmark server binary, built on first use by serverBin so
// that `go test -run xxx` (the repository's compile check) builds nothing.
var server struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// serverBin returns the path of servers/gosdk built into a temporary
// directory, building it the first time.
func serverBin(tb testing.TB) string {
	tb.Helper()
	server.once.Do(func() {
		dir, err := os.MkdirTemp("", "tako-bench-")
		if err != nil {
			server.err = err
			return
		}
		server.dir = dir
		// go test puts its own toolchain first on PATH, so "go" is the one
		// running these benchmarks.
		build := exec.Command("go", "build", "-o", dir+string(os.PathSeparator), "./servers/gosdk")
		if out, err := build.CombinedOutput(); err != nil {
			server.err = fmt.Errorf("building servers/gosdk: %v\n%s", err, out)
			return
		}
		server.path = filepath.Join(dir, "gosdk")
	})
	if server.err != nil {
		tb.Fatal(server.err)
	}
	return server.path
}

// TestMain removes the server binary after the run and checks that no
// goroutine outlived the clients: every client's Close must end what it
// started, or the next benchmark would pay for it.
func TestMain(m *testing.M) {
	code := m.Run()
	if server.dir != "" {
		os.RemoveAll(server.dir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "bench: goroutines left behind:", err)
			code = 1
		}
	}
	os.Exit(code)
}
