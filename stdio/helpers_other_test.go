//go:build !unix

package stdio_test

import (
	"os"
	"syscall"
)

func ignoreSIGTERM() {}

func notifySIGTERM() <-chan os.Signal { return nil }

func spawnAttr(bool) *syscall.SysProcAttr { return nil }

func closeFD(int) {}
