package mcptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/tako-mcp/tako/mcp"
)

// CallRequest is one tools/call as a ToolHandler sees it. Its methods are
// safe for concurrent use by the handler's goroutines.
type CallRequest struct {
	// Name is the tool's name.
	Name string
	// Arguments is the arguments object exactly as the client sent it, or
	// nil when it sent none.
	Arguments json.RawMessage
	// Meta is the request's _meta (progressToken and, in the modern era,
	// the protocol keys).
	Meta mcp.Meta
	// ID is the JSON-RPC id of the request being served. In the modern era
	// every input_required round has a new one.
	ID mcp.ID
	// Round counts the input_required rounds before this run of the
	// handler: 0 on the first request, 1 on the first retry, and so on.
	// Always 0 in the legacy era.
	Round int

	peer          *Peer
	modern        bool
	version       string
	caps          mcp.ClientCapabilities
	logLevel      mcp.LoggingLevel // modern: from _meta; "" sends no logs
	progressToken json.RawMessage

	mu      sync.Mutex
	answers map[string]json.RawMessage // modern: inputs answered so far
	asks    int                        // modern: inputs asked for in this run
	ask     *inputAsk                  // modern: the first unanswered input
	missing string                     // capability that was missing
}

// inputAsk is an input the handler asked for that the client has not
// answered yet (modern era).
type inputAsk struct {
	key    string
	method string
	params json.RawMessage
}

// Peer returns the connection the request came on.
func (r *CallRequest) Peer() *Peer { return r.peer }

// Modern reports whether the request is served in the 2026-07-28 era.
func (r *CallRequest) Modern() bool { return r.modern }

// ProtocolVersion returns the revision of the request: the negotiated one
// (legacy) or the one in its _meta (modern).
func (r *CallRequest) ProtocolVersion() string { return r.version }

// ClientCapabilities returns what the client declared: at initialize
// (legacy) or in this request's _meta (modern).
func (r *CallRequest) ClientCapabilities() mcp.ClientCapabilities { return r.caps }

// ProgressToken returns the request's progress token as raw JSON, or nil
// if the client asked for no progress.
func (r *CallRequest) ProgressToken() json.RawMessage { return r.progressToken }

// BindArguments decodes the arguments into v. No arguments leave v as is.
func (r *CallRequest) BindArguments(v any) error {
	if len(r.Arguments) == 0 {
		return nil
	}
	if err := json.Unmarshal(r.Arguments, v); err != nil {
		return fmt.Errorf("tool %s: bad arguments: %w", r.Name, err)
	}
	return nil
}

// Progress sends notifications/progress for this request, if the client
// asked for progress; otherwise it does nothing. total <= 0 means unknown.
func (r *CallRequest) Progress(ctx context.Context, progress, total float64, message string) error {
	if len(r.progressToken) == 0 {
		return nil
	}
	p := mcp.ProgressParams{ProgressToken: r.progressToken, Progress: progress, Message: message}
	if total > 0 {
		p.Total = &total
	}
	return r.peer.Notify(ctx, mcp.NotificationProgress, p)
}

