//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

// typeAhead keeps the terminal as it is where tako knows no termios.
func typeAhead(int) (restore func(), err error) { return func() {}, nil }
