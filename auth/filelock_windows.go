//go:build windows

package auth

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

func tryLock(fh *os.File) (bool, error) {
	var ol windows.Overlapped
	err := windows.LockFileEx(windows.Handle(fh.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return false, nil
	}
	return err == nil, err
}

func unlock(fh *os.File) {
	var ol windows.Overlapped
	_ = windows.UnlockFileEx(windows.Handle(fh.Fd()), 0, 1, 0, &ol)
}
