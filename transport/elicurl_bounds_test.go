package transport_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// urlElicitation is a URL elicitation as a real server lists it: a
// message with quotes, a line break and non-ASCII text, and a URL with a
// query.
func urlElicitation(id string) mcp.ElicitParams {
	return mcp.ElicitParams{
		Message:       "Bitte bei „Zahlungsdienst\" anmelden —\nKonto \"Zoë Ørsted\" (" + id + ")",
		URL:           "https://auth.example.com/authorize?state=" + id + "&lang=de-DE",
		ElicitationID: id,
	}
}

// required is a -32042 answer to m listing the elicitations of ids.
func required(m *mcp.Message, ids ...string) *mcp.Message {
	els := make([]mcp.ElicitParams, len(ids))
	for i, id := range ids {
		els[i] = urlElicitation(id)
	}
	return &mcp.Message{ID: m.ID, Error: mcp.NewURLElicitationRequiredError("Anmeldung erforderlich: „Zahlungen\"", els...)}
}

func doneResult(m *mcp.Message) *mcp.Message {
	return result(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "Überweisung „Q3\" ausgeführt\n"}}})
}

// TestURLElicitationRecordIsBounded pins the bound on the session's
// record of elicitation ids (maxTrackedElicitations, 256). Every id a
// server lists in a -32042 is remembered so that its completion can be
// matched; without the bound a server that keeps sending new ids makes
// the client's memory grow without end. The oldest id goes first: a
// handler still waiting on it is told it is no longer tracked.
//
// The first call's elicitation is left waiting for its completion while
// the server fails seventeen more calls with sixteen new ids each (272,
// more than the bound); the first call must then end with the
// "no longer tracked" error.
func TestURLElicitationRecordIsBounded(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	_, conn := startFake(t, legacy(mcp.Version20251125, func(m *mcp.Message) *mcp.Message {
		if m.Method != mcp.MethodToolsCall {
			return rpcError(m.ID, mcp.CodeMethodNotFound, "no", "")
		}
		mu.Lock()
		n := calls
		calls++
		mu.Unlock()
		if n == 0 {
			return required(m, "el-first")
		}
		ids := make([]string, 16)
		for i := range ids {
			ids[i] = fmt.Sprintf("el-%d-%d", n, i)
		}
		return required(m, ids...)
	}))
	waiting := make(chan struct{})
	s := connect(t, conn, &transport.Options{Handlers: transport.Handlers{
		ElicitationURL: true,
		Elicitation: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			if p.ElicitationID != "el-first" {
				return &mcp.ElicitResult{Action: mcp.ElicitDecline}, nil
			}
			close(waiting)
			<-ctx.Done()
			return nil, context.Cause(ctx)
		},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*fakeWait)
	defer cancel()
	first := make(chan error, 1)
	go func() {
		_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "pay", Arguments: json.RawMessage(`{"to":"Zoë","memo":"Q3 „Bericht\""}`)})
		first <- err
	}()
	within(t, waiting, "the first elicitation's handler")
	for i := 0; i < 17; i++ {
		_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "pay", Arguments: json.RawMessage(`{"to":"Zoë"}`)})
		var ue *transport.URLElicitationError
		if !errors.As(err, &ue) {
			t.Fatalf("call %d: %v, want a declined URL elicitation", i+2, err)
		}
	}
	err := within(t, first, "the first call to end once its elicitation was pushed out of the record")
	if err == nil || !strings.Contains(err.Error(), "no longer tracked") {
		t.Fatalf("first call: %v, want the error that its elicitation is no longer tracked", err)
	}
}

