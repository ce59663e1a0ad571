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
	"time"

	"go.uber.org/goleak"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeServer is a hand-driven peer on the far end of a Pipe: each test
// scripts its answers, so the engine's own behaviour is what is under test.
type fakeServer struct {
	t    *testing.T
	conn transport.Conn
	// handle answers one request; returning nil sends no answer.
	handle func(m *mcp.Message) *mcp.Message

	mu sync.Mutex
	// arrived is closed, and made anew, each time a message arrives: a
	// wait selects on it and on its deadline, which a sync.Cond cannot.
	arrived chan struct{}
	seen    []*mcp.Message
	wg      sync.WaitGroup
}

// fakeWait bounds every wait of a test on the fake server: a regression
// fails with what was awaited, not as a package timeout.
const fakeWait = 10 * time.Second

func startFake(t *testing.T, handle func(f *fakeServer, m *mcp.Message) *mcp.Message) (*fakeServer, transport.Conn) {
	t.Helper()
	client, server := transport.Pipe()
	f := &fakeServer{t: t, conn: server}
	f.arrived = make(chan struct{})
	f.handle = func(m *mcp.Message) *mcp.Message { return handle(f, m) }
	f.wg.Add(1)
	go f.loop()
	t.Cleanup(func() { server.Close(); f.wg.Wait() })
	return f, client
}

func (f *fakeServer) loop() {
	defer f.wg.Done()
	for {
		m, err := f.conn.Read(context.Background())
		if err != nil {
			return
		}
		f.mu.Lock()
		f.seen = append(f.seen, m)
		close(f.arrived)
		f.arrived = make(chan struct{})
		f.mu.Unlock()
		if resp := f.handle(m); resp != nil {
			if err := f.conn.Write(context.Background(), resp); err != nil {
				return
			}
		}
	}
}

// within receives from ch, and fails the test with what after fakeWait.
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	deadline := time.NewTimer(fakeWait)
	defer deadline.Stop()
	select {
	case v := <-ch:
		return v
	case <-deadline.C:
		t.Fatalf("waited %v for %s", fakeWait, what)
		panic("unreachable")
	}
}

// waitFor waits until the server has received n messages with method,
// and fails the test after fakeWait.
func (f *fakeServer) waitFor(method string, n int) []*mcp.Message {
	f.t.Helper()
	var ms []*mcp.Message
	f.waitUntil(fmt.Sprintf("%d %s messages", n, method), func() bool {
		ms = f.messagesLocked(method)
		return len(ms) >= n
	})
	return ms
}

// waitUntil waits until done, called with f.mu held after each arrival,
// reports true; after fakeWait it fails the test with what, and the
// methods the server did receive.
func (f *fakeServer) waitUntil(what string, done func() bool) {
	f.t.Helper()
	deadline := time.NewTimer(fakeWait)
	defer deadline.Stop()
	for {
		f.mu.Lock()
		if done() {
			f.mu.Unlock()
			return
		}
		arrived := f.arrived
		f.mu.Unlock()
		select {
		case <-arrived:
		case <-deadline.C:
			f.mu.Lock()
			got := make([]string, 0, len(f.seen))
			for _, m := range f.seen {
				got = append(got, m.Method+" "+m.ID.String())
			}
			f.mu.Unlock()
			f.t.Fatalf("the fake server waited %v for %s; it received: %s", fakeWait, what, strings.Join(got, ", "))
		}
	}
}

func (f *fakeServer) messages(method string) []*mcp.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.messagesLocked(method)
}

