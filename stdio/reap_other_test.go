//go:build unix && !linux

package stdio_test

import (
	"errors"
	"syscall"
	"testing"
	"time"
)

func setSubreaper(*testing.T) {}

// reap waits up to 5 s for pid, a descendant we cannot wait for, to be
// gone, and reports a SIGKILL status when it is: on these systems the
// orphan is reaped by init, which tells us nothing of how it ended.
func reap(pid int) (syscall.WaitStatus, bool) {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return syscall.WaitStatus(syscall.SIGKILL), true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return 0, false
}