// Log sends notifications/message at the given level, if the client wants
// it: in the legacy era unless logging/setLevel asked for a higher level;
// in the modern era only if the request's _meta carries a log level at or
// below level (2026-07-28 servers must not log otherwise). data is
// marshalled as the message's data.
func (r *CallRequest) Log(ctx context.Context, level mcp.LoggingLevel, data any) error {
	rank := levelRank(level)
	if rank < 0 {
		return fmt.Errorf("mcptest: unknown logging level %q", level)
	}
	want := r.logLevel
	if !r.modern {
		r.peer.mu.Lock()
		want = r.peer.logLevel
		r.peer.mu.Unlock()
		if want == "" {
			want = "debug"
		}
	}
	if want == "" || rank < levelRank(want) {
		return nil
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	return r.peer.Notify(ctx, mcp.NotificationMessage, mcp.LoggingMessageParams{Level: level, Logger: r.peer.srv.info.Name, Data: raw})
}

// Notify sends the client a notification on this request's connection.
func (r *CallRequest) Notify(ctx context.Context, method string, params any) error {
	return r.peer.Notify(ctx, method, params)
}

// NotifyToolsListChanged tells the client on this request's connection that
// the tool list changed: a plain notification in the legacy era; in the
// modern era, one tagged notification per subscriptions/listen stream that
// asked for it or, if there is none, a plain one (so that a client without
// listen streams still sees it).
func (r *CallRequest) NotifyToolsListChanged(ctx context.Context) error {
	return r.peer.toolsListChanged(ctx, true)
}

// Sample asks the client's model for a completion (sampling/createMessage).
// See the package documentation for how it works in each era. It returns
// an error wrapping ErrMissingCapability if the client did not declare
// sampling, and the client's *mcp.Error if it refused.
func (r *CallRequest) Sample(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	if p == nil {
		return nil, errors.New("mcptest: Sample: nil params")
	}
	if r.caps.Sampling == nil {
		return nil, r.lacks("sampling")
	}
	var out mcp.CreateMessageResult
	if err := r.input(ctx, "sample", mcp.MethodSamplingCreateMessage, p, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Elicit asks the user for input through the client (elicitation/create).
// Form mode needs the elicitation capability, URL mode its url member.
func (r *CallRequest) Elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if p == nil {
		return nil, errors.New("mcptest: Elicit: nil params")
	}
	e := r.caps.Elicitation
	if e == nil {
		return nil, r.lacks("elicitation")
	}
	if p.Mode == "url" && e.URL == nil {
		return nil, r.lacks("elicitation.url")
	}
	if p.Mode != "url" && e.URL != nil && e.Form == nil {
		// A client that declares only url mode cannot do forms; an empty
		// object means form only.
		return nil, r.lacks("elicitation.form")
	}
	var out mcp.ElicitResult
	if err := r.input(ctx, "elicit", mcp.MethodElicitationCreate, p, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListRoots asks the client for its roots (roots/list).
func (r *CallRequest) ListRoots(ctx context.Context) ([]mcp.Root, error) {
	if r.caps.Roots == nil {
		return nil, r.lacks("roots")
	}
	var out mcp.ListRootsResult
	if err := r.input(ctx, "roots", mcp.MethodRootsList, nil, &out); err != nil {
		return nil, err
	}
	return out.Roots, nil
}

func (r *CallRequest) lacks(capability string) error {
	r.mu.Lock()
	if r.missing == "" {
		r.missing = capability
	}
	r.mu.Unlock()
	return fmt.Errorf("%w: %s", ErrMissingCapability, capability)
}

// missingCapability returns the ClientCapabilities a -32021 error's data
// names as required.
func (r *CallRequest) missingCapability() mcp.ClientCapabilities {
	r.mu.Lock()
	defer r.mu.Unlock()
	var c mcp.ClientCapabilities
	switch r.missing {
	case "sampling":
		c.Sampling = &mcp.SamplingCapability{}
	case "elicitation", "elicitation.form":
		c.Elicitation = &mcp.ElicitationCapability{Form: &struct{}{}}
	case "elicitation.url":
		c.Elicitation = &mcp.ElicitationCapability{URL: &struct{}{}}
	case "roots":
		c.Roots = &mcp.RootsCapability{}
	}
	return c
}

// input asks the client for one input and decodes the answer into out.
// Legacy: a server-to-client request. Modern: the answer from an earlier
// round if there is one, else remember the ask and return ErrInputRequired.
// Keys are "<kind>-<n>", n counting the inputs the handler asked for in
// this run, which is why a handler must ask in the same order every run.
func (r *CallRequest) input(ctx context.Context, kind, method string, params any, out any) error {
	if !r.modern {
		raw, err := r.peer.Request(ctx, method, params)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("mcptest: client's %s result: %w", method, err)
		}
		return nil
	}
	r.mu.Lock()
	key := fmt.Sprintf("%s-%d", kind, r.asks)
	r.asks++
	raw, answered := r.answers[key]
	if !answered && r.ask == nil {
		var praw json.RawMessage
		if params != nil {
			b, err := json.Marshal(params)
			if err != nil {
				r.mu.Unlock()
				return err
			}
			praw = b
		}
		r.ask = &inputAsk{key: key, method: method, params: praw}
	}
	r.mu.Unlock()
	if !answered {
		return fmt.Errorf("%w: %s (%s)", ErrInputRequired, method, key)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("mcptest: client's %s input response %s: %w", method, key, err)
	}
	return nil
}

func (r *CallRequest) pendingInput() *inputAsk {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ask
}
