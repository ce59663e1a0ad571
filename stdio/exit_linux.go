//go:build linux

package stdio

import (
	"os"

	"golang.org/x/sys/unix"
)

// awaitExit returns once the process pid has exited, leaving it for
// cmd.Wait to reap; or at once when the kernel cannot tell it that way
// (no pidfd before Linux 5.3, or a sandbox that refuses the call), and the
// waiter then blocks in cmd.Wait alone.
//
// Why: cmd.Wait blocks its goroutine in the waitid system call, and a
// goroutine in a blocking system call holds an OS thread, with the
// thread's two runtime stacks (48 KB of stack memory) for as long as the
// server runs: 42 KB of stacks per idle session in bench/'s sessions
// suite, against go-sdk's 8, and a thread for each of a host's servers. A
// pidfd becomes readable when its process exits, so the runtime's poller
// can wait for it as it waits for a pipe, on no thread of its own.
func awaitExit(pid int) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Read(func(fd uintptr) bool {
		// WNOWAIT: look, and leave the exit status to cmd.Wait.
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		return err != nil || info.Signo != 0 // 0: still running, wait for readable
	})
}
