//go:build unix

package stdio

import (
	"errors"
	"os"
	"syscall"
)

// sysProcAttr puts the server in a process group of its own, whose id is
// its pid, so that signals reach everything it starts.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// terminate sends SIGTERM to the server's process group.
func terminate(p *os.Process, pgid int) { signalGroup(p, pgid, syscall.SIGTERM) }

// kill sends SIGKILL to the server's process group.
func kill(p *os.Process, pgid int) { signalGroup(p, pgid, syscall.SIGKILL) }

// signalGroup signals the group, or the process alone if the group is gone
// (a server that moved itself to another group still gets the signal).
func signalGroup(p *os.Process, pgid int, sig syscall.Signal) {
	if err := syscall.Kill(-pgid, sig); err != nil {
		_ = p.Signal(sig)
	}
}

// killGroup SIGKILLs what is left of the group after its leader exited.
func killGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

// exitSignal names the signal that ended the process, if one did.
func exitSignal(ps *os.ProcessState) string {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return ""
	}
	return signalName(ws.Signal())
}

var signalNames = map[syscall.Signal]string{
	syscall.SIGABRT: "SIGABRT",
	syscall.SIGALRM: "SIGALRM",
	syscall.SIGBUS:  "SIGBUS",
	syscall.SIGFPE:  "SIGFPE",
	syscall.SIGHUP:  "SIGHUP",
	syscall.SIGILL:  "SIGILL",
	syscall.SIGINT:  "SIGINT",
	syscall.SIGKILL: "SIGKILL",
	syscall.SIGPIPE: "SIGPIPE",
	syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGSEGV: "SIGSEGV",
	syscall.SIGSYS:  "SIGSYS",
	syscall.SIGTERM: "SIGTERM",
	syscall.SIGTRAP: "SIGTRAP",
	syscall.SIGUSR1: "SIGUSR1",
	syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGXCPU: "SIGXCPU",
	syscall.SIGXFSZ: "SIGXFSZ",
}

func signalName(s syscall.Signal) string {
	if n, ok := signalNames[s]; ok {
		return n
	}
	return s.String()
}

// newTryWrite returns a function that makes one non-blocking write attempt
// on f, a pipe in non-blocking mode (os.Pipe makes it so): the common case
// of a pipe with room then costs one system call and no context watcher.
// It returns nil if f offers no raw access.
func newTryWrite(f *os.File) func(b []byte) (int, bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	t := &tryWriter{rc: rc}
	t.fn = t.attempt // bound once, so each call allocates nothing
	return t.try
}

type tryWriter struct {
	rc  syscall.RawConn
	fn  func(fd uintptr) bool
	buf []byte
	n   int
}

// try is called with the framer's write semaphore held, so the fields need
// no lock of their own.
func (t *tryWriter) try(b []byte) (int, bool) {
	t.buf, t.n = b, 0
	err := t.rc.Write(t.fn)
	t.buf = nil
	return t.n, err == nil && t.n == len(b)
}

func (t *tryWriter) attempt(fd uintptr) bool {
	for t.n < len(t.buf) {
		n, err := syscall.Write(int(fd), t.buf[t.n:])
		if n > 0 {
			t.n += n
		}
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || n <= 0 {
			break
		}
	}
	return true // never wait here; the caller falls back to a watched write
}
