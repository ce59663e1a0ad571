package mcptest

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/tako-mcp/tako/mcp"
)

// allCaps declares every client capability the reference tools use.
var allCaps = mcp.ClientCapabilities{
	Sampling:    &mcp.SamplingCapability{},
	Elicitation: &mcp.ElicitationCapability{},
	Roots:       &mcp.RootsCapability{},
}

func metaParams(meta mcp.Meta) map[string]any { return map[string]any{"_meta": meta} }

// checkModernResult checks the members every 2026-07-28 result carries.
func checkModernResult(t *testing.T, raw json.RawMessage, wantType string) {
	t.Helper()
	var r struct {
		ResultType string   `json:"resultType"`
		Meta       mcp.Meta `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	if r.ResultType != wantType {
		t.Fatalf("resultType %q, want %q in %s", r.ResultType, wantType, raw)
	}
	var info mcp.Implementation
	if err := json.Unmarshal(r.Meta[mcp.MetaServerInfo], &info); err != nil || info.Name == "" {
		t.Fatalf("_meta serverInfo missing in %s", raw)
	}
}

func TestDiscover(t *testing.T) {
	srv := NewReference(Options{Instructions: "hi", Versions: []string{mcp.Version20250618, mcp.Version20260728}})
	c := start(t, srv)
	m := c.call(mcp.MethodDiscover, metaParams(modernMeta(mcp.ClientCapabilities{})))
	if m.Error != nil {
		t.Fatal(m.Error)
	}
	checkModernResult(t, m.Result, mcp.ResultTypeComplete)
	var d mcp.DiscoverResult
	if err := json.Unmarshal(m.Result, &d); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.SupportedVersions, []string{mcp.Version20260728, mcp.Version20250618}) || d.Instructions != "hi" || d.Capabilities.Tools == nil || !d.Capabilities.Tools.ListChanged {
		t.Fatalf("discover: %+v", d)
	}
	var info mcp.Implementation
	json.Unmarshal(d.Meta[mcp.MetaServerInfo], &info)
	if info.Name != "mcptest-reference" {
		t.Fatalf("serverInfo %+v", info)
	}
}

func TestModernMetaValidation(t *testing.T) {
	srv := NewReference(Options{})
	c := start(t, srv)
	full := modernMeta(mcp.ClientCapabilities{})

	// No _meta at all, and each required key missing in turn: -32602.
	c.rpcErr(mcp.MethodDiscover, nil, mcp.CodeInvalidParams)
	c.rpcErr(mcp.MethodToolsList, map[string]any{}, mcp.CodeInvalidParams)
	for _, key := range []string{mcp.MetaProtocolVersion, mcp.MetaClientCapabilities} {
		meta := mcp.Meta{}
		for k, v := range full {
			if k != key {
				meta[k] = v
			}
		}
		e := c.rpcErr(mcp.MethodToolsList, metaParams(meta), mcp.CodeInvalidParams)
		if !strings.Contains(e.Message, key) {
			t.Errorf("error %q does not name %s", e.Message, key)
		}
	}
	// An unsupported version: -32022 with supported and requested.
	for _, v := range []string{"2099-01-01", mcp.Version20251125} {
		meta := modernMeta(mcp.ClientCapabilities{})
		meta[mcp.MetaProtocolVersion], _ = json.Marshal(v)
		e := c.rpcErr(mcp.MethodToolsCall, map[string]any{"name": ToolEcho, "arguments": map[string]any{"message": "x"}, "_meta": meta}, mcp.CodeUnsupportedProtocolVersion)
		var data mcp.UnsupportedVersionData
		if err := json.Unmarshal(e.Data, &data); err != nil || data.Requested != v || !slices.Contains(data.Supported, mcp.Version20260728) {
			t.Errorf("data %s", e.Data)
		}
	}
	// Malformed values.
	bad := modernMeta(mcp.ClientCapabilities{})
	bad[mcp.MetaClientCapabilities] = json.RawMessage(`"all"`)
	c.rpcErr(mcp.MethodToolsList, metaParams(bad), mcp.CodeInvalidParams)
	bad = modernMeta(mcp.ClientCapabilities{})
	bad[mcp.MetaLogLevel] = json.RawMessage(`"loud"`)
	c.rpcErr(mcp.MethodToolsList, metaParams(bad), mcp.CodeInvalidParams)
	if len(srv.Violations()) == 0 {
		t.Fatal("missing _meta not recorded as a violation")
	}
	// A full request works, and the record shows its _meta.
	id := c.send(mcp.MethodToolsList, metaParams(full))
	if m := c.await(id); m.Error != nil {
		t.Fatal(m.Error)
	}
	rec, err := srv.Wait(ctxLimit(t), func(r Record) bool { return r.Msg.ID == id })
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.Meta(); string(got[mcp.MetaProtocolVersion]) != `"2026-07-28"` || got[mcp.MetaClientCapabilities] == nil {
		t.Fatalf("recorded _meta %v", got)
	}
	if rec.Peer.ProtocolVersion() != mcp.Version20260728 || rec.Peer.ClientInfo().Name != "test" {
		t.Fatalf("peer %q %+v", rec.Peer.ProtocolVersion(), rec.Peer.ClientInfo())
	}
}

func TestModernResultsCarryResultType(t *testing.T) {
	c := start(t, NewReference(Options{PageSize: 4}))
	meta := modernMeta(mcp.ClientCapabilities{})
	m := c.call(mcp.MethodToolsList, metaParams(meta))
	checkModernResult(t, m.Result, mcp.ResultTypeComplete)
	var page mcp.ListToolsResult
	json.Unmarshal(m.Result, &page)
	if len(page.Tools) != 4 || page.NextCursor == nil {
		t.Fatalf("page %d tools, next %v", len(page.Tools), page.NextCursor)
	}
	m = c.call(mcp.MethodToolsList, map[string]any{"_meta": meta, "cursor": *page.NextCursor})
	checkModernResult(t, m.Result, mcp.ResultTypeComplete)

	for _, tool := range []string{ToolEcho, ToolFail} {
		m = c.call(mcp.MethodToolsCall, toolCall(tool, map[string]any{"message": "x"}, meta))
		checkModernResult(t, m.Result, mcp.ResultTypeComplete)
	}
	// ping is gone from 2026-07-28; it is answered but recorded.
	m = c.call(mcp.MethodPing, metaParams(meta))
	checkModernResult(t, m.Result, mcp.ResultTypeComplete)
}

func TestModernProgressAndLogs(t *testing.T) {
	c := start(t, NewReference(Options{}))
	meta := modernMeta(mcp.ClientCapabilities{})
	meta[mcp.MetaProgressToken] = json.RawMessage(`7`)
	toolResult(t, c.call(mcp.MethodToolsCall, toolCall(ToolProgress, map[string]any{"steps": 2}, meta)))
	if len(c.other) != 2 || c.other[0].Method != mcp.NotificationProgress {
		t.Fatalf("got %v", methods(c.other))
	}
	// Without a log level in _meta, a 2026-07-28 server sends no logs; the
	// list change falls back to a plain notification without a listen
	// stream.
	c.other = nil
	toolResult(t, c.call(mcp.MethodToolsCall, toolCall(ToolNotify, nil, modernMeta(mcp.ClientCapabilities{}))))
	if !slices.Equal(methods(c.other), []string{mcp.NotificationToolsListChanged}) {
		t.Fatalf("got %v", methods(c.other))
	}
	c.other = nil
	meta = modernMeta(mcp.ClientCapabilities{})
	meta[mcp.MetaLogLevel] = json.RawMessage(`"debug"`)
	toolResult(t, c.call(mcp.MethodToolsCall, toolCall(ToolNotify, nil, meta)))
	if !slices.Equal(methods(c.other), []string{mcp.NotificationToolsListChanged, mcp.NotificationMessage}) {
		t.Fatalf("got %v", methods(c.other))
	}
}

// inputRound decodes an input_required result.
func inputRound(t *testing.T, m *mcp.Message) mcp.InputRequiredResult {
	t.Helper()
	if m.Error != nil {
		t.Fatal(m.Error)
	}
	checkModernResult(t, m.Result, mcp.ResultTypeInputRequired)
	var ir mcp.InputRequiredResult
	if err := json.Unmarshal(m.Result, &ir); err != nil {
		t.Fatal(err)
	}
	if len(ir.InputRequests) != 1 || ir.RequestState == nil {
		t.Fatalf("input_required %s", m.Result)
	}
	return ir
}

func TestModernInputRequiredRoundTrip(t *testing.T) {
	srv := NewReference(Options{})
	c := start(t, srv)
	meta := modernMeta(allCaps)
	args := map[string]any{"prompt": "2+2?"}

	first := c.send(mcp.MethodToolsCall, toolCall(ToolSample, args, meta))
	ir := inputRound(t, c.await(first))
	req, ok := ir.InputRequests["sample-0"]
	if !ok || req.Method != mcp.MethodSamplingCreateMessage || !strings.Contains(string(req.Params), "2+2?") {
		t.Fatalf("inputRequests %+v", ir.InputRequests)
	}
	if len(c.other) != 0 {
		t.Fatalf("server sent %v in the modern era; it must not send requests", methods(c.other))
	}

	retry := toolCall(ToolSample, args, meta)
	retry["inputResponses"] = map[string]any{"sample-0": mcp.CreateMessageResult{Role: "assistant", Content: json.RawMessage(`{"type":"text","text":"4"}`), Model: "m"}}
	retry["requestState"] = *ir.RequestState
	second := c.send(mcp.MethodToolsCall, retry)
	m := c.await(second)
	checkModernResult(t, m.Result, mcp.ResultTypeComplete)
	if r := toolResult(t, m); r.Text() != "4" {
		t.Fatalf("sample: %+v", r)
	}

	// The records show both requests, with their own ids and the echoed
	// state.
	var calls []Record
	for _, r := range srv.Received() {
		if r.Msg.Method == mcp.MethodToolsCall {
			calls = append(calls, r)
		}
	}
	if len(calls) != 2 || calls[0].Msg.ID != first || calls[1].Msg.ID != second {
		t.Fatalf("recorded %d calls", len(calls))
	}
	var p struct {
		RequestState string `json:"requestState"`
	}
	if calls[1].Params(&p) != nil || p.RequestState != *ir.RequestState {
		t.Fatalf("recorded retry params %s", calls[1].Msg.Params)
	}
	if v := srv.Violations(); len(v) != 0 {
		t.Fatalf("violations %q", v)
	}
}

func TestModernElicitAndRoots(t *testing.T) {
	c := start(t, NewReference(Options{}))
	meta := modernMeta(allCaps)

	ir := inputRound(t, c.call(mcp.MethodToolsCall, toolCall(ToolElicit, map[string]any{"message": "name?"}, meta)))
	if ir.InputRequests["elicit-0"].Method != mcp.MethodElicitationCreate {
		t.Fatalf("%+v", ir.InputRequests)
	}
	retry := toolCall(ToolElicit, map[string]any{"message": "name?"}, meta)
	retry["inputResponses"] = map[string]any{"elicit-0": mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"name": "tako"}}}
	retry["requestState"] = *ir.RequestState
	if r := toolResult(t, c.call(mcp.MethodToolsCall, retry)); r.Text() != `{"name":"tako"}` {
		t.Fatalf("elicit: %+v", r)
	}

	ir = inputRound(t, c.call(mcp.MethodToolsCall, toolCall(ToolRoots, nil, meta)))
	if r := ir.InputRequests["roots-0"]; r.Method != mcp.MethodRootsList {
		t.Fatalf("%+v", ir.InputRequests)
	}
	retry = toolCall(ToolRoots, nil, meta)
	retry["inputResponses"] = map[string]any{"roots-0": mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///a"}}}}
	retry["requestState"] = *ir.RequestState
	if r := toolResult(t, c.call(mcp.MethodToolsCall, retry)); r.Text() != `[{"uri":"file:///a"}]` {
		t.Fatalf("roots: %+v", r)
	}
}

func TestModernMultiRoundHandlerReruns(t *testing.T) {
	srv := New(Options{})
	var rounds []int
	srv.AddTool(mcp.Tool{Name: "two"}, func(ctx context.Context, req *CallRequest) (*mcp.CallToolResult, error) {
		rounds = append(rounds, req.Round) // rounds run one after the other
		e, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "who?"})
		if err != nil {
			return nil, err
		}
		roots, err := req.ListRoots(ctx)
		if err != nil {
			return nil, err
		}
		return textResult(e.Content["name"].(string) + " " + roots[0].URI), nil
	})
	c := start(t, srv)
	meta := modernMeta(allCaps)

	ir := inputRound(t, c.call(mcp.MethodToolsCall, toolCall("two", nil, meta)))
	if _, ok := ir.InputRequests["elicit-0"]; !ok {
		t.Fatalf("round 1 %+v", ir.InputRequests)
	}
	retry := toolCall("two", nil, meta)
	retry["inputResponses"] = map[string]any{"elicit-0": mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"name": "ann"}}}
	retry["requestState"] = *ir.RequestState
	ir = inputRound(t, c.call(mcp.MethodToolsCall, retry))
	if _, ok := ir.InputRequests["roots-1"]; !ok {
		t.Fatalf("round 2 %+v", ir.InputRequests)
	}
	// The second retry carries only the newest answer; the first travels
	// in requestState.
	retry = toolCall("two", nil, meta)
	retry["inputResponses"] = map[string]any{"roots-1": mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///r"}}}}
	retry["requestState"] = *ir.RequestState
	if r := toolResult(t, c.call(mcp.MethodToolsCall, retry)); r.Text() != "ann file:///r" {
		t.Fatalf("result %+v", r)
	}
	if !slices.Equal(rounds, []int{0, 1, 2}) {
		t.Fatalf("rounds %v", rounds)
	}

	// A tampered state is refused.
	retry["requestState"] = "garbage"
	c.rpcErr(mcp.MethodToolsCall, retry, mcp.CodeInvalidParams)
	// So is a state from another tool.
	srv.AddTool(mcp.Tool{Name: "other"}, func(ctx context.Context, req *CallRequest) (*mcp.CallToolResult, error) {
		return textResult("x"), nil
	})
	retry = toolCall("other", nil, meta)
	retry["requestState"] = *ir.RequestState
	c.rpcErr(mcp.MethodToolsCall, retry, mcp.CodeInvalidParams)
}

func TestModernMissingCapability(t *testing.T) {
	c := start(t, NewReference(Options{}))
	e := c.rpcErr(mcp.MethodToolsCall, toolCall(ToolSample, map[string]any{"prompt": "x"}, modernMeta(mcp.ClientCapabilities{})), mcp.CodeMissingRequiredClientCapability)
	var data struct {
		Required mcp.ClientCapabilities `json:"requiredCapabilities"`
	}
	if err := json.Unmarshal(e.Data, &data); err != nil || data.Required.Sampling == nil {
		t.Fatalf("data %s", e.Data)
	}
}

func TestModernRetryWithoutRequestStateIsAViolation(t *testing.T) {
	srv := NewReference(Options{})
	c := start(t, srv)
	meta := modernMeta(allCaps)
	inputRound(t, c.call(mcp.MethodToolsCall, toolCall(ToolRoots, nil, meta)))
	retry := toolCall(ToolRoots, nil, meta)
	retry["inputResponses"] = map[string]any{"roots-0": mcp.ListRootsResult{Roots: []mcp.Root{}}}
	if r := toolResult(t, c.call(mcp.MethodToolsCall, retry)); r.Text() != "[]" {
		t.Fatalf("roots %+v", r)
	}
	if v := srv.Violations(); len(v) != 1 || !strings.Contains(v[0], "without the requestState") {
		t.Fatalf("violations %q", v)
	}
}

func TestModernListenStream(t *testing.T) {
	srv := NewReference(Options{})
	c := start(t, srv)
	listenID := c.send(mcp.MethodSubscriptionsListen, map[string]any{
		"_meta":         modernMeta(mcp.ClientCapabilities{}),
		"notifications": mcp.SubscriptionFilter{ToolsListChanged: true, PromptsListChanged: true},
	})
	ack := c.read()
	var ap mcp.SubscriptionsAcknowledgedParams
	if ack.Method != mcp.NotificationSubscriptionsAck || json.Unmarshal(ack.Params, &ap) != nil {
		t.Fatalf("got %+v, want the acknowledgement", ack)
	}
	if !ap.Notifications.ToolsListChanged || ap.Notifications.PromptsListChanged || string(ap.Meta[mcp.MetaSubscriptionID]) != "1" {
		t.Fatalf("ack %s", ack.Params)
	}
	if err := srv.NotifyToolsListChanged(ctxLimit(t)); err != nil {
		t.Fatal(err)
	}
	n := c.read()
	var np struct {
		Meta mcp.Meta `json:"_meta"`
	}
	if n.Method != mcp.NotificationToolsListChanged || json.Unmarshal(n.Params, &np) != nil || string(np.Meta[mcp.MetaSubscriptionID]) != "1" {
		t.Fatalf("got %+v, want a tagged list_changed", n)
	}
	// The notify tool sends it to the stream too, not as a plain one.
	toolResult(t, c.call(mcp.MethodToolsCall, toolCall(ToolNotify, nil, modernMeta(mcp.ClientCapabilities{}))))
	if len(c.other) != 1 || !strings.Contains(string(c.other[0].Params), mcp.MetaSubscriptionID) {
		t.Fatalf("got %v", methods(c.other))
	}
	// Cancelling the stream ends it without an answer.
	c.notify(mcp.NotificationCancelled, mcp.CancelledParams{RequestID: listenID})
	if m := c.call(mcp.MethodPing, nil); m.Error != nil {
		t.Fatal(m.Error)
	}
}
