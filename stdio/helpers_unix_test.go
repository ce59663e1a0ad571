//go:build unix

package stdio_test

import (
	"os"
	"os/signal"
	"syscall"
)

func ignoreSIGTERM() { signal.Ignore(syscall.SIGTERM) }

// notifySIGTERM catches SIGTERM from now on and relays it to the channel
// it returns.
func notifySIGTERM() <-chan os.Signal {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM)
	return ch
}

// spawnAttr keeps a grandchild in the server's process group, as npx's
// children are, or with setsid moves it out, as a daemonizing child would.
func spawnAttr(setsid bool) *syscall.SysProcAttr {
	if setsid {
		return &syscall.SysProcAttr{Setsid: true}
	}
	return nil
}

// closeFD closes a standard descriptor for good (os.File.Close would wait
// for a blocked read).
func closeFD(fd int) { _ = syscall.Close(fd) }
