package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/tako-mcp/tako/mcp"
)

// Resource subscriptions on 2026-07-28 (checklist §4C.8, §6D). The wire
// has no resources/subscribe: a client asks for updates of a URI in the
// resourceSubscriptions of a subscriptions/listen stream, and the server's
// notifications/resources/updated arrive on that stream, tagged with its
// subscriptionId (the listen request's id).
//
// The session opens one listen stream per subscribed URI, next to the one
// it keeps for list changes (listen.go). Re-opening a single stream with a
// new filter on every change would leave a gap in which updates to the
// URIs already subscribed are lost, and a server that tracks one
// subscription per URI (the official Go SDK does) could see the old
// stream's end undo the new one's start; a stream per URI makes Subscribe
// and Unsubscribe independent of each other, and the spec allows any
// number of concurrent streams. The cost is one long-lived request per URI
// (on HTTP, one response stream each), which the caller controls.
//
// SubscribeResource returns once the server has acknowledged the stream
// and granted the URI; a server that leaves it out of the grant gets an
// error wrapping ErrCapability and the stream is closed. A stream that
// ends abruptly is re-opened, with backoff, under a new id. Notifications
// are demultiplexed by subscriptionId: an update tagged with the id of no
// open stream for its URI (a stream already closed, say) is dropped.
// UnsubscribeResource closes the URI's stream (on stdio with
// notifications/cancelled, on HTTP by closing the response stream) and
// waits, bounded by its context, for it to end.

// resourceStream is one URI's listen stream.
type resourceStream struct {
	uri    string
	cancel context.CancelFunc
	acked  chan mcp.SubscriptionFilter // buffered 1: the first acknowledgement
	done   chan struct{}               // closed when the stream's goroutine ends
	err    error                       // why it ended on its own; set before done is closed
	gotAck bool                        // guarded by resourceStreams.mu
}

// resourceStreams indexes the open streams by URI and by the id of their
// current listen request. Its methods are safe for concurrent use.
type resourceStreams struct {
	mu    sync.Mutex
	byURI map[string]*resourceStream
	byID  map[int64]*resourceStream
}

func (r *resourceStreams) setID(st *resourceStream, id int64) {
	r.mu.Lock()
	if r.byID == nil {
		r.byID = map[int64]*resourceStream{}
	}
	r.byID[id] = st
	r.mu.Unlock()
}

func (r *resourceStreams) clearID(id int64) {
	r.mu.Lock()
	delete(r.byID, id)
	r.mu.Unlock()
}

// subscribeListen opens the listen stream for uri, unless one is open, and
// waits for the server to grant it.
func (s *Session) subscribeListen(ctx context.Context, uri string) error {
	r := &s.rstreams
	r.mu.Lock()
	if r.byURI[uri] != nil {
		r.mu.Unlock()
		return nil
	}
	if r.byURI == nil {
		r.byURI = map[string]*resourceStream{}
	}
	sctx, cancel := context.WithCancel(s.readerCtx)
	st := &resourceStream{uri: uri, cancel: cancel, acked: make(chan mcp.SubscriptionFilter, 1), done: make(chan struct{})}
	r.byURI[uri] = st
	r.mu.Unlock()
	s.wg.Add(1)
	go s.resourceListen(sctx, st)

	select {
	case granted := <-st.acked:
		if !slices.Contains(granted.ResourceSubscriptions, uri) {
			s.closeResourceStream(ctx, uri)
			return fmt.Errorf("%w: the server did not grant a subscription to %s", ErrCapability, uri)
		}
		return nil
	case <-st.done:
		s.forgetResourceStream(st)
		return fmt.Errorf("subscribe to %s: %w", uri, st.err)
	case <-ctx.Done():
		s.closeResourceStream(context.Background(), uri)
		return fmt.Errorf("subscribe to %s: %w", uri, context.Cause(ctx))
	}
}

