//go:build unix

package auth

import (
	"errors"
	"os"
	"syscall"
)

func tryLock(fh *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(fh.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case errors.Is(err, syscall.EINTR):
			continue
		}
		return false, err
	}
}

func unlock(fh *os.File) { _ = syscall.Flock(int(fh.Fd()), syscall.LOCK_UN) }
