package transport_test

// The engine's caching rules (checklist §6B) against a scripted fake
// server: private and public scopes across sessions, MRTR retries, an
// expired TTL on a test clock, the bounds. No real peer lets a test choose
// the scope per result or play these orders; the interop module checks the
// TTL and list_changed against the official Go SDK's server.

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// cacheServer answers like a 2026-07-28 server with tools and resources;
// lists and reads carry the ttl and scope it holds at the time.
type cacheServer struct {
	mu    sync.Mutex
	ttl   int64 // 0: no ttlMs member
	scope string
	// inputFirst makes resources/read ask for input once.
	inputFirst bool
}

func (c *cacheServer) set(ttl int64, scope string) {
	c.mu.Lock()
	c.ttl, c.scope = ttl, scope
	c.mu.Unlock()
}

func (c *cacheServer) fields(v map[string]any) map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	v["resultType"] = "complete"
	if c.ttl != 0 {
		v["ttlMs"] = c.ttl
	}
	if c.scope != "" {
		v["cacheScope"] = c.scope
	}
	return v
}

func (c *cacheServer) handle(f *fakeServer, m *mcp.Message) *mcp.Message {
	if m.IsNotification() {
		return nil
	}
	tool := map[string]any{"name": "t", "inputSchema": map[string]any{"type": "object"}}
	switch m.Method {
	case mcp.MethodDiscover:
		return result(m.ID, c.fields(map[string]any{
			"supportedVersions": []string{"2026-07-28"},
			"capabilities":      map[string]any{"tools": map[string]any{}, "resources": map[string]any{}},
		}))
	case mcp.MethodToolsList:
		var p struct {
			Cursor *string `json:"cursor"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if p.Cursor == nil {
			return result(m.ID, c.fields(map[string]any{"tools": []any{tool}, "nextCursor": "2"}))
		}
		tool["name"] = "u"
		return result(m.ID, c.fields(map[string]any{"tools": []any{tool}}))
	case mcp.MethodResourcesRead:
		var p struct {
			URI            string          `json:"uri"`
			InputResponses json.RawMessage `json:"inputResponses"`
		}
		_ = json.Unmarshal(m.Params, &p)
		c.mu.Lock()
		ask := c.inputFirst && p.InputResponses == nil
		c.mu.Unlock()
		if ask {
			return result(m.ID, map[string]any{"resultType": "input_required",
				"inputRequests": map[string]any{"r": map[string]any{"method": mcp.MethodRootsList}}})
		}
		return result(m.ID, c.fields(map[string]any{"contents": []any{map[string]any{"uri": p.URI, "text": "hello"}}}))
	}
	return rpcError(m.ID, mcp.CodeMethodNotFound, "no", "")
}

func startCacheServer(t *testing.T, c *cacheServer, opts *transport.Options) (*fakeServer, *transport.Session) {
	t.Helper()
	f, conn := startFake(t, c.handle)
	return f, connect(t, conn, opts)
}

func listTools(t *testing.T, s *transport.Session) {
	t.Helper()
	tools, err := s.ListTools(context.Background())
	if err != nil || len(tools) != 2 {
		t.Fatalf("ListTools = %v, %v", tools, err)
	}
}

func wantSent(t *testing.T, f *fakeServer, method string, n int) {
	t.Helper()
	if got := len(f.messages(method)); got != n {
		t.Fatalf("%s sent %d times, want %d", method, got, n)
	}
}

func TestCacheAnswersWithinTTLUntilListChanged(t *testing.T) {
	c := &cacheServer{ttl: 60000, scope: "public"}
	f, s := startCacheServer(t, c, nil)
	listTools(t, s)
	wantSent(t, f, mcp.MethodToolsList, 2) // two pages
	listTools(t, s)
	wantSent(t, f, mcp.MethodToolsList, 2)

	// Every path that lists hits the same entries.
	for tool, err := range s.Tools(context.Background()) {
		if err != nil {
			t.Fatal(tool, err)
		}
	}
	if _, err := s.ListToolsPage(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	var raw json.RawMessage
	if err := s.Call(context.Background(), mcp.MethodToolsList, nil, &raw); err != nil {
		t.Fatal(err)
	}
	wantSent(t, f, mcp.MethodToolsList, 2)

	got := make(chan struct{}, 1)
	unsub := s.Subscribe(func(n mcp.Notification) {
		if n.Method == mcp.NotificationToolsListChanged {
			got <- struct{}{}
		}
	})
	defer unsub()
	note, _ := mcp.NewNotification(mcp.NotificationToolsListChanged, nil)
	if err := f.conn.Write(context.Background(), note); err != nil {
		t.Fatal(err)
	}
	<-got // the cache was invalidated before subscribers were told
	listTools(t, s)
	wantSent(t, f, mcp.MethodToolsList, 4)
}

func TestCacheKeepsNothingWithoutTTL(t *testing.T) {
	c := &cacheServer{}
	f, s := startCacheServer(t, c, nil)
	listTools(t, s)
	listTools(t, s)
	wantSent(t, f, mcp.MethodToolsList, 4)
	c.set(0, "public") // ttlMs absent again, and 0 means stale
	listTools(t, s)
	wantSent(t, f, mcp.MethodToolsList, 6)
}

func TestDisableCacheSendsEveryRequest(t *testing.T) {
	c := &cacheServer{ttl: 60000, scope: "public"}
	f, s := startCacheServer(t, c, &transport.Options{DisableCache: true})
	listTools(t, s)
	listTools(t, s)
	wantSent(t, f, mcp.MethodToolsList, 4)
	if s.CachesResults() {
		t.Fatal("CachesResults with DisableCache")
	}
}

func TestCacheTTLExpires(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1000, 0)
	cache := transport.NewCache(nil)
	transport.SetCacheClock(cache, func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	c := &cacheServer{ttl: 1500, scope: "private"}
	f, s := startCacheServer(t, c, &transport.Options{Cache: cache})
	listTools(t, s)
	mu.Lock()
	now = now.Add(1499 * time.Millisecond)
	mu.Unlock()
	listTools(t, s)
	wantSent(t, f, mcp.MethodToolsList, 2)
	mu.Lock()
	now = now.Add(time.Millisecond) // now == received + ttlMs: stale
	mu.Unlock()
	listTools(t, s)
	wantSent(t, f, mcp.MethodToolsList, 4)
}

func TestSharedCacheScopes(t *testing.T) {
	for _, tc := range []struct {
		name            string
		scope           string
		idA, idB        string
		serverB         string
		wantSecondSends int // tools/list pages session B sends
	}{
		{"public shared by server", "public", "", "", "srv", 0},
		{"public not shared with another server", "public", "", "", "other", 2},
		{"private not shared without identities", "private", "", "", "srv", 2},
		{"private not shared between identities", "private", "alice", "bob", "srv", 2},
		{"private shared within an identity", "private", "alice", "alice", "srv", 0},
		{"no scope is private", "", "alice", "bob", "srv", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := transport.NewCache(nil)
			c := &cacheServer{ttl: 60000, scope: tc.scope}
			fa, a := startCacheServer(t, c, &transport.Options{Cache: cache, CacheServer: "srv", CacheIdentity: tc.idA})
			fb, b := startCacheServer(t, c, &transport.Options{Cache: cache, CacheServer: tc.serverB, CacheIdentity: tc.idB})
			listTools(t, a)
			wantSent(t, fa, mcp.MethodToolsList, 2)
			listTools(t, b)
			wantSent(t, fb, mcp.MethodToolsList, tc.wantSecondSends)
		})
	}
}

func TestCacheSkipsMRTR(t *testing.T) {
	c := &cacheServer{ttl: 60000, scope: "public", inputFirst: true}
	f, s := startCacheServer(t, c, &transport.Options{Handlers: transport.Handlers{
		Roots: func(context.Context) ([]mcp.Root, error) { return nil, nil },
	}})
	read := func(params any) {
		t.Helper()
		var r mcp.ReadResourceResult
		if err := s.Call(context.Background(), mcp.MethodResourcesRead, params, &r); err != nil || r.Text() != "hello" {
			t.Fatalf("read = %+v, %v", r, err)
		}
	}
	// A result that needed an input round is not kept.
	read(map[string]any{"uri": "file:///a"})
	read(map[string]any{"uri": "file:///a"})
	wantSent(t, f, mcp.MethodResourcesRead, 4)

	// A request that itself carries inputResponses is a retry: never
	// answered from the cache, nor kept.
	c.mu.Lock()
	c.inputFirst = false
	c.mu.Unlock()
	retry := map[string]any{"uri": "file:///b", "inputResponses": map[string]any{"r": map[string]any{"roots": []any{}}}}
	read(retry)
	read(retry)
	wantSent(t, f, mcp.MethodResourcesRead, 6)

	// A plain read is kept, whatever _meta the caller adds.
	read(map[string]any{"uri": "file:///b"})
	read(map[string]any{"uri": "file:///b", "_meta": map[string]any{"x": 1}})
	wantSent(t, f, mcp.MethodResourcesRead, 7)

	// resources/updated for that URI drops it.
	got := make(chan struct{}, 1)
	defer s.Subscribe(func(n mcp.Notification) {
		if n.Method == mcp.NotificationResourceUpdated {
			got <- struct{}{}
		}
	})()
	note, _ := mcp.NewNotification(mcp.NotificationResourceUpdated, map[string]any{"uri": "file:///b"})
	if err := f.conn.Write(context.Background(), note); err != nil {
		t.Fatal(err)
	}
	<-got
	read(map[string]any{"uri": "file:///b"})
	wantSent(t, f, mcp.MethodResourcesRead, 8)
}

func TestCacheBounds(t *testing.T) {
	cache := transport.NewCache(&transport.CacheOptions{MaxEntries: 2})
	c := &cacheServer{ttl: 60000, scope: "public"}
	f, s := startCacheServer(t, c, &transport.Options{Cache: cache})
	for _, u := range []string{"a", "b", "c", "a"} {
		if err := s.Call(context.Background(), mcp.MethodResourcesRead, map[string]string{"uri": "file:///" + u}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// a was evicted by c, so the second a went out too.
	wantSent(t, f, mcp.MethodResourcesRead, 4)
	if st := cache.Stats(); st.Entries != 2 || st.Hits != 0 {
		t.Fatalf("stats %+v", st)
	}
	small := transport.NewCache(&transport.CacheOptions{MaxBytes: 10})
	f2, s2 := startCacheServer(t, c, &transport.Options{Cache: small})
	listTools(t, s2)
	listTools(t, s2)
	wantSent(t, f2, mcp.MethodToolsList, 4) // too large to keep
	if st := small.Stats(); st.Entries != 0 || st.Bytes != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestPingIsNeverCached(t *testing.T) {
	c := &cacheServer{ttl: 60000, scope: "public"}
	f, s := startCacheServer(t, c, nil)
	for range 2 {
		if err := s.Ping(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	wantSent(t, f, mcp.MethodDiscover, 3) // the handshake and two pings
}