// resourceListen holds st's stream open until ctx ends: the stream's own
// goroutine, one of the session's.
func (s *Session) resourceListen(ctx context.Context, st *resourceStream) {
	defer s.wg.Done()
	defer close(st.done)
	params, _ := json.Marshal(mcp.SubscriptionsListenParams{Notifications: mcp.SubscriptionFilter{ResourceSubscriptions: []string{st.uri}}})
	var pace reopenPace
	for {
		n := s.nextID.Add(1)
		s.rstreams.setID(st, n)
		opened := time.Now()
		_, err := s.roundTripID(ctx, n, mcp.MethodSubscriptionsListen, params, true, nil)
		s.rstreams.clearID(n)
		if ctx.Err() != nil {
			return // unsubscribed, or the session is closing
		}
		select {
		case <-s.done:
			st.err = s.err
			return
		default:
		}
		s.rstreams.mu.Lock()
		acked := st.gotAck
		s.rstreams.mu.Unlock()
		var rpcErr *mcp.Error
		switch {
		case errors.As(err, &rpcErr):
			st.err = err
			s.log.Debug("mcp: subscriptions/listen for a resource refused", "uri", st.uri, "err", err)
			return
		case !acked:
			st.err = fmt.Errorf("%w: subscriptions/listen ended before it was acknowledged (%v)", ErrProtocol, err)
			return
		}
		s.log.Debug("mcp: resource listen stream ended; re-opening", "uri", st.uri, "err", err)
		if !pace.wait(opened, ctx.Done()) {
			return
		}
	}
}

// closeResourceStream ends uri's stream and waits, bounded by ctx, for its
// goroutine.
func (s *Session) closeResourceStream(ctx context.Context, uri string) error {
	r := &s.rstreams
	r.mu.Lock()
	st := r.byURI[uri]
	delete(r.byURI, uri)
	r.mu.Unlock()
	if st == nil {
		return nil
	}
	st.cancel()
	select {
	case <-st.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("unsubscribe from %s: %w", uri, context.Cause(ctx))
	}
}

// forgetResourceStream drops a stream that ended on its own.
func (s *Session) forgetResourceStream(st *resourceStream) {
	r := &s.rstreams
	r.mu.Lock()
	if r.byURI[st.uri] == st {
		delete(r.byURI, st.uri)
	}
	r.mu.Unlock()
	st.cancel()
}

// subscriptionID returns the _meta subscriptionId of a notification's
// params, if it is one of our (numeric) ids.
func subscriptionID(params json.RawMessage) (int64, bool) {
	var p struct {
		Meta mcp.Meta `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return 0, false
	}
	id, ok := p.Meta.SubscriptionID()
	if !ok {
		return 0, false
	}
	return id.Int64()
}

// resourceAck hands an acknowledgement to the resource stream it names;
// it reports false when it names none (the list-changes stream's). It runs
// on the reader goroutine.
func (s *Session) resourceAck(params json.RawMessage) bool {
	id, ok := subscriptionID(params)
	if !ok {
		return false
	}
	r := &s.rstreams
	r.mu.Lock()
	st := r.byID[id]
	first := st != nil && !st.gotAck
	if st != nil {
		st.gotAck = true
	}
	r.mu.Unlock()
	if st == nil {
		return false
	}
	var ack mcp.SubscriptionsAcknowledgedParams
	if err := json.Unmarshal(params, &ack); err != nil {
		s.log.Warn("mcp: bad subscriptions acknowledgement", "err", err)
		return true
	}
	if first {
		st.acked <- ack.Notifications
	} else if !slices.Contains(ack.Notifications.ResourceSubscriptions, st.uri) {
		s.log.Warn("mcp: a re-opened listen stream no longer grants the resource subscription", "uri", st.uri)
	}
	return true
}

// resourceUpdateLive reports whether a 2026-07-28 resources/updated belongs
// to an open stream for its URI. One without a subscriptionId is let
// through, to be routed by URI alone. It runs on the reader goroutine.
func (s *Session) resourceUpdateLive(params json.RawMessage) bool {
	id, ok := subscriptionID(params)
	if !ok {
		return true
	}
	var p mcp.ResourceUpdatedParams
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	r := &s.rstreams
	r.mu.Lock()
	st := r.byID[id]
	r.mu.Unlock()
	if st == nil || st.uri != p.URI {
		s.log.Debug("mcp: resource update for no open subscription; dropped", "uri", p.URI, "subscriptionId", id)
		return false
	}
	return true
}
