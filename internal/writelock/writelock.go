// Package writelock is the lock a byte-stream Conn takes to write one
// message. A writer waiting for its turn must be able to give up, when its
// context ends or the connection closes, which a sync.Mutex cannot do: the
// lock is a one-slot channel, and Acquire selects on the slot and on what
// ends the wait. stdio and websocket both write this way.
package writelock

import (
	"context"
	"errors"
)

// ErrClosing is what Acquire returns when one of its closing channels
// fired first: the Conn is closing, and the caller reports that in its
// own words.
var ErrClosing = errors.New("writelock: the connection is closing")

// Lock is a one-slot write lock. The zero value is not usable: use New.
type Lock chan struct{}

// New returns an unlocked Lock.
func New() Lock { return make(Lock, 1) }

// Acquire takes the lock, or gives up with ctx's error when ctx ends, or
// with ErrClosing when either closing channel is closed (a nil channel
// never is). A context already done fails at once, even if the lock is
// free.
func (l Lock) Acquire(ctx context.Context, closing, dead <-chan struct{}) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case l <- struct{}{}:
		return nil
	case <-closing:
		return ErrClosing
	case <-dead:
		return ErrClosing
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Release gives the lock back; only the holder may call it.
func (l Lock) Release() { <-l }
