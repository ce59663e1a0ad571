package transport

import (
	"sync"
)

// Bounds against the peer (DESIGN.md rule 7): the notifications a server
// can make the client hold, and the requests it can make it answer at once.

// DefaultMaxQueuedNotifications is the bound on notifications and
// progress waiting for their callbacks when Options leave it zero.
const DefaultMaxQueuedNotifications = 4096

// DefaultMaxServerRequests is how many server-to-client requests are
// answered at once when Options leave it zero.
const DefaultMaxServerRequests = 32

// refusalQueue bounds the error answers waiting to be written for server
// requests past the bound; past it, such a request is dropped.
const refusalQueue = 64

// eventQueue is a bounded FIFO of callbacks between the reader and the
// event goroutine. The reader never blocks on it: at the bound, a
// notification is dropped (and counted) rather than held, since a server
// that floods a slow subscriber must not grow the client's memory without
// end. Responses never pass through it, so none is ever lost this way.
type eventQueue struct {
	mu     sync.Mutex
	items  []func()
	max    int
	wake   chan struct{}
	closed bool
}

func (q *eventQueue) init(max int) {
	q.wake = make(chan struct{}, 1)
	q.max = max
}

// push queues fn; it reports false when the queue is full and fn was
// dropped.
func (q *eventQueue) push(fn func()) bool {
	return q.add(fn, false)
}

func (q *eventQueue) add(fn func(), always bool) bool {
	q.mu.Lock()
	ok := !q.closed && (always || len(q.items) < q.max)
	if ok {
		q.items = append(q.items, fn)
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return ok
}

// barrier waits until every callback queued before it has run, or until
// done is closed. It is never dropped: a call waiting for its progress to
// be delivered would otherwise wait for done.
func (q *eventQueue) barrier(done <-chan struct{}) {
	passed := make(chan struct{})
	q.add(func() { close(passed) }, true)
	select {
	case <-passed:
	case <-done:
	}
}

func (q *eventQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.items = nil
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *eventQueue) pop() (func(), bool) {
	for {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			return nil, false
		}
		if len(q.items) > 0 {
			fn := q.items[0]
			q.items[0] = nil
			q.items = q.items[1:]
			if len(q.items) == 0 {
				q.items = nil // let a burst's backing array go
			}
			q.mu.Unlock()
			return fn, true
		}
		q.mu.Unlock()
		<-q.wake
	}
}

// queueEvent hands fn to the event goroutine, or drops it at the bound:
// counted in DroppedNotifications, logged on the first drop and every
// 1000th after it.
func (s *Session) queueEvent(fn func()) {
	if s.events.push(fn) {
		s.startEvents()
		return
	}
	if n := s.dropped.Add(1); n == 1 || n%1000 == 0 {
		s.log.Warn("mcp: notification queue full; dropping notifications (the subscriber is slower than the server)",
			"dropped", n, "bound", s.opts.MaxQueuedNotifications)
	}
}

// DroppedNotifications reports how many notifications (and progress
// notifications) were dropped because Options.MaxQueuedNotifications of
// them were already waiting for a slow callback.
func (s *Session) DroppedNotifications() int64 { return s.dropped.Load() }
