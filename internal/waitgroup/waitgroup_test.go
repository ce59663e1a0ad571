package waitgroup

import (
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestWaitTimeout(t *testing.T) {
	var wg sync.WaitGroup
	if !WaitTimeout(&wg, time.Hour) {
		t.Fatal("an empty group timed out")
	}
	wg.Add(1)
	if WaitTimeout(&wg, time.Millisecond) {
		t.Fatal("a busy group reported done")
	}
	wg.Done()
	if !WaitTimeout(&wg, time.Hour) {
		t.Fatal("a finished group timed out")
	}
}
