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

// pagedTools answers tools/list in pages of one tool each, with a field
// tako does not model, so that a merged raw result can be checked byte for
// byte.
func pagedTools(m *mcp.Message) *mcp.Message {
	if m.Method != mcp.MethodToolsList {
		return echoTool(m)
	}
	var p struct {
		Cursor *string `json:"cursor"`
	}
	_ = json.Unmarshal(m.Params, &p)
	page := 0
	if p.Cursor != nil {
		fmt.Sscanf(*p.Cursor, "page-%d", &page)
	}
	tool := json.RawMessage(fmt.Sprintf(`{"name":"t%d","inputSchema":{"type":"object"},"x-vendor":{"n":%d}}`, page, page))
	res := map[string]any{"tools": []json.RawMessage{tool}, "x-extra": "kept"}
	if page < 2 {
		res["nextCursor"] = fmt.Sprintf("page-%d", page+1)
	}
	return result(m.ID, res)
}

func TestCallMergesEveryPageOfAList(t *testing.T) {
	f, conn := startFake(t, legacy(mcp.Version20251125, pagedTools))
	s := connect(t, conn, nil)
	var raw json.RawMessage
	if err := transport.Call(context.Background(), s, mcp.MethodToolsList, nil, &raw); err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if _, ok := got["nextCursor"]; ok {
		t.Errorf("merged result keeps nextCursor: %s", raw)
	}
	if string(got["x-extra"]) != `"kept"` {
		t.Errorf("merged result lost a member of the first page: %s", raw)
	}
	want := `[{"name":"t0","inputSchema":{"type":"object"},"x-vendor":{"n":0}},{"name":"t1","inputSchema":{"type":"object"},"x-vendor":{"n":1}},{"name":"t2","inputSchema":{"type":"object"},"x-vendor":{"n":2}}]`
	if string(got["tools"]) != want {
		t.Errorf("tools = %s\nwant %s", got["tools"], want)
	}
	if n := len(f.messages(mcp.MethodToolsList)); n != 3 {
		t.Errorf("%d tools/list requests, want 3", n)
	}
}

func TestCallWithACursorIsOnePage(t *testing.T) {
	_, conn := startFake(t, legacy(mcp.Version20251125, pagedTools))
	s := connect(t, conn, nil)
	var page mcp.ListToolsResult
	if err := s.Call(context.Background(), mcp.MethodToolsList, &mcp.ListParams{Cursor: ptr("page-1")}, &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Tools) != 1 || page.Tools[0].Name != "t1" || page.NextCursor == nil || *page.NextCursor != "page-2" {
		t.Fatalf("got %+v", page)
	}
}

func ptr[T any](v T) *T { return &v }

// typedOnly is a Transport without Caller: Call must serve it through its
// typed methods.
type typedOnly struct {
	transport.Transport
}

func TestCallServesATransportWithoutCaller(t *testing.T) {
	_, conn := startFake(t, legacy(mcp.Version20251125, pagedTools))
	s := connect(t, conn, nil)
	var raw json.RawMessage
	if err := transport.Call(context.Background(), typedOnly{s}, mcp.MethodToolsList, nil, &raw); err != nil {
		t.Fatal(err)
	}
	var r mcp.ListToolsResult
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Tools) != 3 {
		t.Fatalf("%s %v", raw, err)
	}
	var res mcp.CallToolResult
	if err := transport.Call(context.Background(), typedOnly{s}, mcp.MethodToolsCall, map[string]any{"name": "echo", "arguments": map[string]int{"x": 1}}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Text() != `{"x":1}` {
		t.Fatalf("call result %q", res.Text())
	}
	err := transport.Call(context.Background(), typedOnly{s}, "tasks/list", nil, nil)
	if !errors.Is(err, transport.ErrCapability) {
		t.Fatalf("a method with no typed form: %v, want ErrCapability", err)
	}
}

func TestToolResultError(t *testing.T) {
	if err := transport.ToolResultError("x", &mcp.CallToolResult{}); err != nil {
		t.Fatal(err)
	}
	res := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{{Type: mcp.ContentText, Text: "boom"}}}
	var te *transport.ToolError
	if err := transport.ToolResultError("x", res); !errors.As(err, &te) || te.Tool != "x" || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("got %v", err)
	}
}

