package inspect

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// recConn is a message Conn that records every message both ways in the
// history before passing it on. It passes through what the engine looks
// for on a Conn: Informed (Streamable HTTP's protocol state),
// SkipReporter and Abort (stdio's); where the Conn has none of them, each
// method does what the engine does without it. The Pusher path is
// pushConn's, for Conns that push (all of tako's do).
type recConn struct {
	inner  transport.Conn
	record func(dir string, m *mcp.Message)
}

// pushConn is a recConn over a Conn that pushes its messages.
type pushConn struct{ *recConn }

// wrapConn returns c recording into record.
func wrapConn(c transport.Conn, record func(dir string, m *mcp.Message)) transport.Conn {
	rc := &recConn{inner: c, record: record}
	if _, ok := c.(transport.Pusher); ok {
		return pushConn{rc}
	}
	return rc
}

func (c *recConn) Read(ctx context.Context) (*mcp.Message, error) {
	m, err := c.inner.Read(ctx)
	if err == nil {
		c.record(dirIn, m)
	}
	return m, err
}

func (c *recConn) Write(ctx context.Context, m *mcp.Message) error {
	c.record(dirOut, m)
	return c.inner.Write(ctx, m)
}

func (c *recConn) Close() error { return c.inner.Close() }

// WriteRequest implements transport.Informed.
func (c *recConn) WriteRequest(ctx context.Context, m *mcp.Message, info *transport.RequestInfo) error {
	c.record(dirOut, m)
	if in, ok := c.inner.(transport.Informed); ok {
		return in.WriteRequest(ctx, m, info)
	}
	return c.inner.Write(ctx, m)
}

// SetProtocol implements transport.Informed.
func (c *recConn) SetProtocol(v string) {
	if in, ok := c.inner.(transport.Informed); ok {
		in.SetProtocol(v)
	}
}

// NewSession implements transport.Informed.
func (c *recConn) NewSession() {
	if in, ok := c.inner.(transport.Informed); ok {
		in.NewSession()
	}
}

// SwitchWire implements transport.Informed: the older HTTP wire is the
// inner Conn's to switch to, and what it then carries is recorded as before.
func (c *recConn) SwitchWire(ctx context.Context) error {
	if in, ok := c.inner.(transport.Informed); ok {
		return in.SwitchWire(ctx)
	}
	return errors.New("this connection has no older wire")
}

// ToolsListed implements transport.Informed.
func (c *recConn) ToolsListed(tools []mcp.Tool) map[string]error {
	if in, ok := c.inner.(transport.Informed); ok {
		return in.ToolsListed(tools)
	}
	return nil
}

// Skipped implements transport.SkipReporter.
func (c *recConn) Skipped() error {
	if sr, ok := c.inner.(transport.SkipReporter); ok {
		return sr.Skipped()
	}
	return nil
}

// Abort is stdio's: the process group killed at once.
func (c *recConn) Abort() {
	if a, ok := c.inner.(interface{ Abort() }); ok {
		a.Abort()
	}
}

// SessionID is Streamable HTTP's legacy session id, for the info page.
func (c *recConn) SessionID() string {
	if s, ok := c.inner.(interface{ SessionID() string }); ok {
		return s.SessionID()
	}
	return ""
}

// Stderr is what a stdio server wrote on its stderr (the last of it).
func (c *recConn) Stderr() string {
	if s, ok := c.inner.(interface{ Stderr() string }); ok {
		return s.Stderr()
	}
	return ""
}

// Push implements transport.Pusher: each message is recorded as the Conn
// delivers it, in its order.
func (c pushConn) Push(deliver func(*mcp.Message, error)) {
	c.inner.(transport.Pusher).Push(func(m *mcp.Message, err error) {
		if err == nil && m != nil {
			c.record(dirIn, m)
		}
		deliver(m, err)
	})
}

// The directions of a history entry.
const (
	dirOut = "out" // client to server
	dirIn  = "in"  // server to client
	dirOp  = "op"  // an operation of a transport without messages (gRPC)
)

// kindOf names a message's kind for the history.
func kindOf(m *mcp.Message) string {
	switch {
	case m.IsRequest():
		return "request"
	case m.IsNotification():
		return "notification"
	case m.Error != nil:
		return "error"
	}
	return "response"
}

// messageFacts are what grouping needs from a message: its progress token,
// the request a cancellation or a progress names, an input_required
// result's requestState, a request's requestState, a task's id.
type messageFacts struct {
	progressToken string
	cancelled     string // the requestId of notifications/cancelled
	requestState  string // of a request (a retry after input_required)
	inputRequired string // the requestState of an input_required result
	taskID        string // a task created (result) or named (params)
	name          string // a tools/call's or prompts/get's name, a read's uri
}

// factsOf reads the facts of m. It decodes only the small members it
// needs, never a result's content.
func factsOf(m *mcp.Message) messageFacts {
	var f messageFacts
	if len(m.Params) > 0 {
		var p struct {
			Meta struct {
				ProgressToken json.RawMessage `json:"progressToken"`
			} `json:"_meta"`
			ProgressToken json.RawMessage `json:"progressToken"`
			RequestID     json.RawMessage `json:"requestId"`
			RequestState  *string         `json:"requestState"`
			TaskID        string          `json:"taskId"`
			Name          string          `json:"name"`
			URI           string          `json:"uri"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			f.progressToken = string(p.Meta.ProgressToken)
			if m.Method == mcp.NotificationProgress {
				f.progressToken = string(p.ProgressToken)
			}
			if m.Method == mcp.NotificationCancelled {
				f.cancelled = string(p.RequestID)
			}
			if p.RequestState != nil {
				f.requestState = *p.RequestState
			}
			f.taskID = p.TaskID
			f.name = p.Name
			if f.name == "" {
				f.name = p.URI
			}
		}
	}
	if len(m.Result) > 0 && len(m.Result) < 1<<16 {
		var r struct {
			ResultType   string  `json:"resultType"`
			RequestState *string `json:"requestState"`
			Task         struct {
				TaskID string `json:"taskId"`
			} `json:"task"`
			TaskID string `json:"taskId"`
		}
		if json.Unmarshal(m.Result, &r) == nil {
			if r.ResultType == "input_required" && r.RequestState != nil {
				f.inputRequired = *r.RequestState
			}
			f.taskID = r.Task.TaskID
			if f.taskID == "" {
				f.taskID = r.TaskID
			}
		}
	}
	return f
}
