package transport_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// urlServer fails tools/call with -32042 (elicitation e1) until the call
// has been retried once; before answering the first call it hands the test
// a way to send notifications.
func urlServer(t *testing.T) (*fakeServer, transport.Conn) {
	calls := 0
	return startFake(t, legacy(mcp.Version20251125, func(m *mcp.Message) *mcp.Message {
		if m.Method != mcp.MethodToolsCall {
			return rpcError(m.ID, mcp.CodeMethodNotFound, "no", "")
		}
		calls++
		if calls == 1 {
			e := mcp.NewURLElicitationRequiredError("", mcp.ElicitParams{Message: "log in", URL: "https://example.com/login", ElicitationID: "e1"})
			return &mcp.Message{ID: m.ID, Error: e}
		}
		return result(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}})
	}))
}

// TestURLElicitationRequiredRetried: after a -32042, the engine calls the
// handler with the listed elicitation; the handler waits for the server's
// notifications/elicitation/complete (its context ends with cause
// ErrElicitationComplete), and the original call is retried once with a
// new id. A fake peer: no real server sends the completion notification.
func TestURLElicitationRequiredRetried(t *testing.T) {
	f, conn := urlServer(t)
	started := make(chan *mcp.ElicitParams, 1)
	var cause error
	s := connect(t, conn, &transport.Options{Handlers: transport.Handlers{
		ElicitationURL: true,
		Elicitation: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			started <- p
			<-ctx.Done()
			cause = context.Cause(ctx)
			return nil, ctx.Err()
		},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() {
		p := <-started
		if p.URL != "https://example.com/login" || !p.IsURL() {
			t.Errorf("handler got %+v", p)
		}
		n := &mcp.Message{Method: mcp.NotificationElicitationComplete, Params: json.RawMessage(`{"elicitationId":"e1"}`)}
		_ = f.conn.Write(ctx, n)
	}()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "login"})
	if err != nil || res.Text() != "done" {
		t.Fatalf("CallTool: %+v %v", res, err)
	}
	if !errors.Is(cause, transport.ErrElicitationComplete) {
		t.Errorf("handler's context ended with %v, want ErrElicitationComplete", cause)
	}
	calls := f.messages(mcp.MethodToolsCall)
	if len(calls) != 2 || calls[0].ID.String() == calls[1].ID.String() {
		t.Fatalf("want two tools/call with different ids, got %d", len(calls))
	}
	// The completion came before this wait: it counts.
	if err := s.WaitElicitationComplete(ctx, "e1"); err != nil {
		t.Fatal(err)
	}
}

// TestURLElicitationDeclined: a declined URL elicitation is not retried;
// the error says so and still unwraps to the server's -32042.
func TestURLElicitationDeclined(t *testing.T) {
	f, conn := urlServer(t)
	s := connect(t, conn, &transport.Options{Handlers: transport.Handlers{
		ElicitationURL: true,
		Elicitation: func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitDecline}, nil
		},
	}})
	_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "login"})
	var ue *transport.URLElicitationError
	var rpcErr *mcp.Error
	if !errors.As(err, &ue) || ue.Action != mcp.ElicitDecline || ue.Elicitation.ElicitationID != "e1" ||
		!errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeURLElicitationRequired {
		t.Fatalf("err = %v", err)
	}
	if n := len(f.messages(mcp.MethodToolsCall)); n != 1 {
		t.Fatalf("%d tools/call, want 1", n)
	}
}

// TestURLElicitationWithoutURLMode: a client that did not declare URL mode
// gets the -32042 as it is.
func TestURLElicitationWithoutURLMode(t *testing.T) {
	_, conn := urlServer(t)
	s := connect(t, conn, &transport.Options{Handlers: transport.Handlers{
		Elicitation: func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			t.Error("handler called without URL mode")
			return &mcp.ElicitResult{Action: mcp.ElicitAccept}, nil
		},
	}})
	_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "login"})
	var rpcErr *mcp.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeURLElicitationRequired {
		t.Fatalf("err = %v", err)
	}
}

// TestURLElicitationCreateEndsOnCompletion: a server's elicitation/create
// in URL mode gets a handler whose context ends with cause
// ErrElicitationComplete once the server reports that elicitation
// complete, so a handler waiting for the user to come back from the page
// answers then; the answer is still sent. A fake peer: no real server
// sends the notification.
func TestURLElicitationCreateEndsOnCompletion(t *testing.T) {
	answers := make(chan *mcp.Message, 1)
	f, conn := startFake(t, legacy(mcp.Version20251125, func(m *mcp.Message) *mcp.Message {
		if m.IsResponse() {
			answers <- m
			return nil
		}
		return rpcError(m.ID, mcp.CodeMethodNotFound, "no", "")
	}))
	started := make(chan struct{})
	connect(t, conn, &transport.Options{Handlers: transport.Handlers{
		ElicitationURL: true,
		Elicitation: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			close(started)
			<-ctx.Done()
			if !errors.Is(context.Cause(ctx), transport.ErrElicitationComplete) {
				return nil, context.Cause(ctx)
			}
			return &mcp.ElicitResult{Action: mcp.ElicitAccept}, nil
		},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := &mcp.Message{ID: mcp.StringID("el-1"), Method: mcp.MethodElicitationCreate,
		Params: json.RawMessage(`{"mode":"url","message":"log in","url":"https://example.com/login","elicitationId":"e7"}`)}
	if err := f.conn.Write(ctx, req); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("the handler was not called")
	}
	done := &mcp.Message{Method: mcp.NotificationElicitationComplete, Params: json.RawMessage(`{"elicitationId":"e7"}`)}
	if err := f.conn.Write(ctx, done); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-answers:
		var res mcp.ElicitResult
		if m.ID != req.ID || m.Error != nil || json.Unmarshal(m.Result, &res) != nil || res.Action != mcp.ElicitAccept {
			t.Fatalf("answer %+v (result %s), want accept for %s", m, m.Result, req.ID)
		}
	case <-ctx.Done():
		t.Fatal("the elicitation was not answered after its completion")
	}
}
