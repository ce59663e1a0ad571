package inspect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// The server's requests to the person. Elicitations and sampling requests
// come to the session's handlers, on a goroutine of the session's for each
// (bounded by transport.Options.MaxServerRequests); each waits here for
// the person's answer in the page, for the request's own end, or for
// pendingTimeout, whichever comes first. Roots are the page's list.
//
// On the person's request (the History page's "Pause at input_required"),
// a round that a 2026-07-28 server answers with input_required is held
// the same way before the engine answers it: the page shows what the
// server asks for, and the person lets the call go on (its elicitations
// and sampling requests then come to the page as ever, its roots are the
// page's, which the person may edit while it waits) or stops it there.
// The hold is a transport.Middleware, so it sees each round as the wire
// had it; the history has the input_required result already, since the
// recording Conn sits below the engine.

// serverRequest is one request waiting for the person.
type serverRequest struct {
	ID     string          `json:"id"`
	Server string          `json:"server"`
	Kind   string          `json:"kind"` // "elicitation", "sampling" or "paused"
	Time   time.Time       `json:"time"`
	Params json.RawMessage `json:"params"`

	answered chan struct{}
	once     sync.Once
	result   any
	err      error
}

func (r *serverRequest) finish(result any, err error) bool {
	done := false
	r.once.Do(func() {
		r.result, r.err = result, err
		close(r.answered)
		done = true
	})
	return done
}

// ask publishes a request and waits for its answer.
func (s *server) ask(ctx context.Context, kind string, params any) (any, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.state == stateClosed {
		s.mu.Unlock()
		return nil, errors.New("the inspector is closing")
	}
	s.nextReq++
	r := &serverRequest{ID: fmt.Sprintf("%s-r%d", s.id, s.nextReq), Server: s.id, Kind: kind, Time: time.Now(), Params: raw, answered: make(chan struct{})}
	s.pending[r.ID] = r
	s.mu.Unlock()
	s.ins.events.publish("request", r)
	defer func() {
		s.mu.Lock()
		delete(s.pending, r.ID)
		s.mu.Unlock()
		s.ins.events.publish("request-done", map[string]string{"server": s.id, "id": r.ID})
	}()
	t := time.NewTimer(pendingTimeout)
	defer t.Stop()
	select {
	case <-r.answered:
		return r.result, r.err
	case <-ctx.Done():
		r.finish(nil, context.Cause(ctx))
		return nil, context.Cause(ctx)
	case <-t.C:
		err := fmt.Errorf("nobody answered in the page within %s", pendingTimeout)
		r.finish(nil, err)
		return nil, err
	}
}

// withdrawTaskRequests ends the questions a task put to the person once
// the person has cancelled that task: a server need not withdraw a
// request of a task it has cancelled, and the page must not go on asking
// about work that no longer runs. The server gets an error for each.
func (s *server) withdrawTaskRequests(taskID string) {
	s.mu.Lock()
	var open []*serverRequest
	for _, r := range s.pending {
		var p struct {
			Meta mcp.Meta `json:"_meta"`
		}
		if json.Unmarshal(r.Params, &p) == nil {
			if id, ok := p.Meta.RelatedTask(); ok && id == taskID {
				open = append(open, r)
			}
		}
	}
	s.mu.Unlock()
	for _, r := range open {
		r.finish(nil, fmt.Errorf("the person cancelled task %s", taskID))
	}
}

// elicit is the Elicitation handler: a form (or, in URL mode, a consent
// to open a URL) shown to the person.
func (s *server) elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	res, err := s.ask(ctx, "elicitation", p)
	if err != nil {
		return nil, err
	}
	return res.(*mcp.ElicitResult), nil
}

// sample is the Sampling handler: the person reads the messages and
// writes the answer, or declines.
func (s *server) sample(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	res, err := s.ask(ctx, "sampling", p)
	if err != nil {
		return nil, err
	}
	return res.(*mcp.CreateMessageResult), nil
}

// listRoots is the Roots handler: the roots edited in the page.
func (s *server) listRoots(context.Context) ([]mcp.Root, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]mcp.Root{}, s.roots...), nil
}

