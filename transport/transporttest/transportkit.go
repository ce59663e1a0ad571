package transporttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
)

// The Transport kit: the same contract one level up, for anything that
// implements transport.Transport (a Session over any Conn, the gRPC client,
// a Transport written by hand). See RunTransport and the package
// documentation.

// WithServerRequests names the server requests the Transport under test
// carries to the Handlers given to dial, as MCP methods:
// mcp.MethodSamplingCreateMessage, mcp.MethodElicitationCreate,
// mcp.MethodRootsList. The default is all three. For a kind left out,
// RunTransport checks the opposite: the call that asks for it ends (with
// an error or a tool error) and the handler is never called. It applies
// to RunTransport only.
func WithServerRequests(methods ...string) Option {
	return func(c *config) { c.requests = methods }
}

// RunTransport runs the Transport-level conformance subtests against
// Transports returned by dial. dial is called once per subtest, with that
// subtest's t and the handlers the subtest needs, and must return a fresh
// Transport that passes h to whatever answers server requests
// (transport.Options.Handlers for a Session, mcpgrpc.Options.Handlers for
// the gRPC client) and whose other end is served by mcptest.NewReference,
// directly or through a bridge. It should register its own cleanup with
// t.Cleanup; the kit closes the Transport before that cleanup runs.
//
// WithServer names the reference server when it runs in the same process
// (behind a bridge too): it enables the checks that look at the server's
// side. WithServerRequests says which server requests the Transport
// carries. WithVersions does not apply: dial decides the revision.
func RunTransport(t *testing.T, dial func(t *testing.T, h transport.Handlers) transport.Transport, opts ...Option) {
	cfg := config{requests: []string{mcp.MethodSamplingCreateMessage, mcp.MethodElicitationCreate, mcp.MethodRootsList}}
	for _, o := range opts {
		o(&cfg)
	}
	k := &transportKit{cfg: cfg, dial: dial}
	t.Run("ServerInfo", k.serverInfo)
	t.Run("ListTools", k.listTools)
	t.Run("Pagination", k.pagination)
	t.Run("Echo", k.echo)
	t.Run("ToolError", k.toolError)
	t.Run("UnknownTool", k.unknownTool)
	t.Run("ConcurrentCalls", k.concurrentCalls)
	t.Run("RawList", k.rawList)
	t.Run("RawCall", k.rawCall)
	t.Run("ServerRequests", func(t *testing.T) {
		t.Run("Sampling", k.sampling)
		t.Run("Elicitation", k.elicitation)
		t.Run("Roots", k.roots)
	})
	t.Run("Notifications", k.notifications)
	t.Run("Cancel", k.cancel)
	t.Run("Close", k.close)
}

type transportKit struct {
	cfg  config
	dial func(t *testing.T, h transport.Handlers) transport.Transport
	// sleeps numbers the sleep calls, as in the Conn kit, from a base of
	// its own so that both kits can share one server.
	sleeps atomic.Int64
}

// counted are the kit's handlers with a count of the calls each received,
// so that a check can tell whether a request reached the client.
type counted struct {
	transport.Handlers
	sampling, elicitation, roots atomic.Int32
}

func newCounted() *counted {
	c := &counted{}
	h := handlers()
	c.Handlers = transport.Handlers{
		Sampling: func(ctx context.Context, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			c.sampling.Add(1)
			return h.Sampling(ctx, req)
		},
		Elicitation: func(ctx context.Context, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			c.elicitation.Add(1)
			return h.Elicitation(ctx, req)
		},
		Roots: func(ctx context.Context) ([]mcp.Root, error) {
			c.roots.Add(1)
			return h.Roots(ctx)
		},
	}
	return c
}

// open dials with fresh counted handlers; the Transport is closed when the
// test ends.
func (k *transportKit) open(t *testing.T) (transport.Transport, *counted) {
	t.Helper()
	h := newCounted()
	tr := k.dial(t, h.Handlers)
	if tr == nil {
		t.Fatal("dial returned a nil Transport")
	}
	t.Cleanup(func() { tr.Close() })
	return tr, h
}

func callTool(ctx context.Context, tr transport.Transport, tool string, args any) (*mcp.CallToolResult, error) {
	var raw json.RawMessage
	if args != nil {
		b, err := json.Marshal(args)
		if err != nil {
			return nil, err
		}
		raw = b
	}
	return tr.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: raw})
}