func TestRoundsAreBounded(t *testing.T) {
	h := &transport.Handlers{Roots: func(context.Context) ([]mcp.Root, error) { return nil, nil }}
	rounds := 0
	_, err := transport.Rounds(context.Background(), h, "tools/call", func(ctx context.Context, answers map[string]any) (int, map[string]mcp.InputRequest, error) {
		rounds++
		return 0, map[string]mcp.InputRequest{"r": {Method: mcp.MethodRootsList}}, nil
	})
	if !errors.Is(err, transport.ErrProtocol) || rounds != transport.MaxInputRounds+1 {
		t.Fatalf("after %d rounds: %v", rounds, err)
	}
}

func TestRoundsAnswerWithHandlersAndCarryTheAnswers(t *testing.T) {
	h := &transport.Handlers{Roots: func(context.Context) ([]mcp.Root, error) {
		return []mcp.Root{{URI: "file:///w"}}, nil
	}}
	var second map[string]any
	res, err := transport.Rounds(context.Background(), h, "tools/call", func(ctx context.Context, answers map[string]any) (string, map[string]mcp.InputRequest, error) {
		if answers == nil {
			return "", map[string]mcp.InputRequest{"k": {Method: mcp.MethodRootsList}}, nil
		}
		second = answers
		return "done", nil, nil
	})
	if err != nil || res != "done" {
		t.Fatal(res, err)
	}
	r, ok := second["k"].(*mcp.ListRootsResult)
	if !ok || len(r.Roots) != 1 || r.Roots[0].URI != "file:///w" {
		t.Fatalf("answers %#v", second)
	}
}

// TestMissingHandlerBlamesTheClient: the error for a request no handler
// serves says what the client lacks, not that the server is at fault.
func TestMissingHandlerBlamesTheClient(t *testing.T) {
	_, err := transport.Rounds(context.Background(), &transport.Handlers{}, "tools/call", func(ctx context.Context, answers map[string]any) (int, map[string]mcp.InputRequest, error) {
		return 0, map[string]mcp.InputRequest{"s": {Method: mcp.MethodSamplingCreateMessage, Params: json.RawMessage(`{}`)}}, nil
	})
	if !errors.Is(err, transport.ErrCapability) || !strings.Contains(err.Error(), "no sampling handler is registered on this client") {
		t.Fatalf("got %v", err)
	}
	var h transport.Handlers
	_, err = h.Serve(context.Background(), mcp.MethodElicitationCreate, json.RawMessage(`{}`))
	var rpcErr *mcp.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeMethodNotFound || !strings.Contains(rpcErr.Message, "no elicitation handler") {
		t.Fatalf("got %v", err)
	}
}

// informedConn records what the engine tells it.
type informedConn struct {
	transport.Conn
	mu        sync.Mutex
	protocols []string
	sessions  int
	listed    []string
	infos     map[string]transport.RequestInfo // by method
	reject    string
	// switchWire, when set, answers SwitchWire; switches counts its calls.
	switchWire func(context.Context) error
	switches   int
}

func (c *informedConn) SetProtocol(v string) {
	c.mu.Lock()
	c.protocols = append(c.protocols, v)
	c.mu.Unlock()
}

func (c *informedConn) NewSession() {
	c.mu.Lock()
	c.sessions++
	c.mu.Unlock()
}

func (c *informedConn) SwitchWire(ctx context.Context) error {
	c.mu.Lock()
	c.switches++
	fn := c.switchWire
	c.mu.Unlock()
	if fn == nil {
		return errors.New("informedConn has no older wire")
	}
	return fn(ctx)
}

func (c *informedConn) ToolsListed(tools []mcp.Tool) map[string]error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range tools {
		c.listed = append(c.listed, t.Name)
	}
	if c.reject != "" {
		return map[string]error{c.reject: errors.New("bad x-mcp-header")}
	}
	return nil
}

func (c *informedConn) WriteRequest(ctx context.Context, msg *mcp.Message, info *transport.RequestInfo) error {
	c.mu.Lock()
	if c.infos == nil {
		c.infos = map[string]transport.RequestInfo{}
	}
	c.infos[msg.Method] = *info
	c.mu.Unlock()
	return c.Conn.Write(ctx, msg)
}

// modernTools answers like a 2026-07-28 server with two tools.
func modernTools(f *fakeServer, m *mcp.Message) *mcp.Message {
	switch m.Method {
	case mcp.MethodDiscover:
		return result(m.ID, map[string]any{
			"supportedVersions": []string{mcp.LatestVersion},
			"capabilities":      map[string]any{"tools": map[string]any{}},
		})
	case mcp.MethodToolsList:
		return result(m.ID, map[string]any{"tools": []any{
			map[string]any{"name": "good", "inputSchema": map[string]any{"type": "object"}},
			map[string]any{"name": "bad", "inputSchema": map[string]any{"type": "object"}},
		}})
	}
	return echoTool(m)
}

