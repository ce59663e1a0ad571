package transport_test

// Guards of the result cache (cache.go) that a mutation audit found
// untested: the epoch check that keeps a result in flight across a
// list_changed out of the cache, the size check that keeps one oversized
// result from evicting everything, the MaxCacheTTL cap, and the release of
// a closed session's private entries from a shared Cache.

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// listChangedRaceConn delivers notifications/tools/list_changed just
// before the answer to the first tools/list it sees go out: the server
// changed its tools while the list was in flight, and the answer the client
// then reads is already stale.
type listChangedRaceConn struct {
	transport.Conn

	mu       sync.Mutex
	listID   mcp.ID       // the first tools/list request written
	held     *mcp.Message // its answer, delivered after the notification
	injected bool
}

func (c *listChangedRaceConn) Write(ctx context.Context, m *mcp.Message) error {
	if m.Method == mcp.MethodToolsList {
		c.mu.Lock()
		if !c.listID.IsValid() {
			c.listID = m.ID
		}
		c.mu.Unlock()
	}
	return c.Conn.Write(ctx, m)
}

func (c *listChangedRaceConn) Read(ctx context.Context) (*mcp.Message, error) {
	c.mu.Lock()
	if held := c.held; held != nil {
		c.held = nil
		c.mu.Unlock()
		return held, nil
	}
	c.mu.Unlock()
	m, err := c.Conn.Read(ctx)
	if err != nil || !m.IsResponse() {
		return m, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.injected || !c.listID.IsValid() || m.ID != c.listID {
		return m, nil
	}
	c.injected = true
	c.held = m
	return mcp.NewNotification(mcp.NotificationToolsListChanged, nil)
}

// TestListInFlightAcrossListChangedIsNotCached pins the epoch check of
// Cache.put. A tools/list answered after notifications/tools/list_changed
// arrived was sent before the change: keeping it (for the whole ttlMs the
// server gave) served the stale list long after the server said it
// changed. The next ListTools must ask the server again.
func TestListInFlightAcrossListChangedIsNotCached(t *testing.T) {
	c := &cacheServer{ttl: 60000, scope: "public"}
	f, conn := startFake(t, c.handle)
	rc := &listChangedRaceConn{Conn: conn}
	cache := transport.NewCache(nil)
	s := connect(t, rc, &transport.Options{Cache: cache})

	listTools(t, s) // page 1 is answered right after the notification
	rc.mu.Lock()
	injected := rc.injected
	rc.mu.Unlock()
	if !injected {
		t.Fatal("the test conn never injected list_changed before the tools/list answer")
	}
	wantSent(t, f, mcp.MethodToolsList, 2)

	listTools(t, s)
	// Page 1 was stale on arrival and must be asked for again; page 2,
	// requested after the notification, may come from the cache.
	if got := len(f.messages(mcp.MethodToolsList)); got != 3 {
		t.Fatalf("tools/list sent %d times, want 3: the first page, answered after "+
			"tools/list_changed, was served from the cache (stats %+v)", got, cache.Stats())
	}
}

// bigReadServer answers resources/read of file:///big with a text larger
// than the cache's MaxBytes, other reads like cacheServer.
func bigReadServer(c *cacheServer, big string) func(f *fakeServer, m *mcp.Message) *mcp.Message {
	return func(f *fakeServer, m *mcp.Message) *mcp.Message {
		if m.Method == mcp.MethodResourcesRead {
			var p struct {
				URI string `json:"uri"`
			}
			_ = json.Unmarshal(m.Params, &p)
			if p.URI == "file:///big" {
				return result(m.ID, c.fields(map[string]any{"contents": []any{
					map[string]any{"uri": p.URI, "mimeType": "text/plain", "text": big}}}))
			}
		}
		return c.handle(f, m)
	}
}

// TestOversizedResultDoesNotFlushCache pins the size check of Cache.put.
// A result larger than MaxBytes is not kept; put without that check pushed
// it anyway, and the eviction loop, to get back under MaxBytes, dropped
// every other entry before dropping the big one itself: one large
// resource emptied the cache.
func TestOversizedResultDoesNotFlushCache(t *testing.T) {
	const maxBytes = 4096
	big := strings.Repeat("Zeile «groß» mit \"Anführungszeichen\"\n", 2*maxBytes/32)
	c := &cacheServer{ttl: 60000, scope: "public"}
	cache := transport.NewCache(&transport.CacheOptions{MaxBytes: maxBytes})
	f, conn := startFake(t, bigReadServer(c, big))
	s := connect(t, conn, &transport.Options{Cache: cache})
	ctx, cancel := context.WithTimeout(context.Background(), fakeWait)
	defer cancel()
	read := func(uri, want string) {
		t.Helper()
		var r mcp.ReadResourceResult
		if err := s.Call(ctx, mcp.MethodResourcesRead, map[string]string{"uri": uri}, &r); err != nil || r.Text() != want {
			t.Fatalf("read %s = %.40q, %v", uri, r.Text(), err)
		}
	}
	read("file:///small", "hello")
	if st := cache.Stats(); st.Entries != 1 {
		t.Fatalf("the small result was not kept: %+v", st)
	}
	read("file:///big", big)
	if st := cache.Stats(); st.Entries != 1 {
		t.Fatalf("after the oversized result the cache holds %d entries, want the small one only: %+v", st.Entries, st)
	}
	read("file:///small", "hello")
	wantSent(t, f, mcp.MethodResourcesRead, 2)
	if st := cache.Stats(); st.Hits != 1 {
		t.Fatalf("the small result was not a hit after the oversized one: %+v", st)
	}
}

// TestServerTTLIsCappedAtMaxCacheTTL pins the MaxCacheTTL cap. A server
// that says ttlMs is thirty days must not pin a result for thirty days:
// the client keeps it for MaxCacheTTL at most, and asks again after that.
func TestServerTTLIsCappedAtMaxCacheTTL(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 7, 28, 9, 0, 0, 0, time.UTC)
	cache := transport.NewCache(nil)
	transport.SetCacheClock(cache, func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	c := &cacheServer{ttl: int64(30 * 24 * time.Hour / time.Millisecond), scope: "public"}
	f, s := startCacheServer(t, c, &transport.Options{Cache: cache})

	listTools(t, s)
	advance(transport.MaxCacheTTL - time.Millisecond)
	listTools(t, s)
	wantSent(t, f, mcp.MethodToolsList, 2) // still fresh within the cap
	advance(time.Millisecond)
	listTools(t, s)
	if got := len(f.messages(mcp.MethodToolsList)); got != 4 {
		t.Fatalf("tools/list sent %d times, want 4: a result with ttlMs of 30 days "+
			"was served %v after it arrived, past MaxCacheTTL", got, transport.MaxCacheTTL)
	}
}

// TestClosedSessionsPrivateEntriesLeaveSharedCache pins the release of a
// session's own entries. Without Options.CacheIdentity a private result is
// keyed by the session's own token, so nobody else can ever use it; when
// the session closes those entries must leave a shared Cache, or every
// short-lived session leaks its private results into it until LRU pressure
// or the TTL removes them.
func TestClosedSessionsPrivateEntriesLeaveSharedCache(t *testing.T) {
	cache := transport.NewCache(nil)
	c := &cacheServer{ttl: 60000, scope: "private"}
	f, conn := startFake(t, c.handle)
	ctx, cancel := context.WithTimeout(context.Background(), fakeWait)
	defer cancel()
	s, err := transport.Connect(ctx, conn, &transport.Options{Cache: cache, CacheServer: "files"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var r mcp.ReadResourceResult
	if err := s.Call(ctx, mcp.MethodResourcesRead, map[string]string{"uri": "file:///home/ana/notes.md"}, &r); err != nil {
		t.Fatal(err)
	}
	if st := cache.Stats(); st.Entries != 1 {
		t.Fatalf("the private read was not kept: %+v", st)
	}
	wantSent(t, f, mcp.MethodResourcesRead, 1)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if st := cache.Stats(); st.Entries != 0 || st.Bytes != 0 {
		t.Fatalf("after Close the shared cache still holds the session's private entries: %+v", st)
	}
}
