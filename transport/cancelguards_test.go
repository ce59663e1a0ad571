package transport_test

// Guards of cancellation in both directions (call.go, serve.go) that a
// mutation audit found untested: the client never cancels initialize or
// its server/discover probe, and never answers a server request the
// server has cancelled.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// writeLog records the method, or the id of a response, of every message
// the client writes, whether or not the peer gets to read it before the
// connection closes.
type writeLog struct {
	transport.Conn

	mu      sync.Mutex
	written []*mcp.Message
}

func (c *writeLog) Write(ctx context.Context, m *mcp.Message) error {
	c.mu.Lock()
	c.written = append(c.written, &mcp.Message{ID: m.ID, Method: m.Method, Params: m.Params})
	c.mu.Unlock()
	return c.Conn.Write(ctx, m)
}

func (c *writeLog) cancellations() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, m := range c.written {
		if m.Method == mcp.NotificationCancelled {
			out = append(out, string(m.Params))
		}
	}
	return out
}

// TestHandshakeRequestsAreNeverCancelled pins the rule that the client
// does not send notifications/cancelled for initialize (the spec forbids
// it) nor for its server/discover probe: a probe given up after
// ProbeTimeout is how a silent legacy server is detected, not a request
// the server should abort, and a cancellation of either before the
// handshake confuses servers that reject anything before initialize.
func TestHandshakeRequestsAreNeverCancelled(t *testing.T) {
	t.Run("silent discover probe", func(t *testing.T) {
		h := legacy(mcp.Version20251125, echoTool)
		f, conn := startFake(t, func(f *fakeServer, m *mcp.Message) *mcp.Message {
			if m.Method == mcp.MethodDiscover {
				return nil // a legacy server that ignores what it does not know
			}
			return h(f, m)
		})
		wl := &writeLog{Conn: conn}
		s := connect(t, wl, &transport.Options{ProbeTimeout: 50 * time.Millisecond})
		if v := s.ServerInfo().ProtocolVersion; v != mcp.Version20251125 {
			t.Fatalf("version %q", v)
		}
		if got := wl.cancellations(); len(got) != 0 {
			t.Fatalf("the client sent notifications/cancelled for its handshake: %s", strings.Join(got, "; "))
		}
		// The pipe keeps order: what the client wrote before initialize
		// reached the server before it.
		f.waitFor(mcp.MethodInitialize, 1)
		if got := f.messages(mcp.NotificationCancelled); len(got) != 0 {
			t.Fatalf("the server received notifications/cancelled %s", got[0].Params)
		}
	})
	t.Run("unanswered initialize", func(t *testing.T) {
		_, conn := startFake(t, func(f *fakeServer, m *mcp.Message) *mcp.Message {
			switch m.Method {
			case mcp.MethodDiscover:
				return rpcError(m.ID, mcp.CodeMethodNotFound, "Method not found", "")
			}
			return nil // initialize is never answered
		})
		wl := &writeLog{Conn: conn}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		s, err := transport.Connect(ctx, wl, &transport.Options{ProtocolVersion: mcp.Version20251125})
		if err == nil {
			s.Close()
			t.Fatal("Connect succeeded against a server that never answers initialize")
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Connect = %v, want the deadline", err)
		}
		// The cancellation, if any, is written before the call returns.
		if got := wl.cancellations(); len(got) != 0 {
			t.Fatalf("the client sent notifications/cancelled for its handshake: %s", strings.Join(got, "; "))
		}
	})
}

// TestServerCancelledRequestIsNotAnswered pins the rule that the client
// does not answer a server request the server cancelled: the server has
// forgotten the id (and may reuse it), so a late answer is at best noise
// and at worst taken for the answer to another request. The sampling
// handler here sees its context end, as the server cancelled, and still
// returns a result, as a handler that had its answer ready would.
//
// The barrier: with MaxServerRequests 1, a later server request is refused
// as busy until the sampling request's goroutine has finished, answer
// written or not; the server asks roots/list until one is answered, and
// the pipe keeps order.
func TestServerCancelledRequestIsNotAnswered(t *testing.T) {
	h := legacy(mcp.Version20251125, nil)
	f, conn := startFake(t, func(f *fakeServer, m *mcp.Message) *mcp.Message {
		if m.IsResponse() {
			return nil
		}
		return h(f, m)
	})
	started := make(chan struct{}, 1)
	returned := make(chan struct{}, 1)
	connect(t, conn, &transport.Options{ProtocolVersion: mcp.Version20251125, MaxServerRequests: 1, Handlers: transport.Handlers{
		Sampling: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			defer func() { returned <- struct{}{} }()
			started <- struct{}{}
			timer := time.NewTimer(fakeWait)
			defer timer.Stop()
			select {
			case <-ctx.Done():
			case <-timer.C: // the test fails on the missing cancellation
			}
			return &mcp.CreateMessageResult{Role: "assistant", Model: "claude-test",
				Content: json.RawMessage(`{"type":"text","text":"Voilà: the summary — \"short\"\nand sweet"}`)}, nil
		},
		Roots: func(context.Context) ([]mcp.Root, error) {
			return []mcp.Root{{URI: "file:///home/ana/projets", Name: "projets"}}, nil
		},
	}})
	bg := context.Background()
	req, err := mcp.NewRequest(mcp.StringID("sample-1"), mcp.MethodSamplingCreateMessage, map[string]any{
		"messages":  []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "Résume ce document, s'il te plaît."}}},
		"maxTokens": 200,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.conn.Write(bg, req); err != nil {
		t.Fatal(err)
	}
	within(t, started, "the sampling handler to start")
	note, err := mcp.NewNotification(mcp.NotificationCancelled, map[string]any{"requestId": "sample-1", "reason": "the user closed the chat"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.conn.Write(bg, note); err != nil {
		t.Fatal(err)
	}
	within(t, returned, "the sampling handler to return")

	answered := func(id mcp.ID) *mcp.Message {
		for _, m := range f.seen {
			if m.IsResponse() && m.ID == id {
				return m
			}
		}
		return nil
	}
	deadline := time.Now().Add(fakeWait)
	for i := 1; ; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("no roots/list answered after %d tries within %v", i-1, fakeWait)
		}
		id := mcp.StringID(fmt.Sprintf("barrier-%d", i))
		r, err := mcp.NewRequest(id, mcp.MethodRootsList, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.conn.Write(bg, r); err != nil {
			t.Fatal(err)
		}
		var resp *mcp.Message
		f.waitUntil("the answer to "+id.String(), func() bool { resp = answered(id); return resp != nil })
		if resp.Error == nil {
			break // the sampling request's goroutine has finished
		}
		if !strings.Contains(resp.Error.Message, "busy") {
			t.Fatalf("roots/list answered with %v", resp.Error)
		}
	}
	f.mu.Lock()
	late := answered(mcp.StringID("sample-1"))
	f.mu.Unlock()
	if late != nil {
		t.Fatalf("the client answered sampling request sample-1 after the server cancelled it: %s%v", late.Result, late.Error)
	}
}
