package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

func TestInitializeNegotiatesVersion(t *testing.T) {
	tests := []struct {
		name     string
		versions []string
		ask      string
		want     string
	}{
		{"echoes a version it speaks", nil, mcp.Version20250618, mcp.Version20250618},
		{"echoes the oldest", nil, mcp.Version20241105, mcp.Version20241105},
		{"offers newest legacy for an unknown version", nil, "1999-01-01", mcp.Version20251125},
		{"offers newest legacy for a modern version", nil, mcp.Version20260728, mcp.Version20251125},
		{"offers its own newest", []string{mcp.Version20241105, mcp.Version20250326}, mcp.Version20251125, mcp.Version20250326},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := start(t, NewReference(Options{Versions: tt.versions}))
			if got := c.initialize(tt.ask, mcp.ClientCapabilities{}); got != tt.want {
				t.Fatalf("negotiated %q, want %q", got, tt.want)
			}
		})
	}
}

func TestInitializeResultCarriesServerDeclarations(t *testing.T) {
	caps := mcp.ServerCapabilities{Tools: &mcp.ListChangedCapability{}}
	srv := NewReference(Options{
		ServerInfo:   mcp.Implementation{Name: "demo", Version: "9"},
		Capabilities: &caps,
		Instructions: "be nice",
	})
	c := start(t, srv)
	var res mcp.InitializeResult
	c.result(mcp.MethodInitialize, mcp.InitializeParams{ProtocolVersion: mcp.Version20251125, ClientInfo: mcp.Implementation{Name: "x", Version: "1"}}, &res)
	if res.ServerInfo.Name != "demo" || res.ServerInfo.Version != "9" || res.Instructions != "be nice" {
		t.Fatalf("got %+v", res)
	}
	if res.Capabilities.Tools == nil || res.Capabilities.Logging != nil {
		t.Fatalf("capabilities %+v, want the configured ones", res.Capabilities)
	}
	// A second initialize is refused.
	c.rpcErr(mcp.MethodInitialize, mcp.InitializeParams{ProtocolVersion: mcp.Version20251125}, mcp.CodeInvalidRequest)
}

func TestModernOnlyServerRefusesInitialize(t *testing.T) {
	c := start(t, NewReference(Options{Versions: []string{mcp.Version20260728}}))
	e := c.rpcErr(mcp.MethodInitialize, mcp.InitializeParams{ProtocolVersion: mcp.Version20251125}, mcp.CodeUnsupportedProtocolVersion)
	var data mcp.UnsupportedVersionData
	if err := json.Unmarshal(e.Data, &data); err != nil || !slices.Equal(data.Supported, []string{mcp.Version20260728}) || data.Requested != mcp.Version20251125 {
		t.Fatalf("data %s (%v)", e.Data, err)
	}
}

func TestLegacyOnlyServerBeforeInitialize(t *testing.T) {
	srv := NewReference(Options{Versions: []string{mcp.Version20251125}})
	c := start(t, srv)
	// The stdio era probe: a legacy server does not know server/discover.
	c.rpcErr(mcp.MethodDiscover, map[string]any{"_meta": modernMeta(mcp.ClientCapabilities{})}, mcp.CodeMethodNotFound)
	// ping may come before initialize.
	if m := c.call(mcp.MethodPing, nil); m.Error != nil || string(m.Result) != "{}" {
		t.Fatalf("ping: %+v", m)
	}
	c.rpcErr(mcp.MethodToolsList, nil, mcp.CodeInvalidRequest)
	if v := srv.Violations(); len(v) != 1 || !strings.Contains(v[0], "tools/list before initialize") {
		t.Fatalf("violations %q", v)
	}
}

func TestRequestBeforeInitializedIsAViolation(t *testing.T) {
	srv := NewReference(Options{})
	c := start(t, srv)
	var res mcp.InitializeResult
	c.result(mcp.MethodInitialize, mcp.InitializeParams{ProtocolVersion: mcp.Version20251125}, &res)
	var list mcp.ListToolsResult
	c.result(mcp.MethodToolsList, nil, &list) // answered all the same
	if v := srv.Violations(); len(v) != 1 || !strings.Contains(v[0], "before notifications/initialized") {
		t.Fatalf("violations %q", v)
	}
}

