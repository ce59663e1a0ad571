package inbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/tako-mcp/tako/mcp"
)

var errEnd = errors.New("end")

func note(method string) *mcp.Message { return &mcp.Message{Method: method} }

// recorder is a deliver function that keeps what it was given.
type recorder struct {
	mu   sync.Mutex
	got  []string
	errs []error
}

func (r *recorder) deliver(m *mcp.Message, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.errs = append(r.errs, err)
		r.got = append(r.got, "err")
		return
	}
	r.got = append(r.got, m.Method)
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return fmt.Sprint(r.got)
}

func newInbox() *Inbox {
	b := new(Inbox)
	b.Init()
	return b
}

// Give holds its goroutine until Read takes the message: a reader that
// outruns the engine holds one message, not a queue.
func TestGiveWaitsForRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newInbox()
		returned := make(chan bool, 1)
		go func() { returned <- b.Give(note("a"), nil) }()
		synctest.Wait()
		select {
		case <-returned:
			t.Fatal("Give returned before anyone read")
		default:
		}
		m, err := b.Read(t.Context())
		if err != nil || m.Method != "a" {
			t.Fatalf("Read = %v, %v; want a", m, err)
		}
		if !<-returned {
			t.Error("Give reported false after its message was read")
		}
	})
}

// A Give waiting for Read when Push comes goes to deliver instead, before
// anything that follows it.
func TestPushTakesAWaitingGive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newInbox()
		done := make(chan struct{})
		go func() {
			defer close(done)
			b.Give(note("a"), nil)
			b.Give(note("b"), nil)
			b.End(errEnd)
		}()
		synctest.Wait()
		r := &recorder{}
		b.Push(r.deliver)
		<-done
		if got := r.String(); got != "[a b err]" {
			t.Errorf("delivered %s, want [a b err]", got)
		}
	})
}

// What Put queued before Push is delivered first, in order, then the final
// error if reading had ended, and nothing after it.
func TestPushDeliversQueueThenFinalOnce(t *testing.T) {
	b := newInbox()
	b.Put(note("a"), nil)
	b.Put(nil, errors.New("bad one"))
	b.Put(note("b"), nil)
	b.End(errEnd)
	b.Put(note("late"), nil)
	b.End(errors.New("second end"))
	r := &recorder{}
	b.Push(r.deliver)
	b.Put(note("later"), nil)
	b.End(errors.New("third end"))
	if got := r.String(); got != "[a err b err]" {
		t.Fatalf("delivered %s, want [a err b err]", got)
	}
	if !errors.Is(r.errs[1], errEnd) {
		t.Errorf("final error %v, want the first End's", r.errs[1])
	}
}

// End after Push gives the final error at once, and nothing follows it.
func TestEndAfterPush(t *testing.T) {
	b := newInbox()
	r := &recorder{}
	b.Push(r.deliver)
	if !b.Give(note("a"), nil) {
		t.Fatal("Give refused after Push")
	}
	b.End(errEnd)
	if b.Give(note("b"), nil) {
		t.Error("Give accepted a message after the end")
	}
	b.Put(note("c"), nil)
	if got := r.String(); got != "[a err]" {
		t.Errorf("delivered %s, want [a err]", got)
	}
}

// Read returns what was queued, then the final error, every time.
func TestReadDrainsThenFinal(t *testing.T) {
	b := newInbox()
	b.Put(note("a"), nil)
	b.End(errEnd)
	ctx := context.Background()
	if m, err := b.Read(ctx); err != nil || m.Method != "a" {
		t.Fatalf("Read = %v, %v; want a", m, err)
	}
	for range 2 {
		if _, err := b.Read(ctx); !errors.Is(err, errEnd) {
			t.Fatalf("Read after the end = %v, want %v", err, errEnd)
		}
	}
}

// Stop wakes a Give waiting for Read (false) and a Read waiting for a
// message (Stop's error), and drops what was queued.
func TestStopWakesGiveAndRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newInbox()
		gave := make(chan bool, 1)
		go func() { gave <- b.Give(note("a"), nil) }()
		synctest.Wait()
		errStop := errors.New("closed")
		b.Stop(errStop)
		if <-gave {
			t.Error("Give reported true for a message nobody read")
		}

		b = newInbox()
		b.Put(note("queued"), nil)
		if _, err := b.Read(t.Context()); err != nil {
			t.Fatal(err)
		}
		read := make(chan error, 1)
		go func() {
			_, err := b.Read(t.Context())
			read <- err
		}()
		synctest.Wait()
		b.Put(note("taken"), nil) // by the waiting Read
		<-read
		go func() {
			_, err := b.Read(t.Context())
			read <- err
		}()
		synctest.Wait()
		b.Stop(errStop)
		if err := <-read; !errors.Is(err, errStop) {
			t.Errorf("Read after Stop = %v, want %v", err, errStop)
		}
	})
}

// Read honours its context.
func TestReadContext(t *testing.T) {
	b := newInbox()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Read(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Read = %v, want context.Canceled", err)
	}
}

// Put from many goroutines racing Push: every result is delivered once,
// each goroutine's in the order it put them, the queued ones included.
func TestPutRacingPushKeepsOrder(t *testing.T) {
	const writers, each = 8, 200
	b := newInbox()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				b.Put(note(fmt.Sprintf("%d/%d", w, i)), nil)
			}
		}()
	}
	var mu sync.Mutex
	next := make([]int, writers)
	bad := 0
	b.Push(func(m *mcp.Message, err error) {
		mu.Lock()
		defer mu.Unlock()
		var w, i int
		fmt.Sscanf(m.Method, "%d/%d", &w, &i)
		if i != next[w] {
			bad++
		}
		next[w] = i + 1
	})
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for w, n := range next {
		if n != each {
			t.Errorf("writer %d: %d delivered, want %d", w, n, each)
		}
	}
	if bad > 0 {
		t.Errorf("%d results out of their writer's order", bad)
	}
}