func TestInformedConnIsToldWhatTheProtocolEstablished(t *testing.T) {
	_, conn := startFake(t, modernTools)
	ic := &informedConn{Conn: conn, reject: "bad"}
	s := connect(t, ic, nil)
	tools, err := s.ListTools(context.Background())
	if err != nil || len(tools) != 1 || tools[0].Name != "good" {
		t.Fatalf("tools %v %v: the rejected one must be dropped", tools, err)
	}
	var raw json.RawMessage
	if err := s.Call(context.Background(), mcp.MethodToolsList, nil, &raw); err != nil || strings.Contains(string(raw), `"bad"`) {
		t.Fatalf("raw list %s %v: the rejected one must be dropped", raw, err)
	}
	if _, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "good", Arguments: json.RawMessage(`{"a":1}`)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Call(context.Background(), mcp.MethodToolsCall, json.RawMessage(`{"name":"good","arguments":{"b":2}}`), nil); err != nil {
		t.Fatal(err)
	}
	ic.mu.Lock()
	defer ic.mu.Unlock()
	if len(ic.protocols) == 0 || ic.protocols[len(ic.protocols)-1] != mcp.LatestVersion {
		t.Errorf("SetProtocol calls %v, want the last to be %s", ic.protocols, mcp.LatestVersion)
	}
	info := ic.infos[mcp.MethodToolsCall]
	if !info.Modern || !info.HasName || info.Name != "good" || string(info.Arguments) != `{"b":2}` {
		t.Errorf("tools/call info %+v", info)
	}
	if d := ic.infos[mcp.MethodDiscover]; !d.Modern || d.HasName {
		t.Errorf("server/discover info %+v", d)
	}
}

// TestNotifyRenewsAnExpiredSession: a notification that is the first to
// meet an expired legacy session renews it and is sent again on the new
// one; the calls after it go out on the new session.
func TestNotifyRenewsAnExpiredSession(t *testing.T) {
	f, conn := startFake(t, legacy(mcp.Version20251125, echoTool))
	expired := false
	fc := &faultConn{Conn: conn}
	fc.onWrite = func(m *mcp.Message) error {
		if m.Method == "notifications/roots/list_changed" && !expired {
			expired = true
			return fmt.Errorf("HTTP 404: %w", transport.ErrSessionExpired)
		}
		return nil
	}
	ic := &informedConn{Conn: fc}
	s := connect(t, ic, nil)
	if err := s.Notify(context.Background(), "notifications/roots/list_changed", nil); err != nil {
		t.Fatal(err)
	}
	if n := len(f.messages(mcp.MethodInitialize)); n != 2 {
		t.Fatalf("initialize sent %d times, want 2", n)
	}
	if n := len(f.waitFor("notifications/roots/list_changed", 1)); n != 1 {
		t.Fatalf("notification delivered %d times", n)
	}
	ic.mu.Lock()
	sessions := ic.sessions
	ic.mu.Unlock()
	if sessions != 1 {
		t.Fatalf("NewSession called %d times, want 1", sessions)
	}
	if _, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
}

// TestSessionThatCannotBeRenewedEnds: when initialize itself fails after
// an expiry, the session ends with an error wrapping ErrSessionExpired and
// Err says so; later calls fail at once with it.
func TestSessionThatCannotBeRenewedEnds(t *testing.T) {
	inits := 0
	_, conn := startFake(t, func(f *fakeServer, m *mcp.Message) *mcp.Message {
		if m.Method == mcp.MethodInitialize {
			inits++
			if inits > 1 {
				return rpcError(m.ID, mcp.CodeInternalError, "no more sessions", "")
			}
		}
		return legacy(mcp.Version20251125, echoTool)(f, m)
	})
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
		t.Fatalf("call: %v", err)
	}
	<-s.Done()
	if !errors.Is(s.Err(), transport.ErrSessionExpired) {
		t.Fatalf("Err() = %v", s.Err())
	}
	if _, err := s.ListTools(context.Background()); !errors.Is(err, transport.ErrSessionExpired) {
		t.Fatalf("later call: %v", err)
	}
}