func (f *fakeServer) messagesLocked(method string) []*mcp.Message {
	var out []*mcp.Message
	for _, m := range f.seen {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

func result(id mcp.ID, v any) *mcp.Message {
	m, err := mcp.NewResponse(id, v, nil)
	if err != nil {
		panic(err)
	}
	return m
}

func rpcError(id mcp.ID, code int64, msg string, data string) *mcp.Message {
	e := &mcp.Error{Code: code, Message: msg}
	if data != "" {
		e.Data = json.RawMessage(data)
	}
	return &mcp.Message{ID: id, Error: e}
}

// legacy answers like a 2025-11-25 server: no server/discover.
func legacy(version string, tools func(m *mcp.Message) *mcp.Message) func(f *fakeServer, m *mcp.Message) *mcp.Message {
	return func(f *fakeServer, m *mcp.Message) *mcp.Message {
		switch m.Method {
		case mcp.MethodDiscover:
			return rpcError(m.ID, mcp.CodeMethodNotFound, "Method not found", "")
		case mcp.MethodInitialize:
			return result(m.ID, map[string]any{
				"protocolVersion": version,
				"capabilities":    map[string]any{"tools": map[string]any{"listChanged": true}},
				"serverInfo":      map[string]any{"name": "fake", "version": "1"},
			})
		case mcp.NotificationInitialized, mcp.NotificationCancelled:
			return nil
		}
		if tools != nil {
			return tools(m)
		}
		return rpcError(m.ID, mcp.CodeMethodNotFound, "no", "")
	}
}

func echoTool(m *mcp.Message) *mcp.Message {
	if m.Method != mcp.MethodToolsCall {
		return rpcError(m.ID, mcp.CodeMethodNotFound, "no", "")
	}
	var p mcp.CallToolParams
	_ = json.Unmarshal(m.Params, &p)
	return result(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": string(p.Arguments)}}})
}

func connect(t *testing.T, conn transport.Conn, opts *transport.Options) *transport.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := transport.Connect(ctx, conn, opts)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestLegacyHandshakeAfterDiscoverRefused(t *testing.T) {
	f, conn := startFake(t, legacy(mcp.Version20250618, echoTool))
	s := connect(t, conn, nil)
	info := s.ServerInfo()
	if info.ProtocolVersion != mcp.Version20250618 || info.Implementation.Name != "fake" {
		t.Fatalf("ServerInfo = %+v", info)
	}
	init := f.messages(mcp.MethodInitialize)
	if len(init) != 1 {
		t.Fatalf("initialize sent %d times", len(init))
	}
	var p mcp.InitializeParams
	if err := json.Unmarshal(init[0].Params, &p); err != nil {
		t.Fatal(err)
	}
	if p.ProtocolVersion != mcp.LatestLegacyVersion || p.ClientInfo.Name != "tako" || p.ClientInfo.Version == "" {
		t.Fatalf("initialize params = %+v", p)
	}
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"x":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Text(); got != `{"x":1}` {
		t.Fatalf("echo = %q", got)
	}
	// Legacy requests carry no 2026 _meta.
	call := f.messages(mcp.MethodToolsCall)[0]
	if strings.Contains(string(call.Params), "_meta") {
		t.Fatalf("legacy tools/call carries _meta: %s", call.Params)
	}
	if len(f.messages(mcp.NotificationInitialized)) != 1 {
		t.Fatal("no notifications/initialized")
	}
}

func TestSilentProbeFallsBackToInitialize(t *testing.T) {
	h := legacy(mcp.Version20251125, echoTool)
	_, conn := startFake(t, func(f *fakeServer, m *mcp.Message) *mcp.Message {
		if m.Method == mcp.MethodDiscover {
			return nil // some legacy servers ignore unknown methods before initialize
		}
		return h(f, m)
	})
	s := connect(t, conn, &transport.Options{ProbeTimeout: 50 * time.Millisecond})
	if v := s.ServerInfo().ProtocolVersion; v != mcp.Version20251125 {
		t.Fatalf("version %q", v)
	}
}

// modern answers like a 2026-07-28 server and checks the per-request _meta.
func modern(t *testing.T, tools func(m *mcp.Message) *mcp.Message) func(f *fakeServer, m *mcp.Message) *mcp.Message {
	return func(f *fakeServer, m *mcp.Message) *mcp.Message {
		if m.IsNotification() {
			return nil
		}
		var p struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if string(p.Meta[mcp.MetaProtocolVersion]) != `"2026-07-28"` || p.Meta[mcp.MetaClientCapabilities] == nil || p.Meta[mcp.MetaClientInfo] == nil {
			t.Errorf("%s without the 2026 _meta: %s", m.Method, m.Params)
			return rpcError(m.ID, mcp.CodeInvalidParams, "missing _meta", "")
		}
		if m.Method == mcp.MethodDiscover {
			return result(m.ID, map[string]any{
				"resultType": "complete", "supportedVersions": []string{"2026-07-28"},
				"capabilities": map[string]any{"tools": map[string]any{}},
				"_meta":        map[string]any{mcp.MetaServerInfo: map[string]any{"name": "modern", "version": "2"}},
			})
		}
		return tools(m)
	}
}

func TestModernHandshakeAndMeta(t *testing.T) {
	f, conn := startFake(t, modern(t, func(m *mcp.Message) *mcp.Message {
		switch m.Method {
		case mcp.MethodToolsList:
			return result(m.ID, map[string]any{"resultType": "complete", "tools": []any{map[string]any{"name": "a", "inputSchema": map[string]any{"type": "object"}}}})
		case mcp.MethodToolsCall:
			return result(m.ID, map[string]any{"resultType": "complete", "content": []any{}})
		}
		return rpcError(m.ID, mcp.CodeMethodNotFound, "no", "")
	}))
	s := connect(t, conn, nil)
	info := s.ServerInfo()
	if info.ProtocolVersion != mcp.Version20260728 || info.Implementation.Name != "modern" {
		t.Fatalf("info = %+v", info)
	}
	tools, err := s.ListTools(context.Background())
	if err != nil || len(tools) != 1 {
		t.Fatalf("tools %v %v", tools, err)
	}
	if _, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "a", Meta: mcp.Meta{"mine": json.RawMessage(`1`)}}); err != nil {
		t.Fatal(err)
	}
	call := f.messages(mcp.MethodToolsCall)[0]
	if !strings.Contains(string(call.Params), `"mine":1`) {
		t.Fatalf("caller's _meta lost: %s", call.Params)
	}
	if len(f.messages(mcp.MethodInitialize)) != 0 {
		t.Fatal("modern server got initialize")
	}
}

func TestUnsupportedVersionRetriedOnce(t *testing.T) {
	var discovers atomic.Int32
	_, conn := startFake(t, func(f *fakeServer, m *mcp.Message) *mcp.Message {
		if m.Method == mcp.MethodDiscover && discovers.Add(1) == 1 {
			return rpcError(m.ID, mcp.CodeUnsupportedProtocolVersion, "unsupported", `{"supported":["2026-07-28"],"requested":"2026-07-28"}`)
		}
		return modern(t, echoTool)(f, m)
	})
	s := connect(t, conn, nil)
	if s.ServerInfo().ProtocolVersion != mcp.Version20260728 || discovers.Load() != 2 {
		t.Fatalf("version %q after %d discovers", s.ServerInfo().ProtocolVersion, discovers.Load())
	}
}

func TestInputRequiredRoundsUseHandlers(t *testing.T) {
	var calls atomic.Int32
	f, conn := startFake(t, modern(t, func(m *mcp.Message) *mcp.Message {
		var p map[string]json.RawMessage
		_ = json.Unmarshal(m.Params, &p)
		switch calls.Add(1) {
		case 1:
			if p["inputResponses"] != nil || p["requestState"] != nil {
				t.Errorf("first round carries MRTR members: %s", m.Params)
			}
			return result(m.ID, json.RawMessage(`{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object"}}}},"requestState":"opaque\u00e9 state"}`))
		default:
			if string(p["requestState"]) != `"opaque\u00e9 state"` {
				t.Errorf("requestState not byte for byte: %s", p["requestState"])
			}
			if !strings.Contains(string(p["inputResponses"]), `"action":"accept"`) {
				t.Errorf("inputResponses = %s", p["inputResponses"])
			}
			return result(m.ID, map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": "thanks"}}})
		}
	}))
	s := connect(t, conn, &transport.Options{Handlers: transport.Handlers{
		Elicitation: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"name": "x"}}, nil
		},
	}})
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask"})
	if err != nil || res.Text() != "thanks" {
		t.Fatalf("res %+v err %v", res, err)
	}
	ids := map[string]bool{}
	for _, m := range f.messages(mcp.MethodToolsCall) {
		ids[m.ID.String()] = true
	}
	if len(ids) != 2 {
		t.Fatalf("MRTR retry reused an id: %v", ids)
	}
}

