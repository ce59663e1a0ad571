//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"github.com/chzyer/readline"
	"golang.org/x/sys/unix"
)

// typeAhead puts the terminal on fd in the mode it keeps between the
// line editor's reads, and returns what puts it back as it was.
//
// Why: the editor reads a line in raw mode and then restores the mode it
// found. Were that the terminal's cooked mode, a key typed while a
// command runs (or in the moment before the next prompt) would meet the
// line discipline, and Ctrl-D there is no character but an end of file
// for a read that nobody makes: it is lost, and the shell stays. In this
// mode (no line editing, no echo, signals on) every key waits as a byte
// for the next read, Ctrl-D included, and Ctrl-C still stops the command.
func typeAhead(fd int) (restore func(), err error) {
	old, err := readline.GetState(fd)
	if err != nil {
		return nil, err
	}
	t, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil, err
	}
	t.Lflag &^= unix.ICANON | unix.ECHO | unix.ECHONL
	t.Lflag |= unix.ISIG
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, t); err != nil {
		return nil, err
	}
	return func() { readline.Restore(fd, old) }, nil
}
