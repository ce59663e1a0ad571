package interop

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/registry"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
)

// wireLog wraps a Conn and records every message that crossed it, so a
// test can tell what reached the server from what the cache answered.
type wireLog struct {
	transport.Conn
	mu   sync.Mutex
	sent []*mcp.Message
	read []*mcp.Message
	// acked is closed when the server acknowledged a 2026-07-28 listen
	// stream: from then on, it pushes list changes.
	acked   chan struct{}
	ackOnce sync.Once
}

func (w *wireLog) Write(ctx context.Context, m *mcp.Message) error {
	w.mu.Lock()
	cp := *m // Write must not retain m
	w.sent = append(w.sent, &cp)
	w.mu.Unlock()
	return w.Conn.Write(ctx, m)
}

func (w *wireLog) Read(ctx context.Context) (*mcp.Message, error) {
	m, err := w.Conn.Read(ctx)
	if err == nil {
		w.mu.Lock()
		w.read = append(w.read, m)
		w.mu.Unlock()
		if m.Method == mcp.NotificationSubscriptionsAck {
			w.ackOnce.Do(func() { close(w.acked) })
		}
	}
	return m, err
}

// Abort keeps stdio's bounded Close working through the wrapper.
func (w *wireLog) Abort() {
	if a, ok := w.Conn.(interface{ Abort() }); ok {
		a.Abort()
	}
}

// requests returns the requests of method sent so far, and whether any
// answer to them carried a positive ttlMs.
func (w *wireLog) requests(method string) (n int, ttl bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ids := map[string]bool{}
	for _, m := range w.sent {
		if m.Method == method && m.IsRequest() {
			n++
			ids[m.ID.String()] = true
		}
	}
	for _, m := range w.read {
		if m.IsResponse() && ids[m.ID.String()] && strings.Contains(string(m.Result), `"ttlMs":`) &&
			!strings.Contains(string(m.Result), `"ttlMs":0`) {
			ttl = true
		}
	}
	return n, ttl
}

func connectLogged(t *testing.T, ctx context.Context, args []string, opts *transport.Options) (*transport.Session, *wireLog) {
	t.Helper()
	conn, err := stdio.Start(ctx, &stdio.Options{Command: filepath.Join(peerBin, "gosdk"), Args: args})
	if err != nil {
		t.Fatal(err)
	}
	w := &wireLog{Conn: conn, acked: make(chan struct{})}
	s, err := transport.Connect(ctx, w, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s, w
}

// TestCacheTTLWithGoSDK: against the official Go SDK's server sending
// ttlMs, a second tools/list within the TTL sends nothing, and a
// list_changed (here from the server's own AddTool, on the 2026-07-28
// listen stream or the legacy stdout) makes the next one go out. On a
// legacy revision the same holds when the server sends ttlMs; when it does
// not, every listing goes out.
func TestCacheTTLWithGoSDK(t *testing.T) {
	for _, pin := range []string{"", mcp.Version20251125} {
		name := pin
		if name == "" {
			name = "negotiated"
		}
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			s, w := connectLogged(t, ctx, []string{"-ttl", "60000", "-extra-tools"}, &transport.Options{ProtocolVersion: pin})
			changed := make(chan struct{}, 1)
			defer s.Subscribe(func(n mcp.Notification) {
				if n.Method == mcp.NotificationToolsListChanged {
					select {
					case changed <- struct{}{}:
					default:
					}
				}
			})()

			if _, err := s.ListTools(ctx); err != nil {
				t.Fatal(err)
			}
			n, ttl := w.requests(mcp.MethodToolsList)
			if n != 1 {
				t.Fatalf("first listing sent %d tools/list", n)
			}
			if pin == "" && !ttl {
				t.Fatal("the 2026-07-28 server sent no ttlMs")
			}
			want := 1
			if !ttl {
				want = 2 // nothing cached without ttlMs
			}
			if _, err := s.ListTools(ctx); err != nil {
				t.Fatal(err)
			}
			if n, _ := w.requests(mcp.MethodToolsList); n != want {
				t.Fatalf("second listing within the TTL: %d tools/list sent, want %d (ttlMs seen: %v)", n, want, ttl)
			}

			t.Logf("ttlMs on the wire: %v", ttl)
			if s.ServerInfo().ProtocolVersion == mcp.Version20260728 {
				select {
				case <-w.acked:
				case <-ctx.Done():
					t.Fatal("the listen stream was never acknowledged")
				}
			}
			if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "grow"}); err != nil {
				t.Fatal(err)
			}
			select {
			case <-changed:
			case <-ctx.Done():
				t.Fatal("no notifications/tools/list_changed")
			}
			tools, err := s.ListTools(ctx)
			if err != nil {
				t.Fatal(err)
			}
			requireTools(t, tools, "grown-1", "echo")
			if n, _ := w.requests(mcp.MethodToolsList); n != want+1 {
				t.Fatalf("after list_changed: %d tools/list sent, want %d", n, want+1)
			}
		})
	}
}

// TestRegistryRefreshUsesSessionCache: the registry asks a Session whose
// server gives a ttlMs on every Refresh, and the Session's cache answers
// while the TTL holds, so nothing reaches the official Go SDK's server; a
// list_changed makes the registry list once more, on the wire.
func TestRegistryRefreshUsesSessionCache(t *testing.T) {
	ctx := testContext(t)
	s, w := connectLogged(t, ctx, []string{"-ttl", "60000", "-extra-tools"}, nil)
	refreshed := make(chan error, 1)
	r := registry.New(registry.Options{OnRefresh: func(_ string, err error) { refreshed <- err }})
	defer r.Close()
	if err := r.AddServer(ctx, "gosdk", s, nil); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := r.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		<-refreshed
	}
	if n, ttl := w.requests(mcp.MethodToolsList); n != 1 || !ttl {
		t.Fatalf("AddServer and three Refreshes sent %d tools/list (ttlMs seen: %v), want 1", n, ttl)
	}
	select {
	case <-w.acked:
	case <-ctx.Done():
		t.Fatal("the listen stream was never acknowledged")
	}
	if res := r.Dispatch(ctx, registry.Call{Name: "grow", Arguments: json.RawMessage(`{}`)}); res.IsError {
		t.Fatal(res.Text())
	}
	if err := <-refreshed; err != nil { // the refresh list_changed caused
		t.Fatal(err)
	}
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	<-refreshed
	if n, _ := w.requests(mcp.MethodToolsList); n != 2 {
		t.Fatalf("after list_changed: %d tools/list sent, want 2", n)
	}
	if !slices.ContainsFunc(r.Tools(), func(d registry.Definition) bool { return d.Name == "grown-1" }) {
		t.Fatalf("the new tool is not registered: %v", r.Tools())
	}
}
