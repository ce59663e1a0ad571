//go:build linux

package stdio

import (
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Exit watching on Linux.
//
// Why: cmd.Wait blocks its goroutine in the waitid system call, and a
// goroutine in a blocking system call holds an OS thread, with the
// thread's two runtime stacks (48 KB of stack memory), for as long as the
// server runs: 42 KB of stacks per idle session in bench/'s sessions
// suite, against go-sdk's 8, and a thread for each of a host's servers. A
// pidfd becomes readable when its process exits, so the runtime's poller
// can wait for it as it waits for a pipe, on no thread of its own.
//
// And one goroutine waits for all of them: the servers' pidfds are in an
// epoll set of ours, whose descriptor the runtime's poller watches like
// any other (an epoll descriptor is readable while it holds an event). A
// goroutine per server, parked on its pidfd, was an idle session's third
// goroutine beside the reader and the stderr drain, 3 KB of stack and a
// poller entry each. The watcher runs while some server is running and
// ends with the last one's exit, so a program with no server running has
// no goroutine of ours.

// exitWatch is the watcher's state. A watcher runs, owning epfd, exactly
// while waiting is not empty: it ends when it has handed out the last.
var exitWatch struct {
	mu      sync.Mutex
	epfd    int              // the epoll set, while a watcher runs
	waiting map[int32]func() // pidfd: what to run once its process has exited
}

// watchExit runs done, in a goroutine of its own, once process pid has
// exited. done then reaps it (cmd.Wait returns at once). Where the kernel
// cannot tell without a thread (no pidfd before Linux 5.3, or a sandbox
// that refuses the calls), done runs at once and blocks in cmd.Wait, as
// every waiter did before.
func watchExit(pid int, done func()) {
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		go done()
		return
	}
	exitWatch.mu.Lock()
	defer exitWatch.mu.Unlock()
	if err := addExit(pidfd); err != nil {
		unix.Close(pidfd)
		go done()
		return
	}
	exitWatch.waiting[int32(pidfd)] = done
}

// addExit puts pidfd in the watcher's set; with no watcher running, it
// makes a set, puts pidfd in it and only then starts a watcher on it, so
// that no watcher waits on a set that holds nothing. exitWatch.mu is held.
func addExit(pidfd int) error {
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(pidfd)}
	if len(exitWatch.waiting) > 0 {
		return unix.EpollCtl(exitWatch.epfd, unix.EPOLL_CTL_ADD, pidfd, &ev)
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	if err := unix.SetNonblock(epfd, true); err != nil {
		unix.Close(epfd)
		return err
	}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, pidfd, &ev); err != nil {
		unix.Close(epfd)
		return err
	}
	// Non-blocking, so os registers it with the runtime's poller.
	f := os.NewFile(uintptr(epfd), "stdio exit watch")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return err
	}
	exitWatch.epfd = epfd
	if exitWatch.waiting == nil {
		exitWatch.waiting = map[int32]func(){}
	}
	go watchExits(f, rc, epfd)
	return nil
}

// watchExits is the watcher goroutine: it hands each server that exits to
// its done, and ends when none is left.
func watchExits(f *os.File, rc syscall.RawConn, epfd int) {
	var events [32]unix.EpollEvent
	n := 0
	// The runtime's poller reports edges, and RawConn.Read forgets one
	// that came before it: every wait starts with a look, which also
	// takes what did not fit in events last time.
	look := func(uintptr) bool {
		var err error
		n, err = unix.EpollWait(epfd, events[:], 0)
		if err != nil {
			n = 0
			return err != unix.EINTR
		}
		return n > 0
	}
	for {
		err := rc.Read(look)
		exitWatch.mu.Lock()
		if err != nil {
			// The set can no longer be waited on (nothing here closes
			// it): every server left is waited for as without a pidfd.
			n = 0
			for fd, done := range exitWatch.waiting {
				delete(exitWatch.waiting, fd)
				unix.Close(int(fd))
				go done()
			}
		}
		for _, ev := range events[:n] {
			done, ok := exitWatch.waiting[ev.Fd]
			if !ok {
				continue
			}
			delete(exitWatch.waiting, ev.Fd)
			_ = unix.EpollCtl(epfd, unix.EPOLL_CTL_DEL, int(ev.Fd), nil)
			unix.Close(int(ev.Fd))
			go done()
		}
		if len(exitWatch.waiting) == 0 {
			exitWatch.mu.Unlock()
			f.Close()
			return
		}
		exitWatch.mu.Unlock()
	}
}
