package stdio_test

import (
	"errors"
	"sync"
	"syscall"
	"testing"
	"time"
)

var subreaperOnce sync.Once

// setSubreaper makes this test process the reaper of orphaned
// descendants, so that a grandchild killed after its parent (the server)
// died becomes our child, and reap can collect it. Without this it would
// belong to PID 1, and stay a zombie (still a member of its process group)
// for as long as PID 1 takes to reap it.
func setSubreaper(t *testing.T) {
	subreaperOnce.Do(func() {
		const prSetChildSubreaper = 36
		if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
			t.Logf("PR_SET_CHILD_SUBREAPER: %v", errno)
		}
	})
}

// reap waits up to 5 s for pid, an orphaned descendant handed to us, to
// end, and returns its status.
func reap(pid int) (syscall.WaitStatus, bool) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		if got == pid {
			return ws, true
		}
		if err != nil && !errors.Is(err, syscall.ECHILD) && !errors.Is(err, syscall.EINTR) {
			return ws, false
		}
		if time.Now().After(deadline) {
			return ws, false
		}
		// There is no event to wait on for a process that is not yet our
		// child (its parent may still be exiting), so poll.
		time.Sleep(5 * time.Millisecond)
	}
}