func TestToolsListPagination(t *testing.T) {
	srv := NewReference(Options{PageSize: 3})
	c := start(t, srv)
	c.initialize(mcp.Version20251125, mcp.ClientCapabilities{})
	var names []string
	var cursor *string
	pages := 0
	for {
		var res mcp.ListToolsResult
		c.result(mcp.MethodToolsList, mcp.ListToolsParams{Cursor: cursor}, &res)
		pages++
		if len(res.Tools) > 3 {
			t.Fatalf("page of %d tools, page size 3", len(res.Tools))
		}
		if res.ResultType != "" {
			t.Fatalf("legacy result has resultType %q", res.ResultType)
		}
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		if res.NextCursor == nil {
			break
		}
		cursor = res.NextCursor
	}
	want := []string{ToolEcho, ToolAdd, ToolProgress, ToolSample, ToolElicit, ToolRoots, ToolBig, ToolNotify, ToolSleep, ToolFail}
	if !slices.Equal(names, want) || pages != 4 {
		t.Fatalf("got %v in %d pages, want %v in 4", names, pages, want)
	}
	bad := "not-a-cursor"
	c.rpcErr(mcp.MethodToolsList, mcp.ListToolsParams{Cursor: &bad}, mcp.CodeInvalidParams)
}

func TestToolsListOnePageByDefault(t *testing.T) {
	c := start(t, NewReference(Options{}))
	c.initialize(mcp.Version20251125, mcp.ClientCapabilities{})
	var res mcp.ListToolsResult
	c.result(mcp.MethodToolsList, nil, &res)
	if len(res.Tools) != 10 || res.NextCursor != nil {
		t.Fatalf("got %d tools, next %v", len(res.Tools), res.NextCursor)
	}
	for _, tool := range res.Tools {
		var schema map[string]any
		if err := json.Unmarshal(tool.InputSchema, &schema); err != nil || schema["type"] != "object" {
			t.Errorf("tool %s: inputSchema %s", tool.Name, tool.InputSchema)
		}
	}
}

func TestReferenceTools(t *testing.T) {
	c := start(t, NewReference(Options{}))
	c.initialize(mcp.Version20251125, mcp.ClientCapabilities{})

	if r := toolResult(t, c.call(mcp.MethodToolsCall, toolCall(ToolEcho, map[string]any{"message": "héllo\nworld"}, nil))); r.Text() != "héllo\nworld" || r.IsError {
		t.Errorf("echo: %+v", r)
	}
	r := toolResult(t, c.call(mcp.MethodToolsCall, toolCall(ToolAdd, map[string]any{"a": 2, "b": 0.5}, nil)))
	if r.Text() != "2.5" || string(r.StructuredContent) != `{"sum":2.5}` {
		t.Errorf("add: %q %s", r.Text(), r.StructuredContent)
	}
	if r := toolResult(t, c.call(mcp.MethodToolsCall, toolCall(ToolBig, map[string]any{"bytes": 100000}, nil))); len(r.Text()) != 100000 || strings.Trim(r.Text(), "x") != "" {
		t.Errorf("big: %d bytes", len(r.Text()))
	}
	if r := toolResult(t, c.call(mcp.MethodToolsCall, toolCall(ToolBig, map[string]any{"bytes": 0}, nil))); r.Text() != "" || len(r.Content) != 1 {
		t.Errorf("big 0: %+v", r)
	}
	if r := toolResult(t, c.call(mcp.MethodToolsCall, toolCall(ToolFail, nil, nil))); !r.IsError || r.Text() != "failure requested" {
		t.Errorf("fail: %+v", r)
	}
	if r := toolResult(t, c.call(mcp.MethodToolsCall, toolCall(ToolSleep, map[string]any{"ms": 1}, nil))); r.Text() != "slept" {
		t.Errorf("sleep: %+v", r)
	}
	// Bad arguments are a tool error the model can correct.
	if r := toolResult(t, c.call(mcp.MethodToolsCall, toolCall(ToolEcho, map[string]any{}, nil))); !r.IsError {
		t.Errorf("echo without message: %+v", r)
	}
	// Protocol errors are JSON-RPC errors.
	c.rpcErr(mcp.MethodToolsCall, toolCall("nope", nil, nil), mcp.CodeInvalidParams)
	c.rpcErr(mcp.MethodToolsCall, toolCall(ToolEcho, []int{1}, nil), mcp.CodeInvalidParams)
	c.rpcErr(mcp.MethodToolsCall, map[string]any{}, mcp.CodeInvalidParams)
	c.rpcErr(mcp.MethodToolsCall, json.RawMessage(`[1,2]`), mcp.CodeInvalidParams)
	c.rpcErr("resources/list", nil, mcp.CodeMethodNotFound)
}

