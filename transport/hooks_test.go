package transport_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tako-mcp/tako/internal/syncbuf"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// faultConn wraps a Conn to play what only a wire can see: a lost response
// stream, an expired HTTP session.
type faultConn struct {
	transport.Conn
	mu sync.Mutex
	// onRead may replace a message read with an error.
	onRead func(m *mcp.Message) error
	// onWrite may fail a write.
	onWrite func(m *mcp.Message) error
}

func (c *faultConn) Read(ctx context.Context) (*mcp.Message, error) {
	m, err := c.Conn.Read(ctx)
	if err != nil || c.onRead == nil {
		return m, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ferr := c.onRead(m); ferr != nil {
		return nil, ferr
	}
	return m, nil
}

func (c *faultConn) Write(ctx context.Context, m *mcp.Message) error {
	if c.onWrite != nil {
		c.mu.Lock()
		err := c.onWrite(m)
		c.mu.Unlock()
		if err != nil {
			return err
		}
	}
	return c.Conn.Write(ctx, m)
}

func TestLostRequestIsResentWithNewID(t *testing.T) {
	f, conn := startFake(t, legacy(mcp.Version20251125, echoTool))
	var callID mcp.ID
	lost := false
	fc := &faultConn{Conn: conn}
	fc.onWrite = func(m *mcp.Message) error {
		if m.Method == mcp.MethodToolsCall && !callID.IsValid() {
			callID = m.ID
		}
		return nil
	}
	fc.onRead = func(m *mcp.Message) error {
		if m.IsResponse() && m.ID == callID && !lost {
			lost = true
			return &transport.MessageError{ID: m.ID, Err: fmt.Errorf("stream broke: %w", transport.ErrRequestLost)}
		}
		return nil
	}
	s := connect(t, fc, nil)
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"a":1}`)})
	if err != nil || res.Text() != `{"a":1}` {
		t.Fatalf("%v %v", res, err)
	}
	calls := f.messages(mcp.MethodToolsCall)
	if len(calls) != 2 || calls[0].ID == calls[1].ID {
		t.Fatalf("want two tools/call with distinct ids, got %d", len(calls))
	}
}

func TestExpiredSessionIsRenewedOnce(t *testing.T) {
	f, conn := startFake(t, legacy(mcp.Version20250618, echoTool))
	expire := 0
	fc := &faultConn{Conn: conn}
	fc.onWrite = func(m *mcp.Message) error {
		if m.Method == mcp.MethodToolsCall && expire < 1 {
			expire++
			return fmt.Errorf("HTTP 404: %w", transport.ErrSessionExpired)
		}
		return nil
	}
	s := connect(t, fc, nil)
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"b":2}`)})
	if err != nil || res.Text() != `{"b":2}` {
		t.Fatalf("%v %v", res, err)
	}
	if n := len(f.messages(mcp.MethodInitialize)); n != 2 {
		t.Fatalf("initialize sent %d times, want 2", n)
	}
	var p mcp.InitializeParams
	_ = json.Unmarshal(f.messages(mcp.MethodInitialize)[1].Params, &p)
	if p.ProtocolVersion != mcp.Version20250618 {
		t.Fatalf("new session offered %q, want the negotiated version", p.ProtocolVersion)
	}
}

func TestSessionThatKeepsExpiringFails(t *testing.T) {
	_, conn := startFake(t, legacy(mcp.Version20250618, echoTool))
	fc := &faultConn{Conn: conn}
	fc.onWrite = func(m *mcp.Message) error {
		if m.Method == mcp.MethodToolsCall {
			return fmt.Errorf("HTTP 404: %w", transport.ErrSessionExpired)
		}
		return nil
	}
	s := connect(t, fc, nil)
	_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo"})
	if !errors.Is(err, transport.ErrSessionExpired) {
		t.Fatalf("call: %v, want ErrSessionExpired", err)
	}
	// A server that forgets every session ends this one, loudly: Err says
	// why, rather than later calls going out on no session at all.
	<-s.Done()
	if !errors.Is(s.Err(), transport.ErrSessionExpired) {
		t.Fatalf("Err() = %v", s.Err())
	}
}