// paused is what the page is shown of a round held at input_required:
// the request's method and wire id, and the server's result with its
// inputRequests and requestState.
type paused struct {
	Method string          `json:"method"`
	ID     string          `json:"id"`
	Result json.RawMessage `json:"result"`
}

// errStopped is the error of a call the person stopped at input_required.
var errStopped = errors.New("stopped at input_required by the person in the page")

// setPause turns the hold at input_required on or off.
func (s *server) setPause(on bool) {
	s.mu.Lock()
	s.pause = on
	s.mu.Unlock()
	s.publish()
}

// pauseAtInputRequired is the session's middleware that holds a round
// answered with input_required, while the person asked for that, until
// they let it go on or stop the call.
func (s *server) pauseAtInputRequired(next transport.Handler) transport.Handler {
	return func(ctx context.Context, req *transport.Request) (json.RawMessage, error) {
		res, err := next(ctx, req)
		s.mu.Lock()
		on := s.pause
		s.mu.Unlock()
		if err != nil || !on {
			return res, err
		}
		if rt, perr := mcp.ParseResultType(res); perr != nil || rt != mcp.ResultTypeInputRequired {
			return res, nil
		}
		if _, err := s.ask(ctx, "paused", paused{Method: req.Method, ID: string(req.ID.AppendJSON(nil)), Result: res}); err != nil {
			return nil, err
		}
		return res, nil
	}
}

// answer is the page's answer to a request.
type answer struct {
	// Action: accept, decline or cancel (an elicitation); approve or
	// decline (a sampling request); continue or stop (a round paused at
	// input_required).
	Action string `json:"action"`
	// Content is an accepted form's values.
	Content map[string]any `json:"content"`
	// Text, Model and StopReason are a sampling answer's.
	Text       string `json:"text"`
	Model      string `json:"model"`
	StopReason string `json:"stopReason"`
}

// answerRequest delivers the page's answer to the request id.
func (s *server) answerRequest(id string, a answer) error {
	s.mu.Lock()
	r := s.pending[id]
	s.mu.Unlock()
	if r == nil {
		return &apiError{status: 404, msg: "no such request waits (it was answered, cancelled, or timed out)"}
	}
	var (
		result any
		err    error
	)
	switch r.Kind {
	case "elicitation":
		switch a.Action {
		case mcp.ElicitAccept:
			result = &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: a.Content}
		case mcp.ElicitDecline, mcp.ElicitCancel:
			result = &mcp.ElicitResult{Action: a.Action}
		default:
			return &apiError{status: 400, msg: "an elicitation is answered with accept, decline or cancel"}
		}
	case "sampling":
		switch a.Action {
		case "approve":
			model := a.Model
			if model == "" {
				model = "a person, through tako inspect"
			}
			stop := a.StopReason
			if stop == "" {
				stop = mcp.StopEndTurn
			}
			content, _ := json.Marshal(map[string]string{"type": "text", "text": a.Text})
			result = &mcp.CreateMessageResult{Role: "assistant", Content: content, Model: model, StopReason: stop}
		case "decline":
			err = &mcp.Error{Code: -1, Message: "the user declined the sampling request"}
		default:
			return &apiError{status: 400, msg: "a sampling request is answered with approve or decline"}
		}
	case "paused":
		switch a.Action {
		case "continue":
		case "stop":
			err = errStopped
		default:
			return &apiError{status: 400, msg: "a call paused at input_required is answered with continue or stop"}
		}
	}
	if !r.finish(result, err) {
		return &apiError{status: 409, msg: "the request was answered already"}
	}
	return nil
}

// setRoots replaces the roots, and tells a legacy server they changed.
func (s *server) setRoots(ctx context.Context, roots []mcp.Root) error {
	for _, r := range roots {
		u, err := url.Parse(r.URI)
		if err != nil || u.Scheme != "file" || !strings.HasPrefix(r.URI, "file://") {
			return &apiError{status: 400, msg: fmt.Sprintf("a root is a file:// URI, not %q", r.URI)}
		}
	}
	s.mu.Lock()
	s.roots = append([]mcp.Root{}, roots...)
	sess := s.sess
	s.mu.Unlock()
	s.publish()
	if sess != nil {
		return sess.NotifyRootsChanged(ctx)
	}
	return nil
}