func TestLegacyProgressCarriesToken(t *testing.T) {
	c := start(t, NewReference(Options{}))
	c.initialize(mcp.Version20251125, mcp.ClientCapabilities{})
	r := toolResult(t, c.call(mcp.MethodToolsCall, toolCall(ToolProgress, map[string]any{"steps": 3},
		mcp.Meta{mcp.MetaProgressToken: json.RawMessage(`"tok-1"`)})))
	if r.Text() != "done" {
		t.Fatalf("progress: %+v", r)
	}
	if len(c.other) != 3 {
		t.Fatalf("got %d messages before the answer, want 3 progress notifications", len(c.other))
	}
	for i, m := range c.other {
		var p mcp.ProgressParams
		if m.Method != mcp.NotificationProgress || json.Unmarshal(m.Params, &p) != nil {
			t.Fatalf("message %d: %+v", i, m)
		}
		if string(p.ProgressToken) != `"tok-1"` || p.Progress != float64(i+1) || p.Total == nil || *p.Total != 3 {
			t.Fatalf("progress %d: %+v", i, p)
		}
	}
	// Without a token, no progress is sent.
	c.other = nil
	toolResult(t, c.call(mcp.MethodToolsCall, toolCall(ToolProgress, map[string]any{"steps": 3}, nil)))
	if len(c.other) != 0 {
		t.Fatalf("progress without a token: %d messages", len(c.other))
	}
}

func TestLegacyNotifyAndLogLevel(t *testing.T) {
	c := start(t, NewReference(Options{}))
	c.initialize(mcp.Version20251125, mcp.ClientCapabilities{})
	if r := toolResult(t, c.call(mcp.MethodToolsCall, toolCall(ToolNotify, nil, nil))); r.Text() != "ok" {
		t.Fatalf("notify: %+v", r)
	}
	if len(c.other) != 2 || c.other[0].Method != mcp.NotificationToolsListChanged || c.other[1].Method != mcp.NotificationMessage {
		t.Fatalf("notifications: %v", methods(c.other))
	}
	var lm mcp.LoggingMessageParams
	if err := json.Unmarshal(c.other[1].Params, &lm); err != nil || lm.Level != "info" || string(lm.Data) != `"notify called"` {
		t.Fatalf("log message %s", c.other[1].Params)
	}
	// Above the info level, the log line is not sent.
	var empty struct{}
	c.result(mcp.MethodLoggingSetLevel, mcp.SetLevelParams{Level: "warning"}, &empty)
	c.other = nil
	toolResult(t, c.call(mcp.MethodToolsCall, toolCall(ToolNotify, nil, nil)))
	if len(c.other) != 1 || c.other[0].Method != mcp.NotificationToolsListChanged {
		t.Fatalf("notifications at level warning: %v", methods(c.other))
	}
	c.rpcErr(mcp.MethodLoggingSetLevel, mcp.SetLevelParams{Level: "loud"}, mcp.CodeInvalidParams)
}

func methods(ms []*mcp.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Method)
	}
	return out
}

