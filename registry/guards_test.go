package registry_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/registry"
	"github.com/tako-mcp/tako/transport"
)

// dialer is a RestartPolicy.Connect that serves srv over a new in-memory
// pipe on every call, counts the calls and keeps every session it made.
// Unlike connect it may run on any goroutine: it reports failure as an
// error, not through t.Fatal.
type dialer struct {
	t     *testing.T
	srv   *mcptest.Server
	calls atomic.Int32

	mu       sync.Mutex
	sessions []*transport.Session
}

func (d *dialer) connect(ctx context.Context) (*transport.Session, error) {
	d.calls.Add(1)
	sctx, cancel := context.WithCancel(context.Background())
	conn, wait := d.srv.Pipe(sctx)
	s, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		cancel()
		wait()
		return nil, err
	}
	d.t.Cleanup(func() {
		s.Close()
		cancel()
		wait()
	})
	d.mu.Lock()
	d.sessions = append(d.sessions, s)
	d.mu.Unlock()
	return s, nil
}

func (d *dialer) Connect(ctx context.Context) (transport.Transport, error) {
	s, err := d.connect(ctx)
	if err != nil {
		return nil, err // not a typed nil in an interface
	}
	return s, nil
}

func (d *dialer) made() []*transport.Session {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.sessions)
}

// waitGoroutinesIn waits until n goroutines have fn on their stacks. It
// is how a test knows that calls it started have reached a point that
// nothing else makes visible (a goroutine waiting for a mutex), without
// guessing a sleep; it fails the test at ctx's deadline.
func waitGoroutinesIn(ctx context.Context, t *testing.T, fn string, n int) {
	t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	buf := make([]byte, 1<<20)
	for {
		for {
			m := runtime.Stack(buf, true)
			if m < len(buf) {
				buf = buf[:m]
				break
			}
			buf = make([]byte, 2*len(buf))
		}
		got := 0
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, fn) {
				got++
			}
		}
		if got >= n {
			return
		}
		buf = buf[:cap(buf)]
		select {
		case <-ctx.Done():
			t.Fatalf("%d goroutines in %s, want %d", got, fn, n)
		case <-tick.C:
		}
	}
}

// TestConcurrentCallsToDeadServerRestartItOnce pins server.restart's check
// that another call restarted the server meanwhile. The orchestrator runs
// a turn's tool calls at once, so several calls routinely find a server
// dead together; they must share one restart. Without the check each of
// them restarts it: every restart uses up one of MaxAttempts (here the
// fourth and fifth calls then fail with "restarted 3 times already") and
// overwrites the transport the one before connected without closing it,
// leaking a session (for stdio, a subprocess).
func TestConcurrentCallsToDeadServerRestartItOnce(t *testing.T) {
	ctx := testContext(t)
	srv := newServer("a", "echo")
	first, kill := connect(t, srv, nil)
	d := &dialer{t: t, srv: srv}
	entered := make(chan struct{}, 5)
	release := make(chan struct{})
	connectGated := func(ctx context.Context) (transport.Transport, error) {
		entered <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return d.Connect(ctx)
	}
	r := registry.New(registry.Options{})
	defer r.Close()
	// MaxAttempts is left at its default of 3.
	if err := r.AddServer(ctx, "a", first, &registry.ServerOptions{Restart: &registry.RestartPolicy{Connect: connectGated}}); err != nil {
		t.Fatal(err)
	}
	kill()
	<-first.Done()

	const n = 5
	results := make(chan registry.Result, n)
	for i := range n {
		go func() {
			results <- r.Dispatch(ctx, registry.Call{ID: fmt.Sprint(i), Name: "echo", Arguments: []byte(`{}`)})
		}()
	}
	// One call is connecting; hold it there until every call has found
	// the server dead and is in restart too, waiting its turn.
	select {
	case <-entered:
	case <-ctx.Done():
		t.Fatal("no restart began")
	}
	waitGoroutinesIn(ctx, t, "registry.(*server).restart(", n)
	close(release)
	for range n {
		select {
		case res := <-results:
			if res.IsError || res.Text() != "a:echo {}" {
				t.Errorf("call %s: %+v", res.ID, res)
			}
		case <-ctx.Done():
			t.Fatal("calls did not return")
		}
	}
	if got := d.calls.Load(); got != 1 {
		t.Errorf("%d calls found the server dead together and Connect ran %d times, want 1", n, got)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	for i, s := range d.made() {
		select {
		case <-s.Done():
		default:
			t.Errorf("session %d of %d that Connect made is still open after Close: a restart overwrote it without closing it", i+1, len(d.made()))
		}
	}
}

// closeSpy is a Session that records its Close.
type closeSpy struct {
	*transport.Session
	once   sync.Once
	closed chan struct{}
}

func (c *closeSpy) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Session.Close()
}

