//go:build unix

package interop

import (
	"errors"
	"syscall"
	"testing"
)

// TestWebSocketBridgeClientGoneEndsSubprocess: when a client disconnects,
// the bridge ends the subprocess it started for it, and nothing of its
// process group is left.
func TestWebSocketBridgeClientGoneEndsSubprocess(t *testing.T) {
	command, args := everything(t)
	url, started := stdioBridge(t, command, args)
	ctx := testContext(t)
	s := connectWS(t, ctx, url, nil)
	p := <-started
	if err := syscall.Kill(-p.pid, 0); err != nil {
		t.Fatalf("the subprocess's group %d is not running while the client is connected: %v", p.pid, err)
	}
	call(t, ctx, s, "echo", `{"message":"x"}`)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.closed:
	case <-ctx.Done():
		t.Fatal("the bridge did not close the subprocess after the client left")
	}
	// stdio's Close returns once the process is reaped and its group
	// killed, so the group is gone by now.
	if err := syscall.Kill(-p.pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process group %d after the client left: kill -0 gives %v, want ESRCH", p.pid, err)
	}
}
