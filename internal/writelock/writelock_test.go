package writelock

import (
	"context"
	"errors"
	"testing"
)

func TestAcquireGivesUp(t *testing.T) {
	l := New()
	if err := l.Acquire(context.Background(), nil, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Acquire(ctx, nil, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("held lock, done context: %v", err)
	}
	closing := make(chan struct{})
	close(closing)
	if err := l.Acquire(context.Background(), nil, closing); !errors.Is(err, ErrClosing) {
		t.Fatalf("held lock, closing: %v", err)
	}
	l.Release()
	if err := l.Acquire(context.Background(), nil, nil); err != nil {
		t.Fatalf("after Release: %v", err)
	}
}