// answerServerRequest reads the server's next request, checks its method
// and answers it with result.
func (c *client) answerServerRequest(method string, result any) json.RawMessage {
	c.t.Helper()
	m := c.read()
	if !m.IsRequest() || m.Method != method {
		c.t.Fatalf("got %+v, want a %s request", m, method)
	}
	resp, err := mcp.NewResponse(m.ID, result, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	c.write(resp)
	return m.Params
}

func TestLegacyServerToClientRequests(t *testing.T) {
	c := start(t, NewReference(Options{}))
	c.initialize(mcp.Version20251125, mcp.ClientCapabilities{
		Sampling:    &mcp.SamplingCapability{},
		Elicitation: &mcp.ElicitationCapability{},
		Roots:       &mcp.RootsCapability{},
	})

	id := c.send(mcp.MethodToolsCall, toolCall(ToolSample, map[string]any{"prompt": "2+2?"}, nil))
	params := c.answerServerRequest(mcp.MethodSamplingCreateMessage, mcp.CreateMessageResult{
		Role: "assistant", Content: json.RawMessage(`{"type":"text","text":"4"}`), Model: "m",
	})
	var cm mcp.CreateMessageParams
	if err := json.Unmarshal(params, &cm); err != nil || len(cm.Messages) != 1 || !strings.Contains(string(cm.Messages[0].Content), "2+2?") {
		t.Fatalf("sampling params %s", params)
	}
	if r := toolResult(t, c.await(id)); r.Text() != "4" {
		t.Fatalf("sample: %+v", r)
	}

	id = c.send(mcp.MethodToolsCall, toolCall(ToolElicit, map[string]any{"message": "name?"}, nil))
	params = c.answerServerRequest(mcp.MethodElicitationCreate, mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"name": "tako"}})
	if !strings.Contains(string(params), `"name?"`) || !strings.Contains(string(params), `"requestedSchema"`) {
		t.Fatalf("elicitation params %s", params)
	}
	if r := toolResult(t, c.await(id)); r.Text() != `{"name":"tako"}` {
		t.Fatalf("elicit: %+v", r)
	}

	id = c.send(mcp.MethodToolsCall, toolCall(ToolElicit, map[string]any{"message": "name?"}, nil))
	c.answerServerRequest(mcp.MethodElicitationCreate, mcp.ElicitResult{Action: mcp.ElicitDecline})
	if r := toolResult(t, c.await(id)); r.Text() != "decline" {
		t.Fatalf("elicit declined: %+v", r)
	}

	id = c.send(mcp.MethodToolsCall, toolCall(ToolRoots, nil, nil))
	c.answerServerRequest(mcp.MethodRootsList, mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///tmp", Name: "tmp"}}})
	if r := toolResult(t, c.await(id)); r.Text() != `[{"uri":"file:///tmp","name":"tmp"}]` {
		t.Fatalf("roots: %+v", r)
	}

	// A refusal from the client comes back as a tool error.
	id = c.send(mcp.MethodToolsCall, toolCall(ToolSample, map[string]any{"prompt": "x"}, nil))
	m := c.read()
	resp, _ := mcp.NewResponse(m.ID, nil, &mcp.Error{Code: mcp.CodeUserRejected, Message: "user said no"})
	c.write(resp)
	if r := toolResult(t, c.await(id)); !r.IsError || !strings.Contains(r.Text(), "user said no") {
		t.Fatalf("rejected sample: %+v", r)
	}
}

func TestLegacyMissingCapabilityIsAToolError(t *testing.T) {
	c := start(t, NewReference(Options{}))
	c.initialize(mcp.Version20251125, mcp.ClientCapabilities{})
	for _, tool := range []string{ToolSample, ToolElicit, ToolRoots} {
		r := toolResult(t, c.call(mcp.MethodToolsCall, toolCall(tool, map[string]any{"prompt": "x", "message": "x"}, nil)))
		if !r.IsError || !strings.Contains(r.Text(), "lacks capability") {
			t.Errorf("%s: %+v", tool, r)
		}
	}
	if len(c.other) != 0 {
		t.Fatalf("server sent %v to a client without the capabilities", methods(c.other))
	}
}

func TestCancelledNotificationCancelsHandler(t *testing.T) {
	srv := New(Options{})
	started := make(chan struct{})
	stopped := make(chan error, 1)
	srv.AddTool(mcp.Tool{Name: "block"}, func(ctx context.Context, req *CallRequest) (*mcp.CallToolResult, error) {
		close(started)
		<-ctx.Done()
		stopped <- ctx.Err()
		return textResult("too late"), nil
	})
	c := start(t, srv)
	c.initialize(mcp.Version20251125, mcp.ClientCapabilities{})
	id := c.send(mcp.MethodToolsCall, toolCall("block", nil, nil))
	<-started
	c.notify(mcp.NotificationCancelled, mcp.CancelledParams{RequestID: id, Reason: "test"})
	select {
	case err := <-stopped:
		if err != context.Canceled {
			t.Fatalf("handler context ended with %v", err)
		}
	case <-ctxLimit(t).Done():
		t.Fatal("handler not cancelled")
	}
	// The cancelled call is never answered: the next message is the ping's.
	pingID := c.send(mcp.MethodPing, nil)
	if m := c.read(); m.ID != pingID {
		t.Fatalf("got %+v after the cancellation, want the ping's answer", m)
	}
	rec, err := srv.WaitMethod(ctxLimit(t), mcp.NotificationCancelled)
	if err != nil {
		t.Fatal(err)
	}
	var cp mcp.CancelledParams
	if rec.Params(&cp) != nil || cp.RequestID != id {
		t.Fatalf("recorded %s", rec.Msg.Params)
	}
}

