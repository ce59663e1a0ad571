// Package waitgroup bounds a wait for goroutines, for the Close methods that
// promise to return within a time whatever the peer does (DESIGN.md rule 4).
package waitgroup

import (
	"sync"
	"time"
)

// WaitTimeout waits for wg, at most d, and reports whether wg finished.
// When it did not, the goroutine that waits on wg lingers until wg finishes:
// the caller has logged goroutines that outlived their bound, and this one
// ends with them.
func WaitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}
