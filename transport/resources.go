package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tako-mcp/tako/mcp"
)

// Resource subscriptions (checklist §6D). Before 2026-07-28 a client
// subscribes to one URI with resources/subscribe, if the server declares
// resources.subscribe, and the server then sends
// notifications/resources/updated for it. SubscribeResource takes a
// callback per URI, so the caller need not filter the session's
// notifications itself; the notifications also reach Subscribe as before.
//
// 2026-07-28 moves resource subscriptions onto subscriptions/listen
// streams (resourceSubscriptions): there SubscribeResource opens a stream
// for the URI and UnsubscribeResource closes it (resourcelisten.go). The
// caller sees no difference.
//
// A legacy session the server forgot (and that the engine renewed) has
// lost its subscriptions on the server's side: subscribe again after
// ServerInfo shows a new session, or poll.

// SubscribeResource subscribes to updates of the resource at p.URI and calls
// fn with each notifications/resources/updated for it, on the session's
// event goroutine (in order; fn must not block for long, nor wait for a
// call on this session). Subscribing again to the same URI replaces fn. A
// server that does not declare resources.subscribe gives an error wrapping
// ErrCapability, with nothing sent. fn is registered before the request
// goes out, so an update that races the answer is not lost; it is removed
// again if the request fails. On 2026-07-28, SubscribeResource returns
// once the server has acknowledged the URI's listen stream and granted
// the subscription.
func (s *Session) SubscribeResource(ctx context.Context, p *mcp.SubscribeParams, fn func(*mcp.ResourceUpdatedParams)) error {
	if p == nil || p.URI == "" {
		return errors.New("mcp: SubscribeResource needs the resource's URI")
	}
	uri := p.URI
	if err := s.canSubscribe(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.resourceSubs == nil {
		s.resourceSubs = map[string]func(*mcp.ResourceUpdatedParams){}
	}
	prev, had := s.resourceSubs[uri]
	s.resourceSubs[uri] = fn
	s.mu.Unlock()
	s.resourceOnce.Do(func() { s.Subscribe(s.resourceUpdated) })
	var err error
	if s.modern {
		err = s.subscribeListen(ctx, uri)
	} else {
		err = s.Call(ctx, mcp.MethodResourcesSubscribe, &mcp.SubscribeParams{URI: uri}, nil)
	}
	if err != nil {
		s.mu.Lock()
		if had {
			s.resourceSubs[uri] = prev
		} else {
			delete(s.resourceSubs, uri)
		}
		s.mu.Unlock()
	}
	return err
}

// UnsubscribeResource ends the subscription to p.URI: the callback is removed
// at once, then resources/unsubscribe is sent, or, on 2026-07-28, the URI's
// listen stream is closed and waited for (bounded by ctx). The same
// capability rules as SubscribeResource apply.
func (s *Session) UnsubscribeResource(ctx context.Context, p *mcp.SubscribeParams) error {
	if p == nil || p.URI == "" {
		return errors.New("mcp: UnsubscribeResource needs the resource's URI")
	}
	uri := p.URI
	if err := s.canSubscribe(); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.resourceSubs, uri)
	s.mu.Unlock()
	if s.modern {
		return s.closeResourceStream(ctx, uri)
	}
	return s.Call(ctx, mcp.MethodResourcesUnsubscribe, &mcp.SubscribeParams{URI: uri}, nil)
}

func (s *Session) canSubscribe() error {
	if r := s.ServerInfo().Capabilities.Resources; r == nil || !r.Subscribe {
		return fmt.Errorf("%w: resources.subscribe", ErrCapability)
	}
	return nil
}

// resourceUpdated routes notifications/resources/updated to the callback
// of its URI. It runs on the event goroutine.
func (s *Session) resourceUpdated(n mcp.Notification) {
	if n.Method != mcp.NotificationResourceUpdated {
		return
	}
	var p mcp.ResourceUpdatedParams
	if err := json.Unmarshal(n.Params, &p); err != nil {
		s.log.Warn("mcp: bad notifications/resources/updated", "err", err)
		return
	}
	s.mu.Lock()
	fn := s.resourceSubs[p.URI]
	s.mu.Unlock()
	if fn != nil {
		fn(&p)
	}
}
