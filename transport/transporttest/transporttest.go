package transporttest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
)

// Timeout bounds every wait in the kit. It is far above what any check
// needs, so that a slow CI machine never fails a correct Conn; it exists
// only to turn a hang into a failure with a message.
const Timeout = 30 * time.Second

// Option configures Run.
type Option func(*config)

type config struct {
	server   *mcptest.Server
	versions []string
	requests []string // RunTransport: server requests the Transport carries

	// RunFaults
	faultNA            map[string]string // row -> why it does not apply
	faultDefect        map[string]string // row -> the known defect
	faultResends       bool
	faultTooLargeFatal string
}

// WithServer names the mcptest.Server that serves the dialled Conns, in
// the same process. It enables the checks that look at the server's side:
// that a call cancelled by its context reached the server as
// notifications/cancelled.
func WithServer(s *mcptest.Server) Option {
	return func(c *config) { c.server = s }
}

// WithVersions sets the protocol versions the Session subtests run with,
// as transport.Options.ProtocolVersion: "" lets the Session probe and pick.
// The default is "" and "2025-11-25", which against the reference server
// covers both eras. A Conn that carries only one era (a legacy-only wire)
// passes only the versions it can carry.
func WithVersions(versions ...string) Option {
	return func(c *config) { c.versions = versions }
}

// Run runs the conformance subtests against Conns returned by dial. dial is
// called once per subtest, with that subtest's t, and must return a fresh
// Conn whose other end is served by mcptest.NewReference (with its default
// tools; any Options). It should register its own cleanup with t.Cleanup.
func Run(t *testing.T, dial func(t *testing.T) transport.Conn, opts ...Option) {
	cfg := config{versions: []string{"", mcp.Version20251125}}
	for _, o := range opts {
		o(&cfg)
	}
	k := &kit{cfg: cfg, dial: dial}
	t.Run("Conn", func(t *testing.T) {
		t.Run("PingRoundTrip", k.connPingRoundTrip)
		t.Run("ConcurrentWrites", k.connConcurrentWrites)
		t.Run("WriteDoesNotRetain", k.connWriteDoesNotRetain)
		t.Run("CloseUnblocksRead", k.connCloseUnblocksRead)
		t.Run("ReadWriteAfterClose", k.connAfterClose)
		t.Run("CloseTwice", k.connCloseTwice)
	})
	for _, v := range cfg.versions {
		name := v
		if name == "" {
			name = "auto"
		}
		t.Run("Session/"+name, func(t *testing.T) {
			s := &sessionKit{kit: k, version: v}
			t.Run("Handshake", s.handshake)
			t.Run("ListTools", s.listTools)
			t.Run("Echo", s.echo)
			t.Run("StructuredResult", s.structured)
			t.Run("ToolError", s.toolError)
			t.Run("UnknownTool", s.unknownTool)
			t.Run("ConcurrentCalls", s.concurrentCalls)
			t.Run("LargeResult", s.largeResult)
			t.Run("Progress", s.progress)
			t.Run("Sampling", s.sampling)
			t.Run("Elicitation", s.elicitation)
			t.Run("Roots", s.roots)
			t.Run("Notifications", s.notifications)
			t.Run("Ping", s.ping)
			t.Run("Cancel", s.cancel)
			t.Run("Close", s.close)
		})
	}
}

type kit struct {
	cfg  config
	dial func(t *testing.T) transport.Conn
	// sleeps numbers the sleep calls, so that a check can find its own
	// call among the server's records by its arguments.
	sleeps atomic.Int64
}

func limit(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	t.Cleanup(cancel)
	return ctx
}

// closedErr reports whether err says the connection is over.
func closedErr(err error) bool {
	return errors.Is(err, transport.ErrClosed) || errors.Is(err, transport.ErrConnectionLost)
}

// ---- Conn subtests ----

func pingRequest(id mcp.ID) *mcp.Message {
	return &mcp.Message{ID: id, Method: mcp.MethodPing}
}

// readResponse reads until a response arrives, skipping notifications and
// requests from the server.
func readResponse(ctx context.Context, conn transport.Conn) (*mcp.Message, error) {
	for {
		m, err := conn.Read(ctx)
		if err != nil {
			return nil, err
		}
		if m.IsResponse() {
			return m, nil
		}
	}
}

