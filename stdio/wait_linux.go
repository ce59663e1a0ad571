//go:build linux

package stdio

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// readyWaiter returns a function that blocks until f, a pollable pipe, has
// something to read (data, or its end) without reading any of it, or nil
// if f cannot be waited on so. The framer waits with it before it takes a
// read buffer (readers.go says why).
//
// The wait is the runtime poller's, through f's RawConn, so it honours
// f's read deadline and ends when f is closed, as a Read does. The poller
// is edge-triggered and RawConn.Read forgets an edge that came before it,
// so the first look is a ppoll with no timeout: data already in the pipe
// is seen at once. After a wakeup the read itself finds out what is there.
func readyWaiter(f *os.File) func() error {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	w := &fdWaiter{rc: rc}
	w.check = w.ready
	return w.wait
}

// fdWaiter is readyWaiter's state. Only the reading goroutine uses it.
type fdWaiter struct {
	rc     syscall.RawConn
	check  func(fd uintptr) bool // w.ready, bound once so a wait allocates nothing
	looked bool
	pfd    [1]unix.PollFd
	zero   unix.Timespec
}

func (w *fdWaiter) wait() error {
	w.looked = false
	return w.rc.Read(w.check)
}

// ready is RawConn.Read's callback: true ends the wait.
func (w *fdWaiter) ready(fd uintptr) bool {
	if w.looked {
		return true // the poller saw the pipe become readable
	}
	w.looked = true
	w.pfd[0] = unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}
	n, err := unix.Ppoll(w.pfd[:], &w.zero, nil)
	// An error (EINTR) ends the wait too: the read that follows blocks,
	// holding a buffer, as every read did before.
	return err != nil || n > 0
}
