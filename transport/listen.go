package transport

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/tako-mcp/tako/mcp"
)

// On 2026-07-28 a server pushes list changes and resource updates only on a
// subscriptions/listen stream (checklist §4C.8, §6C): a long-lived request
// whose notifications carry its id as _meta subscriptionId, and whose
// response, when it comes, ends the stream. The session keeps one open for
// as long as it lives, re-opening it with backoff when it ends, so that
// Subscribe works the same in both eras.

// errServerCancelled completes a call the server itself cancelled
// (notifications/cancelled for one of our ids; servers end a listen stream
// that way).
var errServerCancelled = errors.New("mcp: the server cancelled the request")

// startListen opens the listen stream if the server declares anything it
// could push.
func (s *Session) startListen(caps mcp.ServerCapabilities) {
	filter := map[string]any{}
	if caps.Tools != nil && caps.Tools.ListChanged {
		filter["toolsListChanged"] = true
	}
	if caps.Prompts != nil && caps.Prompts.ListChanged {
		filter["promptsListChanged"] = true
	}
	if caps.Resources != nil && caps.Resources.ListChanged {
		filter["resourcesListChanged"] = true
	}
	if len(filter) == 0 {
		return
	}
	params, _ := json.Marshal(map[string]any{"notifications": filter})
	s.mu.Lock()
	s.listenFilter = filter
	s.mu.Unlock()
	s.wg.Add(1)
	go s.listenLoop(params)
}

func (s *Session) listenLoop(params json.RawMessage) {
	defer s.wg.Done()
	var pace reopenPace
	for {
		opened := time.Now()
		_, err := s.roundTrip(s.readerCtx, mcp.MethodSubscriptionsListen, params, true, nil)
		select {
		case <-s.done:
			return
		default:
		}
		var rpcErr *mcp.Error
		if errors.As(err, &rpcErr) {
			// The server does not offer listen streams (or refuses this
			// filter): nothing to re-open.
			s.log.Debug("mcp: subscriptions/listen refused", "err", err)
			return
		}
		if err != nil && !errors.Is(err, errServerCancelled) {
			s.log.Debug("mcp: subscriptions/listen ended", "err", err)
		}
		if !pace.wait(opened, s.done) {
			return
		}
	}
}

// reopenPace paces the re-opening of a listen stream that ended: 500 ms,
// doubling up to 30 s, and back to 500 ms after a stream that lasted a
// minute (a server that ends streams now and then, not one that refuses
// them). The zero value is ready to use.
type reopenPace struct{ d time.Duration }

// wait sleeps before the next opening of a stream opened at opened, and
// reports false if done closes first.
func (p *reopenPace) wait(opened time.Time, done <-chan struct{}) bool {
	if p.d == 0 || time.Since(opened) > time.Minute {
		p.d = 500 * time.Millisecond
	}
	t := time.NewTimer(p.d)
	defer t.Stop()
	select {
	case <-done:
		return false
	case <-t.C:
	}
	p.d = min(p.d*2, 30*time.Second)
	return true
}

// checkAck compares what the server granted a listen stream with what was
// asked (checklist §4C.8 [S]): a filter member it left out will never push,
// and a caller waiting for it should know why.
func (s *Session) checkAck(params json.RawMessage) {
	var ack struct {
		Notifications map[string]json.RawMessage `json:"notifications"`
	}
	if err := json.Unmarshal(params, &ack); err != nil {
		s.log.Warn("mcp: bad subscriptions acknowledgement", "err", err)
		return
	}
	s.mu.Lock()
	asked := s.listenFilter
	s.mu.Unlock()
	for k := range asked {
		if string(ack.Notifications[k]) != "true" {
			s.log.Warn("mcp: the server did not grant a subscription; those changes will not be pushed", "filter", k)
		}
	}
}
