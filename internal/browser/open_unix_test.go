//go:build unix

package browser

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestOpenPassesTheURLAsOneArgument: the browser gets the URL whole, as one
// argument, with no shell between (a shell would cut it at & and ;, and
// expand $HOME); a browser that cannot start is an error. The fake browser
// writes what it got into a FIFO, so the test waits for exactly that.
func TestOpenPassesTheURLAsOneArgument(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "args")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "browser")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s\\n' \"$#\" \"$@\" > '"+fifo+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BROWSER", script)
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo) // blocks until the browser opens it to write
		if err != nil {
			got <- err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	if err := Open(authURL); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if want := "1\n" + authURL + "\n"; s != want {
			t.Errorf("the browser got %q, want %q", s, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the browser never wrote its arguments")
	}
	t.Setenv("BROWSER", filepath.Join(dir, "missing"))
	if err := Open(authURL); err == nil {
		t.Error("Open of a browser that does not exist succeeded")
	}
}