// TestURLElicitationErrorOverSixteenRefused pins maxURLElicitations: one
// -32042 may make the client walk the user through at most sixteen URLs.
// A server listing more (a broken or hostile one could list thousands of
// pages to open) gets a protocol error, and the user is shown none of
// them.
func TestURLElicitationErrorOverSixteenRefused(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	f, conn := startFake(t, legacy(mcp.Version20251125, func(m *mcp.Message) *mcp.Message {
		if m.Method != mcp.MethodToolsCall {
			return rpcError(m.ID, mcp.CodeMethodNotFound, "no", "")
		}
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n > 1 {
			return doneResult(m)
		}
		ids := make([]string, 17)
		for i := range ids {
			ids[i] = fmt.Sprintf("el-%02d", i)
		}
		return required(m, ids...)
	}))
	var shown []string
	s := connect(t, conn, &transport.Options{Handlers: transport.Handlers{
		ElicitationURL: true,
		Elicitation: func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			mu.Lock()
			shown = append(shown, p.ElicitationID)
			mu.Unlock()
			return &mcp.ElicitResult{Action: mcp.ElicitAccept}, nil
		},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), fakeWait)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "pay", Arguments: json.RawMessage(`{"to":"Zoë"}`)})
	if !errors.Is(err, transport.ErrProtocol) {
		t.Fatalf("CallTool after a -32042 listing 17 elicitations: %+v, %v; want an error wrapping ErrProtocol", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(shown) != 0 {
		t.Errorf("the handler was shown %d elicitations of a -32042 listing more than 16: %v", len(shown), shown)
	}
	if n := len(f.messages(mcp.MethodToolsCall)); n != 1 {
		t.Errorf("%d tools/call, want 1 (no retry)", n)
	}
}

// TestURLElicitationAlreadyCompleteNotShownAgain pins the skip of an
// elicitation the server has already reported complete. A server may list
// again, in a later -32042, an elicitation the user finished (the login
// of an earlier call, next to a new payment approval); showing it again
// sends the user back to a page they are done with, and a handler that
// waits for a completion that already came waits in vain. Only the new one
// may reach the handler.
func TestURLElicitationAlreadyCompleteNotShownAgain(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	f, conn := startFake(t, legacy(mcp.Version20251125, func(m *mcp.Message) *mcp.Message {
		if m.Method != mcp.MethodToolsCall {
			return rpcError(m.ID, mcp.CodeMethodNotFound, "no", "")
		}
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		switch n {
		case 1:
			return required(m, "el-login")
		case 3:
			return required(m, "el-login", "el-approve")
		}
		return doneResult(m)
	}))
	started := make(chan struct{}, 1)
	var shown []string
	s := connect(t, conn, &transport.Options{Handlers: transport.Handlers{
		ElicitationURL: true,
		Elicitation: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			mu.Lock()
			shown = append(shown, p.ElicitationID)
			mu.Unlock()
			if p.ElicitationID != "el-login" {
				return &mcp.ElicitResult{Action: mcp.ElicitAccept}, nil
			}
			// Show the page and wait for the server to say the user is done.
			select {
			case started <- struct{}{}:
			default:
			}
			<-ctx.Done()
			if !errors.Is(context.Cause(ctx), transport.ErrElicitationComplete) {
				return nil, context.Cause(ctx)
			}
			return &mcp.ElicitResult{Action: mcp.ElicitAccept}, nil
		},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), fakeWait)
	defer cancel()
	go func() {
		select {
		case <-started:
		case <-ctx.Done():
			return
		}
		n := &mcp.Message{Method: mcp.NotificationElicitationComplete, Params: json.RawMessage(`{"elicitationId":"el-login"}`)}
		_ = f.conn.Write(ctx, n)
	}()
	for i := 0; i < 2; i++ {
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "pay", Arguments: json.RawMessage(`{"to":"Zoë","memo":"Q3 „Bericht\"\n"}`)})
		if err != nil || !strings.HasPrefix(res.Text(), "Überweisung") {
			t.Fatalf("call %d: %+v, %v", i+1, res, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"el-login", "el-approve"}; fmt.Sprint(shown) != fmt.Sprint(want) {
		t.Errorf("the handler was shown %v, want %v: an elicitation the server reported complete was shown again", shown, want)
	}
	if n := len(f.messages(mcp.MethodToolsCall)); n != 4 {
		t.Errorf("%d tools/call, want 4 (each call retried once)", n)
	}
}
