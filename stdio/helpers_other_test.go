//go:build !unix

package stdio_test

import "syscall"

func ignoreSIGTERM() {}

func spawnAttr(bool) *syscall.SysProcAttr { return nil }

func closeFD(int) {}
