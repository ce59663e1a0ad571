package auth

import (
	"context"
	"fmt"
	"os"
	"time"
)

// lockFile takes an exclusive advisory lock on the file at path (created,
// mode 0600, if missing), waiting until it is free or ctx ends. The lock
// is tried without blocking, then again at a growing interval: a blocking
// lock call cannot be abandoned when ctx ends, and a refresh holds the lock
// for one round trip, so the wait is short.
func lockFile(ctx context.Context, path string) (func(), error) {
	fh, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("auth: token store lock: %w", err)
	}
	wait := 5 * time.Millisecond
	for {
		ok, err := tryLock(fh)
		if err != nil {
			fh.Close()
			return nil, fmt.Errorf("auth: token store lock: %w", err)
		}
		if ok {
			return func() { unlock(fh); fh.Close() }, nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			fh.Close()
			return nil, fmt.Errorf("auth: waiting for the token store lock: %w", context.Cause(ctx))
		case <-t.C:
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}