func (k *kit) connPingRoundTrip(t *testing.T) {
	conn := k.dial(t)
	defer conn.Close()
	ctx := limit(t)
	id := mcp.StringID("transporttest-ping")
	if err := conn.Write(ctx, pingRequest(id)); err != nil {
		t.Fatalf("Write ping: %v", err)
	}
	m, err := readResponse(ctx, conn)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if m.ID != id {
		t.Fatalf("response id %s, want %s", m.ID, id)
	}
	if m.Error != nil {
		// The reference server answers a ping before any handshake; a
		// Conn whose wire insists on one may turn it into an error, which
		// still proves the round trip.
		t.Logf("ping answered with an error: %v", m.Error)
	} else if string(bytes.TrimSpace(m.Result)) != "{}" {
		t.Fatalf("ping result %s, want {}", m.Result)
	}
}

// connWriteDoesNotRetain overwrites a message the moment Write returns, as
// the engine does when it recycles its requests: a Conn that still holds
// the message (a queue to a writer goroutine, a channel to the other end)
// sends the overwritten one, whose answer carries the wrong id.
func (k *kit) connWriteDoesNotRetain(t *testing.T) {
	conn := k.dial(t)
	defer conn.Close()
	ctx := limit(t)
	id := mcp.StringID("transporttest-retain")
	msg := pingRequest(id)
	if err := conn.Write(ctx, msg); err != nil {
		t.Fatalf("Write ping: %v", err)
	}
	*msg = mcp.Message{ID: mcp.StringID("transporttest-overwritten"), Method: "transporttest/overwritten"}
	m, err := readResponse(ctx, conn)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if m.ID != id {
		t.Fatalf("response id %s, want %s: the Conn sent the message as it was after Write returned (Write must not retain it)", m.ID, id)
	}
}

func (k *kit) connConcurrentWrites(t *testing.T) {
	conn := k.dial(t)
	defer conn.Close()
	ctx := limit(t)
	const n = 64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := conn.Write(ctx, pingRequest(mcp.Int64ID(int64(i+1)))); err != nil {
				errs <- fmt.Errorf("write %d: %w", i+1, err)
			}
		}()
	}
	seen := make(map[mcp.ID]bool)
	readErr := make(chan error, 1)
	go func() {
		for len(seen) < n {
			m, err := readResponse(ctx, conn)
			if err != nil {
				readErr <- fmt.Errorf("read after %d answers: %w", len(seen), err)
				return
			}
			if v, ok := m.ID.Int64(); !ok || v < 1 || v > n || seen[m.ID] {
				readErr <- fmt.Errorf("unexpected or repeated answer id %s", m.ID)
				return
			}
			seen[m.ID] = true
		}
		readErr <- nil
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := <-readErr; err != nil {
		t.Fatal(err)
	}
}

func (k *kit) connCloseUnblocksRead(t *testing.T) {
	conn := k.dial(t)
	errc := make(chan error, 1)
	go func() {
		// No message is due: this Read blocks until Close ends it.
		m, err := conn.Read(context.Background())
		if err == nil {
			err = fmt.Errorf("read returned a message (%+v) instead of blocking", m)
		}
		errc <- err
	}()
	// The Read may or may not have started blocking when Close runs; a
	// correct Conn ends it either way.
	if err := conn.Close(); err != nil {
		t.Logf("Close: %v", err)
	}
	select {
	case err := <-errc:
		if !closedErr(err) {
			t.Fatalf("pending Read ended with %v, want an error wrapping ErrClosed or ErrConnectionLost", err)
		}
	case <-limit(t).Done():
		t.Fatal("Close did not unblock a pending Read")
	}
}

func (k *kit) connAfterClose(t *testing.T) {
	conn := k.dial(t)
	conn.Close()
	ctx := limit(t)
	if _, err := conn.Read(ctx); !closedErr(err) {
		t.Errorf("Read after Close: %v, want an error wrapping ErrClosed or ErrConnectionLost", err)
	}
	if err := conn.Write(ctx, pingRequest(mcp.Int64ID(1))); !closedErr(err) {
		t.Errorf("Write after Close: %v, want an error wrapping ErrClosed or ErrConnectionLost", err)
	}
}

func (k *kit) connCloseTwice(t *testing.T) {
	conn := k.dial(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		conn.Close()
		conn.Close()
	}()
	select {
	case <-done:
	case <-limit(t).Done():
		t.Fatal("Close twice did not return")
	}
}

// ---- Session subtests ----

type sessionKit struct {
	*kit
	version string
}

// samplingReply, elicitedName and kitRoot are what the kit's handlers
// answer, so that the checks can recognise them in the tools' results.
const (
	samplingPrefix = "sampled: "
	elicitedName   = "tako-kit"
	kitRoot        = "file:///transporttest/root"
)