func TestUnknownResultTypeIsProtocolError(t *testing.T) {
	_, conn := startFake(t, modern(t, func(m *mcp.Message) *mcp.Message {
		return result(m.ID, map[string]any{"resultType": "weird", "content": []any{}})
	}))
	s := connect(t, conn, nil)
	_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "x"})
	if !errors.Is(err, transport.ErrProtocol) {
		t.Fatalf("err = %v", err)
	}
}

func TestThousandConcurrentCalls(t *testing.T) {
	_, conn := startFake(t, legacy(mcp.Version20251125, echoTool))
	s := connect(t, conn, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for i := range 1000 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			arg := fmt.Sprintf(`{"i":%d}`, i)
			res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(arg)})
			if err != nil {
				errs <- err
				return
			}
			if res.Text() != arg {
				errs <- fmt.Errorf("call %d got %q", i, res.Text())
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestCancelSendsNotification(t *testing.T) {
	f, conn := startFake(t, legacy(mcp.Version20251125, func(m *mcp.Message) *mcp.Message {
		return nil // never answers tools/call
	}))
	s := connect(t, conn, nil)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "slow"})
		errc <- err
	}()
	id := f.waitFor(mcp.MethodToolsCall, 1)[0].ID
	cancel()
	if err := within(t, errc, "the cancelled call to return"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	ms := f.waitFor(mcp.NotificationCancelled, 1)
	var p mcp.CancelledParams
	if err := json.Unmarshal(ms[0].Params, &p); err != nil {
		t.Fatal(err)
	}
	if p.RequestID != id {
		t.Fatalf("cancelled %v, want %v", p.RequestID, id)
	}
}

