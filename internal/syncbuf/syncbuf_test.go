package syncbuf_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/tako-mcp/tako/internal/syncbuf"
)

// Writers on several goroutines and a reader at once lose nothing (and the
// race detector sees no race).
func TestConcurrentWritesAndReads(t *testing.T) {
	var b syncbuf.Buffer
	const writers, lines = 4, 200
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range lines {
				if n, err := b.Write([]byte("line\n")); n != 5 || err != nil {
					t.Errorf("Write: %d, %v", n, err)
				}
			}
		})
	}
	wg.Go(func() {
		for range lines {
			if s := b.String(); len(s)%5 != 0 {
				t.Errorf("read a torn write: %d bytes", len(s))
			}
		}
	})
	wg.Wait()
	if n := strings.Count(b.String(), "line\n"); n != writers*lines {
		t.Errorf("%d lines, want %d", n, writers*lines)
	}
}