func TestListenStreamDeliversAndReopens(t *testing.T) {
	var f *fakeServer
	f, conn := startFake(t, func(fs *fakeServer, m *mcp.Message) *mcp.Message {
		if m.Method == mcp.MethodDiscover {
			return result(m.ID, map[string]any{
				"resultType": "complete", "supportedVersions": []string{"2026-07-28"},
				"capabilities": map[string]any{"tools": map[string]any{"listChanged": true}},
			})
		}
		if m.Method != mcp.MethodSubscriptionsListen {
			return nil
		}
		meta := map[string]any{mcp.MetaSubscriptionID: m.ID.Raw()}
		ack, _ := mcp.NewNotification(mcp.NotificationSubscriptionsAck, map[string]any{"notifications": map[string]any{"toolsListChanged": true}, "_meta": meta})
		_ = f.conn.Write(context.Background(), ack)
		if len(fs.messages(mcp.MethodSubscriptionsListen)) == 1 {
			// End the first stream gracefully; the client re-opens it.
			return result(m.ID, map[string]any{"resultType": "complete", "_meta": meta})
		}
		return nil
	})
	s := connect(t, conn, nil)
	got := make(chan mcp.Notification, 4)
	unsub := s.Subscribe(func(n mcp.Notification) { got <- n })
	defer unsub()
	ls := f.waitFor(mcp.MethodSubscriptionsListen, 2)
	var p struct {
		Notifications map[string]bool `json:"notifications"`
	}
	_ = json.Unmarshal(ls[1].Params, &p)
	if !p.Notifications["toolsListChanged"] || ls[0].ID == ls[1].ID {
		t.Fatalf("listen requests %s / %s", ls[0].Params, ls[1].Params)
	}
	// A change pushed on the re-opened stream reaches the subscriber.
	n, _ := mcp.NewNotification(mcp.NotificationToolsListChanged, map[string]any{"_meta": map[string]any{mcp.MetaSubscriptionID: ls[1].ID.Raw()}})
	if err := f.conn.Write(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	if m := <-got; m.Method != mcp.NotificationToolsListChanged {
		t.Fatalf("got %s", m.Method)
	}
}

func TestListTTLIsTheLeastOfThePages(t *testing.T) {
	_, conn := startFake(t, modern(t, func(m *mcp.Message) *mcp.Message {
		if m.Method != mcp.MethodToolsList {
			return rpcError(m.ID, mcp.CodeMethodNotFound, "no", "")
		}
		var p struct {
			Cursor *string `json:"cursor"`
		}
		_ = json.Unmarshal(m.Params, &p)
		tool := map[string]any{"name": "t", "inputSchema": map[string]any{"type": "object"}}
		if p.Cursor == nil {
			return result(m.ID, map[string]any{"resultType": "complete", "tools": []any{tool}, "nextCursor": "", "ttlMs": 60000, "cacheScope": "public"})
		}
		tool["name"] = "u"
		return result(m.ID, map[string]any{"resultType": "complete", "tools": []any{tool}, "ttlMs": 1500, "cacheScope": "public"})
	}))
	s := connect(t, conn, nil)
	if _, ok := s.TTL(mcp.MethodToolsList); ok {
		t.Fatal("TTL before any listing")
	}
	tools, err := s.ListTools(context.Background())
	if err != nil || len(tools) != 2 {
		t.Fatalf("%v %v", tools, err)
	}
	if d, ok := s.TTL(mcp.MethodToolsList); !ok || d.Milliseconds() != 1500 {
		t.Fatalf("TTL = %v %v, want 1.5s", d, ok)
	}
}

func TestHeaderMismatchListsToolsAgainAndRetriesOnce(t *testing.T) {
	var calls atomic.Int32
	var refuseAll atomic.Bool
	f, conn := startFake(t, modern(t, func(m *mcp.Message) *mcp.Message {
		switch m.Method {
		case mcp.MethodToolsList:
			return result(m.ID, map[string]any{"resultType": "complete", "tools": []any{map[string]any{"name": "t", "inputSchema": map[string]any{"type": "object"}}}})
		case mcp.MethodToolsCall:
			if calls.Add(1) == 1 || refuseAll.Load() {
				return rpcError(m.ID, mcp.CodeHeaderMismatch, "Mcp-Param-Region does not match", "")
			}
			return result(m.ID, map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": "ok"}}})
		}
		return rpcError(m.ID, mcp.CodeMethodNotFound, "no", "")
	}))
	s := connect(t, conn, nil)
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "t"})
	if err != nil || res.Text() != "ok" {
		t.Fatalf("%v %v", res, err)
	}
	if n := len(f.messages(mcp.MethodToolsList)); n != 1 {
		t.Fatalf("tools/list sent %d times, want 1 (between the two calls)", n)
	}
	// A server that keeps refusing gets one retry, not a loop.
	refuseAll.Store(true)
	_, err = s.CallTool(context.Background(), &mcp.CallToolParams{Name: "t"})
	var rpcErr *mcp.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeHeaderMismatch {
		t.Fatalf("err = %v", err)
	}
	if n := calls.Load(); n != 4 {
		t.Fatalf("%d tools/call in all, want 4 (two per call)", n)
	}
}

func TestListenAckMissingAGrantIsLogged(t *testing.T) {
	var logs syncbuf.Buffer
	var f *fakeServer
	f, conn := startFake(t, func(fs *fakeServer, m *mcp.Message) *mcp.Message {
		switch m.Method {
		case mcp.MethodDiscover:
			return result(m.ID, map[string]any{
				"resultType": "complete", "supportedVersions": []string{"2026-07-28"},
				"capabilities": map[string]any{"tools": map[string]any{"listChanged": true}, "prompts": map[string]any{"listChanged": true}},
			})
		case mcp.MethodSubscriptionsListen:
			// Grants tools but not prompts, then answers a ping-like
			// request so the test knows the ack was read.
			meta := map[string]any{mcp.MetaSubscriptionID: m.ID.Raw()}
			ack, _ := mcp.NewNotification(mcp.NotificationSubscriptionsAck, map[string]any{"notifications": map[string]any{"toolsListChanged": true}, "_meta": meta})
			_ = f.conn.Write(context.Background(), ack)
		case mcp.MethodToolsList:
			return result(m.ID, map[string]any{"resultType": "complete", "tools": []any{}})
		}
		return nil
	})
	s := connect(t, conn, &transport.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	f.waitFor(mcp.MethodSubscriptionsListen, 1)
	// The ack precedes this answer on the wire, and the reader handles
	// messages in order.
	if _, err := s.ListTools(context.Background()); err != nil {
		t.Fatal(err)
	}
	if out := logs.String(); !strings.Contains(out, "did not grant") || !strings.Contains(out, "promptsListChanged") {
		t.Fatalf("no warning for the missing grant; log: %s", out)
	}
}
