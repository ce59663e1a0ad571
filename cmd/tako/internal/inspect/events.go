package inspect

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// event is one thing the page is told: its type (the SSE event name) and
// its data as JSON. ID orders every event of the inspector.
type event struct {
	ID   int64
	Type string
	Data json.RawMessage
}

// hub fans events out to the pages that follow them, and keeps the last
// few for a page that reconnects (Last-Event-ID).
type hub struct {
	mu     sync.Mutex
	seq    int64
	ring   []event // the last len(ring) events, oldest first once full
	start  int     // index of the oldest in ring, once full
	full   bool
	subs   map[*follower]struct{}
	closed bool
	done   chan struct{}
}

// follower is one page's event stream.
type follower struct {
	ch  chan event
	cut chan struct{} // closed when the page fell behind, or the hub closed
}

func newHub(size int) *hub {
	return &hub{ring: make([]event, 0, size), subs: map[*follower]struct{}{}, done: make(chan struct{})}
}

// publish sends an event of type typ with v as its data to every page.
// A page whose queue is full is cut off: it reconnects and catches up
// from the ring, so publish never waits for a page.
func (h *hub) publish(typ string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		data, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.seq++
	e := event{ID: h.seq, Type: typ, Data: data}
	if len(h.ring) < cap(h.ring) {
		h.ring = append(h.ring, e)
	} else {
		h.ring[h.start] = e
		h.start = (h.start + 1) % len(h.ring)
		h.full = true
	}
	for f := range h.subs {
		select {
		case f.ch <- e:
		default:
			delete(h.subs, f)
			close(f.cut)
		}
	}
}

// follow registers a page that has seen every event up to after, and
// returns the events it missed. ok is false when some of them are no
// longer in the ring: the page must load its state again.
func (h *hub) follow(after int64) (f *follower, missed []event, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f = &follower{ch: make(chan event, maxQueued), cut: make(chan struct{})}
	if h.closed {
		close(f.cut)
		return f, nil, true
	}
	ok = true
	if after > 0 && after < h.seq {
		oldest := h.seq - int64(len(h.ring)) + 1
		if after+1 < oldest {
			ok = false
		} else {
			for i := range h.ring {
				e := h.ring[(h.start+i)%len(h.ring)]
				if e.ID > after {
					missed = append(missed, e)
				}
			}
		}
	}
	h.subs[f] = struct{}{}
	return f, missed, ok
}

func (h *hub) unfollow(f *follower) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[f]; ok {
		delete(h.subs, f)
		close(f.cut)
	}
}

// last is the id of the latest event.
func (h *hub) last() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seq
}

// close ends every stream.
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	close(h.done)
	for f := range h.subs {
		delete(h.subs, f)
		close(f.cut)
	}
}

// serveEvents is GET /api/events: the event stream (text/event-stream).
// A page that reconnects sends Last-Event-ID (or ?after=) and gets what
// it missed first; one that missed too much gets a "reset" event.
func (ins *Inspector) serveEvents(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	after, _ := strconv.ParseInt(r.Header.Get("Last-Event-ID"), 10, 64)
	if v := r.URL.Query().Get("after"); v != "" && after == 0 {
		after, _ = strconv.ParseInt(v, 10, 64)
	}
	f, missed, ok := ins.events.follow(after)
	defer ins.events.unfollow(f)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	write := func(e event) bool {
		_, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.ID, e.Type, e.Data)
		return err == nil
	}
	if !ok {
		if !write(event{ID: ins.events.last(), Type: "reset", Data: json.RawMessage(`{}`)}) {
			return
		}
	}
	for _, e := range missed {
		if !write(e) {
			return
		}
	}
	fmt.Fprintf(w, ": ready\n\n")
	fl.Flush()
	beat := time.NewTicker(15 * time.Second)
	defer beat.Stop()
	for {
		select {
		case e := <-f.ch:
			if !write(e) {
				return
			}
			// Whatever else is queued goes in the same flush.
			for drained := false; !drained; {
				select {
				case e := <-f.ch:
					if !write(e) {
						return
					}
				default:
					drained = true
				}
			}
			fl.Flush()
		case <-beat.C:
			if _, err := fmt.Fprintf(w, ": beat\n\n"); err != nil {
				return
			}
			fl.Flush()
		case <-f.cut:
			return
		case <-r.Context().Done():
			return
		}
	}
}
