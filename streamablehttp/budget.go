package streamablehttp

import (
	"context"
	"io"
	"sync"
)

// One budget per Conn for incoming messages (DESIGN.md rule 7).
//
// Every request has its own stream, and MaxMessageSize caps one message on
// one stream; without more, eight concurrent calls each answered with a
// message just under the cap hold eight times the cap (about 950 MB were
// seen for eight 100 MB events, where stdio, one stream, held 127 MB). So
// the bytes that all streams have read but not yet turned into messages
// share one budget, MaxMessageSize by default: a stream that would pass
// it stops reading its body until others have finished their messages,
// which leaves the server to wait on TCP flow control. Nothing fails for
// it.
//
// Progress is guaranteed by one rule: the stream whose current message
// began first (its first bytes arrived first: a stream waiting in Read,
// such as an idle GET stream, has no message yet) may always read on (up to the per-message cap), even past
// the budget. Every other stream waits, so the oldest message completes and
// frees its bytes, and the next oldest goes on. The Conn then holds at most
// the budget plus one message, and a little per stream: a read takes at
// most budgetChunk bytes, and what a stream reads past the end of a message
// is counted as held until its next message ends (a slack of one chunk per
// stream).

// budgetChunk is the most a single read of a body takes from the budget.
const budgetChunk = 64 << 10

// budget is the Conn's allowance of bytes read and not yet delivered.
type budget struct {
	mu    sync.Mutex
	limit int64
	used  int64
	seq   int64 // orders streams by when their current message began
	// wake is closed, and made anew, by a release while waiters > 0: a
	// channel per release would be an allocation per message.
	wake    chan struct{}
	waiters int
	// holders are the streams holding bytes, by the seq of their message.
	holders map[*budgetReader]int64
	// waited, when set (tests only), is called each time a stream stops
	// to wait for the others: the one sign, short of a timer, that the
	// budget has taken effect.
	waited func()
}

func newBudget(limit int) *budget {
	return &budget{limit: int64(limit), wake: make(chan struct{}), holders: map[*budgetReader]int64{}}
}

// reader returns r read within the budget; ctx ends a wait for it.
func (b *budget) reader(ctx context.Context, r io.Reader) *budgetReader {
	return &budgetReader{b: b, r: r, ctx: ctx}
}

// oldest reports whether s holds the message that began first.
func (b *budget) oldest(s *budgetReader) bool {
	mine, ok := b.holders[s]
	if !ok {
		return len(b.holders) == 0
	}
	for _, seq := range b.holders {
		if seq < mine {
			return false
		}
	}
	return true
}

func (b *budget) reserve(s *budgetReader, n int64) error {
	for {
		b.mu.Lock()
		if b.used+n <= b.limit || b.oldest(s) {
			b.used += n
			s.held += n
			b.mu.Unlock()
			return nil
		}
		wake := b.wake
		b.waiters++
		waited := b.waited
		b.mu.Unlock()
		if waited != nil {
			waited()
		}
		var err error
		select {
		case <-wake:
		case <-s.ctx.Done():
			err = s.ctx.Err()
		}
		b.mu.Lock()
		b.waiters--
		b.mu.Unlock()
		if err != nil {
			return err
		}
	}
}

// release gives back n of s's bytes. With nothing left, s stops being a
// holder; with next, what s still holds is the start of its next message,
// which takes its turn behind the others once more of it arrives.
func (b *budget) release(s *budgetReader, n int64, next bool) {
	b.mu.Lock()
	n = min(n, s.held)
	b.used -= n
	s.held -= n
	if s.held == 0 || next {
		// With next, what s still holds is slack that may begin its next
		// message; s takes its turn when bytes of that message arrive
		// (arrived), not now: a stream that then goes idle must not stand
		// first in line.
		delete(b.holders, s)
	}
	if b.waiters > 0 {
		close(b.wake)
		b.wake = make(chan struct{})
	}
	b.mu.Unlock()
}

// budgetReader is one stream's body, read within the Conn's budget.
type budgetReader struct {
	b    *budget
	r    io.Reader
	ctx  context.Context
	held int64 // guarded by b.mu
}

func (s *budgetReader) Read(p []byte) (int, error) {
	if len(p) > budgetChunk {
		p = p[:budgetChunk]
	}
	if err := s.b.reserve(s, int64(len(p))); err != nil {
		return 0, err
	}
	n, err := s.r.Read(p)
	if n > 0 {
		s.b.arrived(s)
	}
	if n < len(p) {
		s.b.release(s, int64(len(p)-n), false)
	}
	return n, err
}

// arrived puts s in the order of holders once bytes of its message have
// come: not when it reserved room for a Read that may block, or an idle
// stream (a GET stream with nothing to say) waiting in Read would count
// as the oldest message and stop every other stream at the budget.
func (b *budget) arrived(s *budgetReader) {
	b.mu.Lock()
	if _, ok := b.holders[s]; !ok {
		b.seq++
		b.holders[s] = b.seq
	}
	b.mu.Unlock()
}

// delivered says a message has been taken from what s read: its bytes go
// back to the budget, but for one chunk that may already belong to the
// next message.
func (s *budgetReader) delivered() {
	s.b.mu.Lock()
	n := s.held - min(s.held, budgetChunk)
	s.b.mu.Unlock()
	s.b.release(s, n, true)
}

// done gives back everything s holds: its stream has ended.
func (s *budgetReader) done() {
	s.b.mu.Lock()
	n := s.held
	s.b.mu.Unlock()
	s.b.release(s, n, false)
}
