package transport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// TestServerRequestFloodIsBounded: a server that sends ten thousand pings
// and never reads the answers can make the client hold no more than
// MaxServerRequests handler goroutines (before the fix: one goroutine per
// request, 100,000 of them and about 1 GB for 100,000 pings).
func TestServerRequestFloodIsBounded(t *testing.T) {
	client, server := transport.Pipe()
	// The server side reads only the handshake, then stops reading.
	s := connectLegacyOverPipe(t, client, server, &transport.Options{MaxServerRequests: 8})
	before := runtime.NumGoroutine()
	const n = 10_000
	for i := range n {
		ping := &mcp.Message{ID: mcp.Int64ID(int64(1_000_000 + i)), Method: mcp.MethodPing}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := server.Write(ctx, ping)
		cancel()
		if err != nil {
			t.Fatalf("ping %d: %v", i, err)
		}
	}
	// Every ping but the pipe's buffer has been read by the client's
	// reader, which answered, refused or dropped each.
	if got := runtime.NumGoroutine() - before; got > 8+4 {
		t.Fatalf("%d goroutines more after %d unanswered pings, want at most the bound (8) and a few", got, n)
	}
	s.Close()
}

// TestServerRequestsPastTheBoundAreRefused: past MaxServerRequests, a
// request is answered at once with an error rather than queued.
func TestServerRequestsPastTheBoundAreRefused(t *testing.T) {
	release := make(chan struct{})
	var started atomic.Int32
	f, conn := startFake(t, legacy(mcp.Version20251125, echoTool))
	s := connect(t, conn, &transport.Options{MaxServerRequests: 2, Handlers: transport.Handlers{
		Roots: func(ctx context.Context) ([]mcp.Root, error) {
			started.Add(1)
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil, nil
		},
	}})
	defer close(release)
	for i := range 3 {
		if err := f.conn.Write(context.Background(), &mcp.Message{ID: mcp.Int64ID(int64(500 + i)), Method: mcp.MethodRootsList}); err != nil {
			t.Fatal(err)
		}
	}
	refused := f.waitForResponse(mcp.Int64ID(502))
	if refused.Error == nil || refused.Error.Code != mcp.CodeInternalError || !strings.Contains(refused.Error.Message, "busy") {
		t.Fatalf("third request answered %+v, want a busy error", refused)
	}
	_ = s
}

// floodStuckSubscriber subscribes to s a subscriber that takes the first
// notification and then blocks until the test ends, and has the fake
// server f send n log notifications with params, the first alone (so that
// the subscriber holds it before the rest arrive).
func floodStuckSubscriber(t *testing.T, f *fakeServer, s *transport.Session, n int, params json.RawMessage) {
	t.Helper()
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	var got atomic.Int64
	first := make(chan struct{})
	unsub := s.Subscribe(func(n mcp.Notification) {
		if got.Add(1) == 1 {
			close(first)
			<-block
		}
	})
	t.Cleanup(unsub)
	send := func(i int) {
		if err := f.conn.Write(context.Background(), &mcp.Message{Method: mcp.NotificationMessage, Params: params}); err != nil {
			t.Fatalf("notification %d: %v", i, err)
		}
	}
	send(0)
	within(t, first, "the first notification") // the subscriber now blocks with it
	for i := 1; i < n; i++ {
		send(i)
	}
}