func TestPeerRequestPingsClient(t *testing.T) {
	srv := NewReference(Options{})
	c := start(t, srv)
	c.initialize(mcp.Version20251125, mcp.ClientCapabilities{})
	rec, err := srv.WaitMethod(ctxLimit(t), mcp.NotificationInitialized)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Peer.ProtocolVersion() != mcp.Version20251125 || rec.Peer.ClientInfo().Name != "test" {
		t.Fatalf("peer %d: version %q, client %+v", rec.Peer.Num(), rec.Peer.ProtocolVersion(), rec.Peer.ClientInfo())
	}
	errc := make(chan error, 1)
	go func() { errc <- rec.Peer.Ping(ctxLimit(t)) }()
	c.answerServerRequest(mcp.MethodPing, struct{}{})
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	// A ping the client never answers ends with its context, and the
	// client is told.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { errc <- rec.Peer.Ping(ctx) }()
	m := c.read()
	cancel()
	if err := <-errc; err != context.Canceled {
		t.Fatalf("Ping: %v", err)
	}
	n := c.read()
	var cp mcp.CancelledParams
	if n.Method != mcp.NotificationCancelled || json.Unmarshal(n.Params, &cp) != nil || cp.RequestID != m.ID {
		t.Fatalf("got %+v, want notifications/cancelled for %s", n, m.ID)
	}
	// A late answer to the abandoned ping is no violation; a response to
	// an id the server never used is one.
	late, _ := mcp.NewResponse(m.ID, struct{}{}, nil)
	c.write(late)
	bogus, _ := mcp.NewResponse(mcp.StringID("who"), struct{}{}, nil)
	c.write(bogus)
	c.call(mcp.MethodPing, nil)
	if v := srv.Violations(); len(v) != 1 || !strings.Contains(v[0], "unknown request id") {
		t.Fatalf("violations %q", v)
	}
}

func TestPipeServesInProcess(t *testing.T) {
	srv := NewReference(Options{})
	conn, wait := srv.Pipe(context.Background())
	ctx := ctxLimit(t)
	if err := conn.Write(ctx, &mcp.Message{ID: mcp.Int64ID(1), Method: mcp.MethodPing}); err != nil {
		t.Fatal(err)
	}
	if m, err := conn.Read(ctx); err != nil || m.ID != mcp.Int64ID(1) {
		t.Fatalf("read %+v, %v", m, err)
	}
	conn.Close()
	if err := wait(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if err := wait(); err != nil {
		t.Fatalf("second wait: %v", err)
	}
}

func TestDrainAnswersAfterClientInputEnds(t *testing.T) {
	srv := New(Options{Drain: waitLimit})
	cc, sc := transport.Pipe()
	// The client's input ends (Read fails) while its output stays open,
	// as when a stdio client closes the server's stdin.
	half := &halfConn{Conn: sc, end: make(chan struct{}), ended: make(chan struct{})}
	srv.AddTool(mcp.Tool{Name: "outlive"}, func(ctx context.Context, req *CallRequest) (*mcp.CallToolResult, error) {
		// Answer only once Serve has seen the input end.
		<-half.ended
		return textResult("answered after the input ended"), nil
	})
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), half) }()
	ctx := ctxLimit(t)
	req, _ := mcp.NewRequest(mcp.Int64ID(1), mcp.MethodToolsCall, toolCall("outlive", nil, modernMeta(mcp.ClientCapabilities{})))
	cc.Write(ctx, req)
	if _, err := srv.WaitMethod(ctx, mcp.MethodToolsCall); err != nil {
		t.Fatal(err)
	}
	close(half.end)
	m, err := cc.Read(ctx)
	if err != nil || m.ID != mcp.Int64ID(1) || m.Error != nil {
		t.Fatalf("after the input ended: %+v, %v; want the call's answer", m, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// halfConn is a server-side Conn whose input ends when end is closed; it
// closes ended once Read has reported that.
type halfConn struct {
	transport.Conn
	end   chan struct{}
	ended chan struct{}
}

func (h *halfConn) Read(ctx context.Context) (*mcp.Message, error) {
	select {
	case <-h.end:
		close(h.ended) // Serve reads no more after a fatal error
		return nil, fmt.Errorf("input ended: %w", transport.ErrConnectionLost)
	default:
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-h.end:
			cancel()
		case <-ctx.Done():
		}
	}()
	m, err := h.Conn.Read(ctx)
	if err != nil {
		select {
		case <-h.end:
			close(h.ended)
			return nil, fmt.Errorf("input ended: %w", transport.ErrConnectionLost)
		default:
		}
	}
	return m, err
}