func mustCallTool(t *testing.T, tr transport.Transport, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := callTool(limit(t), tr, tool, args)
	if err != nil {
		t.Fatalf("CallTool %s: %v", tool, err)
	}
	return res
}

// referenceTools are the tools every reference server lists.
var referenceTools = []string{mcptest.ToolEcho, mcptest.ToolAdd, mcptest.ToolProgress, mcptest.ToolSample,
	mcptest.ToolElicit, mcptest.ToolRoots, mcptest.ToolBig, mcptest.ToolNotify, mcptest.ToolSleep, mcptest.ToolFail}

func (k *transportKit) serverInfo(t *testing.T) {
	tr, _ := k.open(t)
	info := tr.ServerInfo()
	if info.ProtocolVersion == "" {
		t.Error("ServerInfo has no protocol version")
	}
	if info.Implementation.Name == "" {
		t.Error("ServerInfo does not name the server")
	}
	if info.Capabilities.Tools == nil {
		t.Error("ServerInfo declares no tools capability")
	}
}

// checkToolList checks that names hold every reference tool exactly once
// and, with the server known, exactly the server's tools in its order.
func (k *transportKit) checkToolList(t *testing.T, names []string) {
	t.Helper()
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if seen[n] {
			t.Errorf("tool %q listed twice: pages overlap or were merged twice", n)
		}
		seen[n] = true
	}
	for _, n := range referenceTools {
		if !seen[n] {
			t.Errorf("reference tool %q missing from %d tools %q", n, len(names), names)
		}
	}
	if srv := k.cfg.server; srv != nil {
		var want []string
		for _, tool := range srv.Tools() {
			want = append(want, tool.Name)
		}
		if !slices.Equal(names, want) {
			t.Errorf("tools %q, the server has %q (in that order)", names, want)
		}
	}
}

func (k *transportKit) listTools(t *testing.T) {
	tr, _ := k.open(t)
	tools, err := tr.ListTools(limit(t))
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	names := make([]string, 0, len(tools))
	for _, tool := range tools {
		names = append(names, tool.Name)
		var schema struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(tool.InputSchema, &schema); err != nil || schema.Type != "object" {
			t.Errorf("tool %q: inputSchema %s", tool.Name, tool.InputSchema)
		}
		if tool.Name == mcptest.ToolAdd && len(tool.OutputSchema) == 0 {
			t.Error("add has no outputSchema")
		}
	}
	k.checkToolList(t, names)
}

// pagination checks, on the server's side, that one ListTools fetched
// every page: each request after the first names a cursor, and the list
// holds the tools of all of them. Without WithServer the kit cannot see
// the pages, and ListTools alone checks that nothing is missing.
func (k *transportKit) pagination(t *testing.T) {
	srv := k.cfg.server
	if srv == nil {
		t.Skip("needs WithServer to see the pages; ListTools checks that every tool arrived")
	}
	tr, _ := k.open(t)
	before := len(srv.Received())
	tools, err := tr.ListTools(limit(t))
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	var cursors []*string
	for _, r := range srv.Received()[before:] {
		if r.Msg.Method != mcp.MethodToolsList {
			continue
		}
		var p struct {
			Cursor *string `json:"cursor"`
		}
		if len(r.Msg.Params) > 0 {
			_ = r.Params(&p) // unparseable params count as no cursor
		}
		cursors = append(cursors, p.Cursor)
	}
	switch {
	case len(cursors) == 0:
		t.Fatal("the server saw no tools/list request")
	case len(cursors) == 1:
		t.Skip("the server sent every tool in one page: give mcptest.Options a PageSize below the number of tools to check pagination")
	}
	for i, c := range cursors {
		if (i == 0) != (c == nil) {
			t.Errorf("tools/list request %d of %d: cursor %v (the first has none, every later one has one)", i+1, len(cursors), c)
		}
	}
	names := make([]string, 0, len(tools))
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	k.checkToolList(t, names)
	t.Logf("%d tools in %d pages", len(tools), len(cursors))
}

func (k *transportKit) echo(t *testing.T) {
	tr, _ := k.open(t)
	msg := "héllo \"wörld\" \\ \n\t✓ \u2028 \U0001F419"
	res := mustCallTool(t, tr, mcptest.ToolEcho, map[string]any{"message": msg})
	if res.IsError || res.Text() != msg {
		t.Fatalf("echo returned %q (isError %v), want %q", res.Text(), res.IsError, msg)
	}
}