// TestStopDuringRestartClosesNewTransport pins server.restart's check of
// s.stop after Connect returns. When the registry is closed, or the server
// removed, while a restart is connecting, the transport Connect then
// returns has no owner any more: the restart must close it (for stdio,
// end the subprocess it started) and fail the call. Without the check it
// is installed in a server nobody will shut down again, and the call even
// runs on it.
func TestStopDuringRestartClosesNewTransport(t *testing.T) {
	for _, stop := range []struct {
		name string
		fn   func(*registry.Registry) error
	}{
		{"Close", func(r *registry.Registry) error { return r.Close() }},
		{"RemoveServer", func(r *registry.Registry) error { return r.RemoveServer("a") }},
	} {
		t.Run(stop.name, func(t *testing.T) {
			ctx := testContext(t)
			srv := newServer("a", "echo")
			first, kill := connect(t, srv, nil)
			d := &dialer{t: t, srv: srv}
			entered := make(chan struct{}, 1)
			release := make(chan struct{})
			made := make(chan *closeSpy, 1)
			connectGated := func(ctx context.Context) (transport.Transport, error) {
				entered <- struct{}{}
				select {
				case <-release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				s, err := d.connect(ctx)
				if err != nil {
					return nil, err
				}
				spy := &closeSpy{Session: s, closed: make(chan struct{})}
				made <- spy
				return spy, nil
			}
			r := registry.New(registry.Options{})
			defer r.Close()
			if err := r.AddServer(ctx, "a", first, &registry.ServerOptions{Restart: &registry.RestartPolicy{Connect: connectGated}}); err != nil {
				t.Fatal(err)
			}
			kill()
			<-first.Done()
			result := make(chan registry.Result, 1)
			go func() { result <- r.Dispatch(ctx, registry.Call{ID: "c1", Name: "echo", Arguments: []byte(`{}`)}) }()
			select {
			case <-entered:
			case <-ctx.Done():
				t.Fatal("the call did not restart the server")
			}
			if err := stop.fn(r); err != nil {
				t.Fatal(err)
			}
			close(release)
			var res registry.Result
			select {
			case res = <-result:
			case <-ctx.Done():
				t.Fatal("the call did not return")
			}
			var spy *closeSpy
			select {
			case spy = <-made:
			default:
				t.Fatal("Connect made no transport")
			}
			// The restart closes it before the call returns.
			select {
			case <-spy.closed:
			default:
				t.Errorf("the transport connected while the server was being stopped (%s) was not closed", stop.name)
			}
			if !res.IsError {
				t.Errorf("call through a server stopped while it restarted: %+v, want an error result", res)
			}
		})
	}
}

// gatedList is a polling transport whose tools/list, once armed, holds
// its answer (already received from the server) until release is closed,
// announcing on listed that it got that far.
type gatedList struct {
	pollingTransport
	armed   atomic.Bool
	listed  chan struct{}
	release chan struct{}
}

func (g *gatedList) ListTools(ctx context.Context) ([]mcp.Tool, error) {
	tools, err := g.pollingTransport.ListTools(ctx)
	if g.armed.Load() {
		close(g.listed)
		select {
		case <-g.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return tools, err
}

// TestRefreshAfterRemoveServerDoesNotReinstallTools pins install's check
// that the server is still the registered one. A refresh (Refresh, a
// list_changed, a restart) whose tools/list is in flight when RemoveServer
// runs must drop its answer: without the check the removed server's tools
// come back, bound to a server whose transport is closed, and no later
// RemoveServer can take them out (the name is free again).
func TestRefreshAfterRemoveServerDoesNotReinstallTools(t *testing.T) {
	ctx := testContext(t)
	// CacheTTL 1ns: every Refresh lists the polling transport again.
	r := registry.New(registry.Options{CacheTTL: time.Nanosecond})
	defer r.Close()
	s, _ := connect(t, newServer("a", "one", "two"), nil)
	g := &gatedList{pollingTransport: pollingTransport{s}, listed: make(chan struct{}), release: make(chan struct{})}
	if err := r.AddServer(ctx, "a", g, nil); err != nil {
		t.Fatal(err)
	}
	if defs := r.Tools(); len(defs) != 2 {
		t.Fatalf("tools: %+v", defs)
	}
	g.armed.Store(true)
	refreshed := make(chan error, 1)
	go func() { refreshed <- r.Refresh(ctx) }()
	select {
	case <-g.listed:
	case <-ctx.Done():
		t.Fatal("Refresh did not list the tools")
	}
	if err := r.RemoveServer("a"); err != nil {
		t.Fatal(err)
	}
	close(g.release)
	select {
	case err := <-refreshed:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("Refresh did not return")
	}
	if defs := r.Tools(); len(defs) != 0 {
		var names []string
		for _, d := range defs {
			names = append(names, d.Server+"/"+d.Name)
		}
		t.Errorf("tools after RemoveServer and the refresh that was in flight: %q, want none", names)
	}
	if res := dispatch(t, r, "one", `{}`); !res.IsError || !strings.Contains(res.Text(), "unknown tool") {
		t.Errorf("a removed server's tool: %+v, want unknown tool", res)
	}
}

// toolsListCount is how many tools/list requests srv received.
func toolsListCount(srv *mcptest.Server) int {
	n := 0
	for _, rec := range srv.Received() {
		if rec.Msg.Method == mcp.MethodToolsList {
			n++
		}
	}
	return n
}

// TestRefreshDoesNotRelistNotifyingSessionWithoutTTL pins the rule of
// server.stale: a Session (a transport that caches results) is asked on
// every Refresh only when its server gave the list a positive TTL, for its
// cache then answers without sending anything. A session that delivers
// notifications and whose server gave no TTL caches nothing; it is kept
// current by list_changed and must not be listed again. The agent calls
// Refresh every turn, so without "&& hasTTL && ttl > 0" every turn would
// send a tools/list to every such server (one per turn here, 3 in all).
func TestRefreshDoesNotRelistNotifyingSessionWithoutTTL(t *testing.T) {
	for _, era := range []struct {
		name string
		opts *transport.Options
	}{
		{"legacy", legacy},
		{"negotiated", nil},
	} {
		t.Run(era.name, func(t *testing.T) {
			ctx := testContext(t)
			r := registry.New(registry.Options{CacheTTL: time.Nanosecond})
			defer r.Close()
			srv := newServer("a", "one")
			s, _ := connect(t, srv, era.opts)
			if !s.CachesResults() || !s.ServerInfo().Notifications {
				t.Fatalf("the session caches results: %v, delivers notifications: %v; the test needs both", s.CachesResults(), s.ServerInfo().Notifications)
			}
			if ttl, ok := s.TTL(mcp.MethodToolsList); ok {
				t.Fatalf("the server gave tools/list a TTL (%v); the test needs none", ttl)
			}
			if err := r.AddServer(ctx, "a", s, nil); err != nil {
				t.Fatal(err)
			}
			before := toolsListCount(srv)
			if before != 1 {
				t.Fatalf("AddServer sent %d tools/list, want 1", before)
			}
			for range 3 {
				if err := r.Refresh(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if got := toolsListCount(srv); got != before {
				t.Errorf("3 Refresh calls sent %d tools/list to a session that delivers notifications and gave no TTL, want 0", got-before)
			}
		})
	}
}

// dupList lists every tool of the Session twice, as a buggy server would.
type dupList struct {
	*transport.Session
}

func (d dupList) ListTools(ctx context.Context) ([]mcp.Tool, error) {
	tools, err := d.Session.ListTools(ctx)
	return append(tools, tools...), err
}

// TestToolListedTwiceIsAClash pins install's check for a name seen twice
// in one listing. A server that lists a name twice, or a naming policy
// that maps two of its tools to one name, must make AddServer fail with a
// *ClashError naming it in Twice: without the check the second silently
// overwrites the first, and the model calls a tool other than the one it
// was shown.
func TestToolListedTwiceIsAClash(t *testing.T) {
	for _, c := range []struct {
		name   string
		naming registry.NamingPolicy
		wrap   func(*transport.Session) transport.Transport
		tools  []string
		twice  string
	}{
		{
			name:  "listed twice",
			wrap:  func(s *transport.Session) transport.Transport { return dupList{s} },
			tools: []string{"echo"},
			twice: "echo",
		},
		{
			name:   "naming policy collapses two names",
			naming: func(server, tool string) string { return server + "__" + strings.TrimSuffix(tool, "_v2") },
			wrap:   func(s *transport.Session) transport.Transport { return s },
			tools:  []string{"search", "search_v2"},
			twice:  "a__search",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := registry.New(registry.Options{Naming: c.naming})
			defer r.Close()
			s, _ := connect(t, newServer("a", c.tools...), nil)
			err := r.AddServer(testContext(t), "a", c.wrap(s), nil)
			var ce *registry.ClashError
			if !errors.As(err, &ce) || !errors.Is(err, registry.ErrClash) {
				t.Fatalf("AddServer: err = %v, want a *ClashError", err)
			}
			if ce.Server != "a" || !slices.Equal(ce.Twice, []string{c.twice}) || len(ce.Names) != 0 {
				t.Errorf("ClashError %+v, want Twice [%q] for server a", ce, c.twice)
			}
			if !strings.Contains(err.Error(), "twice") {
				t.Errorf("message does not say a name is listed twice: %v", err)
			}
			if got := r.Servers(); len(got) != 0 {
				t.Errorf("servers after the failed AddServer: %v", got)
			}
			if defs := r.Tools(); len(defs) != 0 {
				t.Errorf("tools after the failed AddServer: %+v", defs)
			}
		})
	}
}