// TestNotificationFloodToSlowSubscriberIsBounded: notifications for a
// subscriber that does not keep up are dropped past
// MaxQueuedNotifications, counted, and nothing else is lost (before the
// fix the queue grew without bound: 170-190 MB for 100,000 notifications
// of 1 KB).
func TestNotificationFloodToSlowSubscriberIsBounded(t *testing.T) {
	f, conn := startFake(t, legacy(mcp.Version20251125, echoTool))
	s := connect(t, conn, &transport.Options{MaxQueuedNotifications: 100})
	const n = 20_000
	floodStuckSubscriber(t, f, s, n, json.RawMessage(`{"level":"info","data":"`+strings.Repeat("x", 1000)+`"}`))
	// A call after the flood: its response passes the full queue, and
	// once it is back every notification before it has been read.
	if _, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{}`)}); err != nil {
		t.Fatalf("a call behind a full notification queue: %v", err)
	}
	if d := s.DroppedNotifications(); d != n-1-100 {
		t.Fatalf("dropped %d, want %d (all but the one taken and the 100 queued)", d, n-1-100)
	}
}

// waitForResponse waits until the server has received the client's
// response to id, and fails the test after fakeWait.
func (f *fakeServer) waitForResponse(id mcp.ID) *mcp.Message {
	f.t.Helper()
	var resp *mcp.Message
	f.waitUntil("the response to "+id.String(), func() bool {
		for _, m := range f.seen {
			if m.IsResponse() && m.ID == id {
				resp = m
				return true
			}
		}
		return false
	})
	return resp
}

// connectLegacyOverPipe runs the legacy handshake with a server end that
// answers it and then never reads again.
func connectLegacyOverPipe(t *testing.T, client, server transport.Conn, opts *transport.Options) *transport.Session {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		handle := legacy(mcp.Version20251125, nil)
		for {
			m, err := server.Read(context.Background())
			if err != nil {
				return
			}
			if resp := handle(nil, m); resp != nil {
				server.Write(context.Background(), resp)
			}
			if m.Method == mcp.NotificationInitialized {
				return
			}
		}
	}()
	opts.ProtocolVersion = mcp.Version20251125
	s := connect(t, client, opts)
	within(t, done, "the server end to see notifications/initialized")
	t.Cleanup(func() { server.Close() })
	return s
}

// The defaults as documented (Options, CHANGELOG): the tests below use
// these numbers, not the constants, so that a changed constant fails them.
const (
	documentedMaxServerRequests      = 32
	documentedMaxQueuedNotifications = 4096
)

// TestServerRequestFloodIsBoundedByDefault: "the defaults are never
// tested" (every other test passes its own MaxServerRequests, so a default
// of 2^30 passed them all). With the zero Options, 32 requests are
// answered at once, each holding its handler, and the next is refused with
// the busy error at once; none of the first 32 is refused.
func TestServerRequestFloodIsBoundedByDefault(t *testing.T) {
	const bound = documentedMaxServerRequests
	release := make(chan struct{})
	started := make(chan struct{}, bound+1)
	f, conn := startFake(t, legacy(mcp.Version20251125, echoTool))
	connect(t, conn, &transport.Options{Handlers: transport.Handlers{
		Roots: func(ctx context.Context) ([]mcp.Root, error) {
			started <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil, nil
		},
	}})
	defer close(release)
	const first = 500
	for i := range bound + 1 {
		if err := f.conn.Write(context.Background(), &mcp.Message{ID: mcp.Int64ID(int64(first + i)), Method: mcp.MethodRootsList}); err != nil {
			t.Fatal(err)
		}
	}
	past := mcp.Int64ID(int64(first + bound))
	refused := f.waitForResponse(past)
	if refused.Error == nil || refused.Error.Code != mcp.CodeInternalError || !strings.Contains(refused.Error.Message, "busy") {
		t.Fatalf("request %d, past the default bound, answered %+v, want a busy error", bound+1, refused)
	}
	for i := range bound {
		within(t, started, fmt.Sprintf("handler %d of the default %d to start", i+1, bound))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range f.seen {
		if m.IsResponse() && m.ID != past {
			t.Errorf("request %v, within the default bound, was answered while its handler ran: %+v", m.ID, m.Error)
		}
	}
	if n := len(started); n != 0 {
		t.Errorf("%d handlers started past the default bound", n)
	}
}

// TestNotificationFloodIsBoundedByDefault: with the zero Options, a
// subscriber that does not keep up has 4096 notifications queued for it;
// the rest of a flood past them are dropped and counted.
func TestNotificationFloodIsBoundedByDefault(t *testing.T) {
	f, conn := startFake(t, legacy(mcp.Version20251125, echoTool))
	s := connect(t, conn, nil)
	const past = 1000
	n := 1 + documentedMaxQueuedNotifications + past
	floodStuckSubscriber(t, f, s, n, json.RawMessage(`{"level":"info","data":"x"}`))
	// Once the call after the flood is back, every notification before it
	// has been read.
	ctx, cancel := context.WithTimeout(context.Background(), fakeWait)
	defer cancel()
	if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{}`)}); err != nil {
		t.Fatalf("a call behind a full notification queue: %v", err)
	}
	if d := s.DroppedNotifications(); d != past {
		t.Fatalf("dropped %d of %d, want %d (all but the one taken and the default %d queued)", d, n, past, documentedMaxQueuedNotifications)
	}
}

// goroutinesIn reports how many goroutines are running a function whose
// name contains fn.
func goroutinesIn(fn string) int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), fn+"(")
}

// TestIdleSessionRunsNoEventGoroutines pins the fix for every Session
// starting its event and refusal goroutines at Connect: an idle session,
// never sent a notification, ran two goroutines for nothing (a host with a
// thousand sessions, two thousand). They now start with the first event
// or refusal, and Close still ends them.
func TestIdleSessionRunsNoEventGoroutines(t *testing.T) {
	f, conn := startFake(t, legacy(mcp.Version20251125, echoTool))
	s := connect(t, conn, nil)
	if _, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	for _, fn := range []string{"transport.(*Session).eventLoop", "transport.(*Session).refuseLoop"} {
		if n := goroutinesIn(fn); n != 0 {
			t.Errorf("an idle session runs %d goroutines in %s, want none", n, fn)
		}
	}
	got := make(chan struct{}, 1)
	defer s.Subscribe(func(mcp.Notification) {
		select {
		case got <- struct{}{}:
		default:
		}
	})()
	if err := f.conn.Write(context.Background(), &mcp.Message{Method: mcp.NotificationToolsListChanged}); err != nil {
		t.Fatal(err)
	}
	within(t, got, "the notification")
	if n := goroutinesIn("transport.(*Session).eventLoop"); n != 1 {
		t.Errorf("after a notification, %d event goroutines, want 1", n)
	}
	s.Close()
	// Close has waited for it; it may still be on its way out of the
	// deferred Done, as goleak allows for.
	deadline := time.Now().Add(fakeWait)
	for goroutinesIn("transport.(*Session).eventLoop") != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("after Close, an event goroutine is still running %v later", fakeWait)
		}
		runtime.Gosched()
	}
}