func (k *transportKit) toolError(t *testing.T) {
	tr, _ := k.open(t)
	res := mustCallTool(t, tr, mcptest.ToolFail, map[string]any{"message": "kit failure"})
	if !res.IsError || res.Text() != "kit failure" {
		t.Fatalf("fail returned %+v, want a result with isError and the message", res)
	}
	if err := transport.ToolResultError(mcptest.ToolFail, res); err == nil {
		t.Error("ToolResultError is nil for an isError result")
	}
}

func (k *transportKit) unknownTool(t *testing.T) {
	tr, _ := k.open(t)
	_, err := callTool(limit(t), tr, "no-such-tool", nil)
	var rpcErr *mcp.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeInvalidParams {
		t.Fatalf("unknown tool: %v, want an error wrapping an *mcp.Error with code %d", err, mcp.CodeInvalidParams)
	}
	mustCallTool(t, tr, mcptest.ToolEcho, map[string]any{"message": "still here"})
}

func (k *transportKit) concurrentCalls(t *testing.T) {
	tr, _ := k.open(t)
	concurrentEchoes(t, tr, 64)
}

// concurrentEchoes makes n echo calls at once on tr, each with its own
// message, and fails for any error or any answer that reached the wrong
// caller. Both kits use it.
func concurrentEchoes(t *testing.T, tr transport.Transport, n int) {
	ctx := limit(t)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := fmt.Sprintf("call %d of %d", i, n)
			res, err := callTool(ctx, tr, mcptest.ToolEcho, map[string]any{"message": want})
			switch {
			case err != nil:
				errs <- fmt.Errorf("call %d: %w", i, err)
			case res.Text() != want:
				errs <- fmt.Errorf("call %d got %q: answers crossed", i, res.Text())
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// rawList checks transport.Call's contract for a list: called without a
// cursor, the result is one object whose list holds every page's items
// and which has no nextCursor.
func (k *transportKit) rawList(t *testing.T) {
	tr, _ := k.open(t)
	ctx := limit(t)
	var raw json.RawMessage
	if err := transport.Call(ctx, tr, mcp.MethodToolsList, nil, &raw); err != nil {
		t.Fatalf("Call tools/list: %v", err)
	}
	var page map[string]json.RawMessage
	if err := json.Unmarshal(raw, &page); err != nil {
		t.Fatalf("tools/list result is not a JSON object: %v: %.200s", err, raw)
	}
	if c, ok := page["nextCursor"]; ok {
		t.Errorf("merged tools/list result has nextCursor %s", c)
	}
	var tools []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal(page["tools"], &tools); err != nil {
		t.Fatalf("tools/list result's tools: %v: %.200s", err, page["tools"])
	}
	names := make([]string, 0, len(tools))
	for _, tool := range tools {
		names = append(names, tool.Name)
		if len(tool.InputSchema) == 0 {
			t.Errorf("raw tool %q has no inputSchema", tool.Name)
		}
	}
	k.checkToolList(t, names)
	// A typed result is decoded from the same JSON.
	var typed mcp.ListToolsResult
	if err := transport.Call(ctx, tr, mcp.MethodToolsList, nil, &typed); err != nil {
		t.Fatalf("Call tools/list into *mcp.ListToolsResult: %v", err)
	}
	if len(typed.Tools) != len(tools) || typed.NextCursor != nil {
		t.Errorf("typed tools/list: %d tools, nextCursor %v; raw: %d tools", len(typed.Tools), typed.NextCursor, len(tools))
	}
}

// rawCall checks transport.Call for tools/call: the protocol's JSON of the
// result, and a JSON-RPC error as an *mcp.Error.
func (k *transportKit) rawCall(t *testing.T) {
	tr, _ := k.open(t)
	ctx := limit(t)
	const msg = "raw \"json\" ✓"
	var raw json.RawMessage
	params := map[string]any{"name": mcptest.ToolEcho, "arguments": map[string]any{"message": msg}}
	if err := transport.Call(ctx, tr, mcp.MethodToolsCall, params, &raw); err != nil {
		t.Fatalf("Call tools/call: %v", err)
	}
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("tools/call result is not a result object: %v: %s", err, raw)
	}
	if res.IsError || len(res.Content) != 1 || res.Content[0].Type != mcp.ContentText || res.Content[0].Text != msg {
		t.Fatalf("tools/call result %s, want one text block %q", raw, msg)
	}
	err := transport.Call(ctx, tr, mcp.MethodToolsCall, map[string]any{"name": "no-such-tool"}, &raw)
	var rpcErr *mcp.Error
	if !errors.As(err, &rpcErr) {
		t.Fatalf("Call tools/call of an unknown tool: %v, want an error wrapping an *mcp.Error", err)
	}
}

// serverRequest calls tool, which asks the client for one kind of input.
// When the Transport carries that kind, the handler answers and check
// reads the result; otherwise the call must end without the handler.
func (k *transportKit) serverRequest(t *testing.T, method, tool string, args any, count func(*counted) int32, check func(*mcp.CallToolResult) bool) {
	tr, h := k.open(t)
	res, err := callTool(limit(t), tr, tool, args)
	if !slices.Contains(k.cfg.requests, method) {
		if n := count(h); n != 0 {
			t.Errorf("the %s handler was called %d times, though the Transport is said not to carry it", method, n)
		}
		if err == nil && !res.IsError {
			t.Errorf("%s returned %q without the client's answer, want an error or a tool error", tool, res.Text())
		}
		if err != nil {
			t.Logf("%s is not carried: the call failed with %v", method, err)
		} else {
			t.Logf("%s is not carried: the call ended with a tool error: %s", method, res.Text())
		}
		return
	}
	if err != nil {
		t.Fatalf("CallTool %s: %v", tool, err)
	}
	if n := count(h); n < 1 {
		t.Errorf("the %s handler was never called", method)
	}
	if res.IsError || !check(res) {
		t.Fatalf("%s returned %q (isError %v)", tool, res.Text(), res.IsError)
	}
}

func (k *transportKit) sampling(t *testing.T) {
	k.serverRequest(t, mcp.MethodSamplingCreateMessage, mcptest.ToolSample, map[string]any{"prompt": "kit prompt"},
		func(h *counted) int32 { return h.sampling.Load() },
		func(res *mcp.CallToolResult) bool { return res.Text() == samplingPrefix+"kit prompt" })
}

func (k *transportKit) elicitation(t *testing.T) {
	k.serverRequest(t, mcp.MethodElicitationCreate, mcptest.ToolElicit, map[string]any{"message": "who are you?"},
		func(h *counted) int32 { return h.elicitation.Load() },
		func(res *mcp.CallToolResult) bool {
			var content map[string]any
			return json.Unmarshal([]byte(res.Text()), &content) == nil && content["name"] == elicitedName
		})
}

func (k *transportKit) roots(t *testing.T) {
	k.serverRequest(t, mcp.MethodRootsList, mcptest.ToolRoots, nil,
		func(h *counted) int32 { return h.roots.Load() },
		func(res *mcp.CallToolResult) bool {
			var roots []mcp.Root
			return json.Unmarshal([]byte(res.Text()), &roots) == nil && len(roots) == 1 && roots[0].URI == kitRoot
		})
}

// notifications checks Subscribe as ServerInfo describes it: delivered
// when Notifications is true, and harmless when it is false.
func (k *transportKit) notifications(t *testing.T) {
	tr, _ := k.open(t)
	got := make(chan string, 16)
	unsubscribe := tr.Subscribe(func(n mcp.Notification) {
		select {
		case got <- n.Method:
		default: // the check needs only the first few
		}
	})
	if unsubscribe == nil {
		t.Fatal("Subscribe returned a nil unsubscribe function")
	}
	defer unsubscribe()
	if res := mustCallTool(t, tr, mcptest.ToolNotify, nil); res.Text() != "ok" {
		t.Fatalf("notify returned %q", res.Text())
	}
	if !tr.ServerInfo().Notifications {
		t.Log("the Transport reports that it carries no notifications; Subscribe was called and did no harm")
		return
	}
	ctx := limit(t)
	for {
		select {
		case m := <-got:
			if m == mcp.NotificationToolsListChanged {
				return
			}
		case <-ctx.Done():
			t.Fatal("ServerInfo().Notifications is true, but notifications/tools/list_changed never reached Subscribe")
		}
	}
}

// pendingCall is a sleep call in flight.
type pendingCall struct {
	errc <-chan error
	// rec is the server's record of the call, when the kit has the server.
	rec *mcptest.Record
}

// startSleep starts a long sleep call on a goroutine of its own and
// returns once the call is known to be in flight: the server recorded it
// (WithServer), or its progress arrived (a Transport with Notifications).
// A Transport with neither gives the kit no way to see the call start;
// the call is then merely sent, and the checks that follow still hold.
func (k *transportKit) startSleep(t *testing.T, ctx context.Context, tr transport.Transport) pendingCall {
	t.Helper()
	ms := 7_200_000 + k.sleeps.Add(1)
	started := make(chan struct{})
	var once sync.Once
	pctx := transport.WithProgress(ctx, func(mcp.ProgressParams) { once.Do(func() { close(started) }) })
	errc := make(chan error, 1)
	go func() {
		_, err := callTool(pctx, tr, mcptest.ToolSleep, map[string]any{"ms": ms})
		errc <- err
	}()
	p := pendingCall{errc: errc}
	if srv := k.cfg.server; srv != nil {
		rec, err := srv.Wait(limit(t), func(r mcptest.Record) bool {
			var a struct {
				Name      string `json:"name"`
				Arguments struct {
					MS int64 `json:"ms"`
				} `json:"arguments"`
			}
			return r.Msg.Method == mcp.MethodToolsCall && r.Params(&a) == nil && a.Name == mcptest.ToolSleep && a.Arguments.MS == ms
		})
		if err != nil {
			t.Fatalf("the server never saw the sleep call: %v", err)
		}
		p.rec = &rec
		return p
	}
	if !tr.ServerInfo().Notifications {
		return p
	}
	select {
	case <-started:
	case err := <-errc:
		t.Fatalf("sleep returned before it started: %v", err)
	case <-limit(t).Done():
		t.Fatal("the sleep call never reported progress")
	}
	return p
}

func (k *transportKit) cancel(t *testing.T) {
	tr, _ := k.open(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := k.startSleep(t, ctx, tr)
	cancel()
	select {
	case err := <-p.errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled call returned %v, want an error wrapping context.Canceled", err)
		}
	case <-limit(t).Done():
		t.Fatal("cancelled call did not return")
	}
	if srv := k.cfg.server; srv != nil && p.rec != nil {
		// However the Transport carries it, the server must learn of it.
		_, err := srv.Wait(limit(t), func(r mcptest.Record) bool {
			var c mcp.CancelledParams
			return r.Peer == p.rec.Peer && r.Msg.Method == mcp.NotificationCancelled && r.Params(&c) == nil && c.RequestID == p.rec.Msg.ID
		})
		if err != nil {
			t.Fatalf("the server never saw notifications/cancelled for request %s: %v", p.rec.Msg.ID, err)
		}
	}
	mustCallTool(t, tr, mcptest.ToolEcho, map[string]any{"message": "after cancel"})
}

func (k *transportKit) close(t *testing.T) {
	tr, _ := k.open(t)
	const inFlight = 3
	calls := make([]pendingCall, inFlight)
	for i := range calls {
		calls[i] = k.startSleep(t, context.Background(), tr)
	}
	closed := make(chan error, 1)
	go func() { closed <- tr.Close() }()
	bound := limit(t)
	for i, p := range calls {
		select {
		case err := <-p.errc:
			if !closedErr(err) {
				t.Errorf("call %d pending at Close returned %v, want an error wrapping ErrClosed or ErrConnectionLost", i, err)
			}
		case <-bound.Done():
			t.Fatalf("Close did not end call %d in flight within %v", i, Timeout)
		}
	}
	select {
	case err := <-closed:
		if err != nil {
			t.Logf("Close: %v", err)
		}
	case <-bound.Done():
		t.Fatalf("Close did not return within %v", Timeout)
	}
	// Idempotent: a second Close returns, without panicking.
	done := make(chan struct{})
	go func() { defer close(done); tr.Close() }()
	select {
	case <-done:
	case <-bound.Done():
		t.Fatal("a second Close did not return")
	}
	ctx := limit(t)
	if _, err := callTool(ctx, tr, mcptest.ToolEcho, map[string]any{"message": "late"}); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("CallTool after Close: %v, want an error wrapping ErrClosed", err)
	}
	if _, err := tr.ListTools(ctx); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("ListTools after Close: %v, want an error wrapping ErrClosed", err)
	}
	var raw json.RawMessage
	if err := transport.Call(ctx, tr, mcp.MethodToolsList, nil, &raw); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Call tools/list after Close: %v, want an error wrapping ErrClosed", err)
	}
}