func TestProgressAndServerRequest(t *testing.T) {
	// On tools/call the server reports progress twice, asks the client's
	// model for a completion, and answers the call with what it got.
	var callID mcp.ID
	var f *fakeServer
	f, conn := startFake(t, legacy(mcp.Version20251125, func(m *mcp.Message) *mcp.Message {
		switch {
		case m.Method == mcp.MethodToolsCall:
			callID = m.ID
			var p struct {
				Meta struct {
					Token json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			}
			_ = json.Unmarshal(m.Params, &p)
			for i := 1; i <= 2; i++ {
				n, _ := mcp.NewNotification(mcp.NotificationProgress, map[string]any{"progressToken": p.Meta.Token, "progress": i, "total": 2})
				_ = f.conn.Write(context.Background(), n)
			}
			req, _ := mcp.NewRequest(mcp.StringID("s1"), mcp.MethodSamplingCreateMessage, map[string]any{
				"messages":  []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "hi"}}},
				"maxTokens": 10,
			})
			return req
		case m.IsResponse() && m.ID == mcp.StringID("s1"):
			var r mcp.CreateMessageResult
			_ = json.Unmarshal(m.Result, &r)
			return result(callID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "model said " + string(r.Content)}}})
		}
		return rpcError(m.ID, mcp.CodeMethodNotFound, "no", "")
	}))
	s := connect(t, conn, &transport.Options{Handlers: transport.Handlers{
		Sampling: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			blocks, err := p.Messages[0].Blocks()
			if err != nil {
				return nil, err
			}
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: json.RawMessage(fmt.Sprintf(`{"type":"text","text":"echo %s"}`, blocks[0].Text))}, nil
		},
	}})
	var progress []float64
	ctx := transport.WithProgress(context.Background(), func(p mcp.ProgressParams) { progress = append(progress, p.Progress) })
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "work"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text(), `echo hi`) {
		t.Fatalf("result %q", res.Text())
	}
	// Every progress callback has run by the time the call returns.
	if fmt.Sprint(progress) != "[1 2]" {
		t.Fatalf("progress %v", progress)
	}
}