func handlers() transport.Handlers {
	return transport.Handlers{
		Sampling: func(ctx context.Context, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			var prompt string
			if len(req.Messages) > 0 {
				if blocks, err := req.Messages[0].Blocks(); err == nil && len(blocks) > 0 {
					prompt = blocks[0].Text
				}
			}
			content, _ := json.Marshal(mcp.TextContent(samplingPrefix + prompt))
			return &mcp.CreateMessageResult{Role: "assistant", Content: content, Model: "transporttest", StopReason: mcp.StopEndTurn}, nil
		},
		Elicitation: func(ctx context.Context, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"name": elicitedName}}, nil
		},
		Roots: func(ctx context.Context) ([]mcp.Root, error) {
			return []mcp.Root{{URI: kitRoot, Name: "kit"}}, nil
		},
	}
}

// connect dials and runs the handshake; the session is closed when the
// test ends.
func (s *sessionKit) connect(t *testing.T) *transport.Session {
	t.Helper()
	conn := s.dial(t)
	opts := &transport.Options{
		ClientInfo:      mcp.Implementation{Name: "transporttest", Version: transport.Version},
		ProtocolVersion: s.version,
		Handlers:        handlers(),
		LogLevel:        "debug",
	}
	sess, err := transport.Connect(limit(t), conn, opts)
	if err != nil {
		t.Fatalf("Connect (version %q): %v", s.version, err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

func call(t *testing.T, sess *transport.Session, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := callErr(limit(t), sess, tool, args)
	if err != nil {
		t.Fatalf("CallTool %s: %v", tool, err)
	}
	return res
}

func callErr(ctx context.Context, sess *transport.Session, tool string, args any) (*mcp.CallToolResult, error) {
	var raw json.RawMessage
	if args != nil {
		b, err := json.Marshal(args)
		if err != nil {
			return nil, err
		}
		raw = b
	}
	return sess.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: raw})
}

func (s *sessionKit) handshake(t *testing.T) {
	sess := s.connect(t)
	info := sess.ServerInfo()
	switch {
	case !mcp.IsSupportedVersion(info.ProtocolVersion):
		t.Fatalf("negotiated version %q", info.ProtocolVersion)
	case s.version != "" && mcp.IsModernVersion(s.version) && info.ProtocolVersion != s.version:
		t.Fatalf("negotiated %q, pinned %q", info.ProtocolVersion, s.version)
	case s.version != "" && !mcp.IsModernVersion(s.version) && mcp.IsModernVersion(info.ProtocolVersion):
		t.Fatalf("negotiated %q, pinned legacy %q", info.ProtocolVersion, s.version)
	}
	if info.Implementation.Name == "" {
		t.Error("server did not name itself")
	}
	if info.Capabilities.Tools == nil {
		t.Error("server declared no tools capability")
	}
	select {
	case <-sess.Done():
		t.Fatalf("session ended right after the handshake: %v", sess.Err())
	default:
	}
}

func (s *sessionKit) listTools(t *testing.T) {
	sess := s.connect(t)
	tools, err := sess.ListTools(limit(t))
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	byName := make(map[string]mcp.Tool)
	for _, tool := range tools {
		if _, dup := byName[tool.Name]; dup {
			t.Errorf("tool %q listed twice", tool.Name)
		}
		byName[tool.Name] = tool
	}
	for _, name := range []string{mcptest.ToolEcho, mcptest.ToolAdd, mcptest.ToolProgress, mcptest.ToolSample,
		mcptest.ToolElicit, mcptest.ToolRoots, mcptest.ToolBig, mcptest.ToolNotify, mcptest.ToolSleep, mcptest.ToolFail} {
		tool, ok := byName[name]
		if !ok {
			t.Errorf("reference tool %q missing from %d tools", name, len(tools))
			continue
		}
		var schema struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(tool.InputSchema, &schema); err != nil || schema.Type != "object" {
			t.Errorf("tool %q: inputSchema %s", name, tool.InputSchema)
		}
	}
	if add, ok := byName[mcptest.ToolAdd]; ok && len(add.OutputSchema) == 0 {
		t.Error("add has no outputSchema")
	}
}

func (s *sessionKit) echo(t *testing.T) {
	sess := s.connect(t)
	// Characters a framing could mangle: quotes, backslashes, newlines,
	// non-ASCII, U+2028 (a line separator to JavaScript).
	msg := "héllo \"wörld\" \\ \n\t✓ \u2028 \U0001F419"
	res := call(t, sess, mcptest.ToolEcho, map[string]any{"message": msg})
	if res.IsError || res.Text() != msg {
		t.Fatalf("echo returned %q (isError %v), want %q", res.Text(), res.IsError, msg)
	}
}

func (s *sessionKit) structured(t *testing.T) {
	sess := s.connect(t)
	res := call(t, sess, mcptest.ToolAdd, map[string]any{"a": 2, "b": 3})
	var sc struct {
		Sum *float64 `json:"sum"`
	}
	if res.Text() != "5" || json.Unmarshal(res.StructuredContent, &sc) != nil || sc.Sum == nil || *sc.Sum != 5 {
		t.Fatalf("add returned %q, structuredContent %s", res.Text(), res.StructuredContent)
	}
}

func (s *sessionKit) toolError(t *testing.T) {
	sess := s.connect(t)
	res := call(t, sess, mcptest.ToolFail, map[string]any{"message": "kit failure"})
	if !res.IsError || res.Text() != "kit failure" {
		t.Fatalf("fail returned %+v, want isError with the message", res)
	}
}

func (s *sessionKit) unknownTool(t *testing.T) {
	sess := s.connect(t)
	_, err := callErr(limit(t), sess, "no-such-tool", nil)
	var rpcErr *mcp.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeInvalidParams {
		t.Fatalf("unknown tool: %v, want an *mcp.Error with code %d", err, mcp.CodeInvalidParams)
	}
	// The session survives a refused call.
	call(t, sess, mcptest.ToolEcho, map[string]any{"message": "still here"})
}

func (s *sessionKit) concurrentCalls(t *testing.T) {
	concurrentEchoes(t, s.connect(t), 200)
}

func (s *sessionKit) largeResult(t *testing.T) {
	sess := s.connect(t)
	const size = 4 << 20
	res := call(t, sess, mcptest.ToolBig, map[string]any{"bytes": size})
	text := res.Text()
	if len(text) != size {
		t.Fatalf("big returned %d bytes, want %d", len(text), size)
	}
	if strings.Count(text, "x") != size {
		t.Fatal("big result corrupted: not all bytes are 'x'")
	}
}

func (s *sessionKit) progress(t *testing.T) {
	sess := s.connect(t)
	const steps = 5
	var mu sync.Mutex
	var got []mcp.ProgressParams
	ctx := transport.WithProgress(limit(t), func(p mcp.ProgressParams) {
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
	})
	res, err := callErr(ctx, sess, mcptest.ToolProgress, map[string]any{"steps": steps})
	if err != nil || res.Text() != "done" {
		t.Fatalf("progress: %v %+v", err, res)
	}
	// Session delivers a call's progress before the call returns.
	mu.Lock()
	defer mu.Unlock()
	if len(got) != steps {
		t.Fatalf("got %d progress notifications, want %d", len(got), steps)
	}
	for i, p := range got {
		if p.Progress != float64(i+1) || p.Total == nil || *p.Total != steps {
			t.Errorf("progress %d: %+v", i, p)
		}
	}
}

func (s *sessionKit) sampling(t *testing.T) {
	sess := s.connect(t)
	res := call(t, sess, mcptest.ToolSample, map[string]any{"prompt": "kit prompt"})
	if res.IsError || res.Text() != samplingPrefix+"kit prompt" {
		t.Fatalf("sample returned %q (isError %v)", res.Text(), res.IsError)
	}
}

func (s *sessionKit) elicitation(t *testing.T) {
	sess := s.connect(t)
	res := call(t, sess, mcptest.ToolElicit, map[string]any{"message": "who are you?"})
	var content map[string]any
	if res.IsError || json.Unmarshal([]byte(res.Text()), &content) != nil || content["name"] != elicitedName {
		t.Fatalf("elicit returned %q (isError %v)", res.Text(), res.IsError)
	}
}

func (s *sessionKit) roots(t *testing.T) {
	sess := s.connect(t)
	res := call(t, sess, mcptest.ToolRoots, nil)
	var roots []mcp.Root
	if res.IsError || json.Unmarshal([]byte(res.Text()), &roots) != nil || len(roots) != 1 || roots[0].URI != kitRoot {
		t.Fatalf("roots returned %q (isError %v)", res.Text(), res.IsError)
	}
}

func (s *sessionKit) notifications(t *testing.T) {
	sess := s.connect(t)
	got := make(chan mcp.Notification, 16)
	unsubscribe := sess.Subscribe(func(n mcp.Notification) {
		select {
		case got <- n:
		default: // the check needs only the first few
		}
	})
	defer unsubscribe()
	call(t, sess, mcptest.ToolNotify, nil)
	want := map[string]bool{mcp.NotificationToolsListChanged: false, mcp.NotificationMessage: false}
	ctx := limit(t)
	for missing := len(want); missing > 0; {
		select {
		case n := <-got:
			if seen, ok := want[n.Method]; ok && !seen {
				want[n.Method] = true
				missing--
			}
		case <-ctx.Done():
			t.Fatalf("notifications delivered to Subscribe: %v (true = delivered)", want)
		}
	}
}

func (s *sessionKit) ping(t *testing.T) {
	sess := s.connect(t)
	if err := sess.Ping(limit(t)); err != nil {
		t.Fatalf("Ping: %v", err)
	}
}

// startSleep starts a long sleep call on its own goroutine and returns once
// the server has started it (the sleep tool sends a progress notification
// first), with the call's error channel and its ms argument.
func (s *sessionKit) startSleep(t *testing.T, ctx context.Context, sess *transport.Session) (<-chan error, int64) {
	t.Helper()
	// A distinct ms per call lets a check find this call in the server's
	// records.
	ms := 3_600_000 + s.sleeps.Add(1)
	started := make(chan struct{})
	var once sync.Once
	pctx := transport.WithProgress(ctx, func(mcp.ProgressParams) { once.Do(func() { close(started) }) })
	errc := make(chan error, 1)
	go func() {
		_, err := callErr(pctx, sess, mcptest.ToolSleep, map[string]any{"ms": ms})
		errc <- err
	}()
	select {
	case <-started:
	case err := <-errc:
		t.Fatalf("sleep returned before it started: %v", err)
	case <-limit(t).Done():
		t.Fatal("sleep call never reported progress")
	}
	return errc, ms
}

func (s *sessionKit) cancel(t *testing.T) {
	sess := s.connect(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc, ms := s.startSleep(t, ctx, sess)
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled call returned %v, want context.Canceled", err)
		}
	case <-limit(t).Done():
		t.Fatal("cancelled call did not return")
	}
	if srv := s.cfg.server; srv != nil {
		// The server must learn of it: notifications/cancelled naming the
		// sleep call's id, on the same connection.
		wctx := limit(t)
		rec, err := srv.Wait(wctx, func(r mcptest.Record) bool {
			var p struct {
				Name      string `json:"name"`
				Arguments struct {
					MS int64 `json:"ms"`
				} `json:"arguments"`
			}
			return r.Msg.Method == mcp.MethodToolsCall && r.Params(&p) == nil && p.Name == mcptest.ToolSleep && p.Arguments.MS == ms
		})
		if err != nil {
			t.Fatalf("server never saw the sleep call: %v", err)
		}
		_, err = srv.Wait(wctx, func(r mcptest.Record) bool {
			var p mcp.CancelledParams
			return r.Peer == rec.Peer && r.Msg.Method == mcp.NotificationCancelled && r.Params(&p) == nil && p.RequestID == rec.Msg.ID
		})
		if err != nil {
			t.Fatalf("server never saw notifications/cancelled for request %s: %v", rec.Msg.ID, err)
		}
	}
	// The session goes on after a cancellation.
	call(t, sess, mcptest.ToolEcho, map[string]any{"message": "after cancel"})
}