func TestCloseFailsPendingCalls(t *testing.T) {
	_, conn := startFake(t, legacy(mcp.Version20251125, func(m *mcp.Message) *mcp.Message { return nil }))
	s := connect(t, conn, nil)
	errc := make(chan error, 10)
	for range 10 {
		go func() {
			_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "never"})
			errc <- err
		}()
	}
	s.Close()
	for range 10 {
		if err := within(t, errc, "a pending call to fail on Close"); !errors.Is(err, transport.ErrClosed) {
			t.Fatalf("err = %v", err)
		}
	}
	if _, err := s.ListTools(context.Background()); !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestResponseToUnknownIDIsDropped(t *testing.T) {
	_, conn := startFake(t, legacy(mcp.Version20251125, func(m *mcp.Message) *mcp.Message {
		// A wrong id first, then the right answer.
		return result(mcp.Int64ID(987654), map[string]any{"content": []any{}})
	}))
	s := connect(t, conn, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "x"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
}

// Regression: a server whose server/discover lists only legacy versions got
// initialize twice (the second one refused as a duplicate by go-sdk's
// stateful HTTP server).
func TestDiscoverListingOnlyLegacyInitializesOnce(t *testing.T) {
	h := legacy(mcp.Version20251125, echoTool)
	f, conn := startFake(t, func(f *fakeServer, m *mcp.Message) *mcp.Message {
		if m.Method == mcp.MethodDiscover {
			return result(m.ID, map[string]any{"supportedVersions": []string{"2025-11-25", "2025-06-18"}, "capabilities": map[string]any{}})
		}
		return h(f, m)
	})
	s := connect(t, conn, nil)
	if v := s.ServerInfo().ProtocolVersion; v != mcp.Version20251125 {
		t.Fatalf("version %q", v)
	}
	if n := len(f.messages(mcp.MethodInitialize)); n != 1 {
		t.Fatalf("initialize sent %d times", n)
	}
}

// Regression: with 2026-07-28 pinned, a first request refused with -32022
// listing 2026-07-28 itself (the conformance request-metadata scenario) was
// given up instead of retried.
func TestPinnedModernVersionRetriedAfterRefusal(t *testing.T) {
	var discovers atomic.Int32
	_, conn := startFake(t, func(f *fakeServer, m *mcp.Message) *mcp.Message {
		if m.Method == mcp.MethodDiscover && discovers.Add(1) == 1 {
			return rpcError(m.ID, mcp.CodeUnsupportedProtocolVersion, "unsupported", `{"supported":["2026-07-28"],"requested":"2026-07-28"}`)
		}
		return modern(t, echoTool)(f, m)
	})
	s := connect(t, conn, &transport.Options{ProtocolVersion: mcp.Version20260728})
	if s.ServerInfo().ProtocolVersion != mcp.Version20260728 || discovers.Load() != 2 {
		t.Fatalf("version %q after %d discovers", s.ServerInfo().ProtocolVersion, discovers.Load())
	}
}

// logRecords is a slog.Handler that keeps every record, for a test to
// wait on.
type logRecords struct{ ch chan slog.Record }

func (h logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (h logRecords) Handle(_ context.Context, r slog.Record) error {
	h.ch <- r.Clone()
	return nil
}
func (h logRecords) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h logRecords) WithGroup(string) slog.Handler      { return h }

// TestLateAnswerToAGivenUpCallIsNoWarning pins the fix for a warning
// ("response to no pending request") that a bridge logged at every start
// of a server slow enough to answer the server/discover probe after
// ProbeTimeout: an answer to an id the session sent and gave up is
// expected, and logged at debug level; an id it never sent is still a
// warning.
func TestLateAnswerToAGivenUpCallIsNoWarning(t *testing.T) {
	f, conn := startFake(t, legacy(mcp.Version20250618, func(m *mcp.Message) *mcp.Message { return nil }))
	logs := logRecords{ch: make(chan slog.Record, 1024)}
	s := connect(t, conn, &transport.Options{Logger: slog.New(logs)})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "slow"})
		done <- err
	}()
	call := f.waitFor(mcp.MethodToolsCall, 1)[0]
	cancel()
	if err := within(t, done, "the cancelled call"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	late := result(call.ID, map[string]any{"content": []any{}})
	stray := result(mcp.Int64ID(1<<40), map[string]any{"content": []any{}})
	for _, m := range []*mcp.Message{late, stray} {
		if err := f.conn.Write(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	// The reader handles messages in order: the stray answer's record
	// comes after the late one's.
	var sawLate bool
	for {
		r := within(t, logs.ch, "the warning about an id never sent")
		var id string
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "id" {
				id = a.Value.String()
			}
			return true
		})
		switch id {
		case call.ID.String():
			if r.Level >= slog.LevelWarn {
				t.Errorf("a late answer to a call given up is logged at %v: %q", r.Level, r.Message)
			}
			sawLate = true
		case stray.ID.String():
			if r.Level != slog.LevelWarn {
				t.Errorf("an answer to an id never sent is logged at %v: %q", r.Level, r.Message)
			}
			if !sawLate {
				t.Error("no record of the late answer")
			}
			return
		}
	}
}