func (s *sessionKit) close(t *testing.T) {
	sess := s.connect(t)
	errc, _ := s.startSleep(t, context.Background(), sess)
	closed := make(chan error, 1)
	go func() { closed <- sess.Close() }()
	select {
	case err := <-errc:
		if !errors.Is(err, transport.ErrClosed) {
			t.Errorf("call pending at Close returned %v, want an error wrapping ErrClosed", err)
		}
	case <-limit(t).Done():
		t.Fatal("Close did not unblock a pending call")
	}
	select {
	case err := <-closed:
		if err != nil {
			t.Logf("Close: %v", err)
		}
	case <-limit(t).Done():
		t.Fatal("Close did not return")
	}
	select {
	case <-sess.Done():
	default:
		t.Error("Done not closed after Close")
	}
	if err := sess.Err(); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Err after Close: %v, want ErrClosed", err)
	}
	// Idempotent: a second Close returns at once, without panicking.
	sess.Close()
	ctx := limit(t)
	if _, err := callErr(ctx, sess, mcptest.ToolEcho, map[string]any{"message": "late"}); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("CallTool after Close: %v, want an error wrapping ErrClosed", err)
	}
	if _, err := sess.ListTools(ctx); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("ListTools after Close: %v, want an error wrapping ErrClosed", err)
	}
}
