package streamablehttp_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
)

// TestIdleGETStreamsHoldNoReadBuffers pins the fix for the standalone GET
// stream of every idle session holding its 16 KiB read buffer while it
// waited for the server's next event: 20 idle sessions held 320 KiB of
// them. A long-lived stream now waits with a small buffer and takes the
// big one when an event comes, which still arrives whole.
func TestIdleGETStreamsHoldNoReadBuffers(t *testing.T) {
	const n = 20
	streams := make(chan chan string, n)
	srv := newLegacyServer()
	srv.onGet = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		f := w.(http.Flusher)
		f.Flush()
		events := make(chan string, 1)
		streams <- events
		for {
			select {
			case ev := <-events:
				fmt.Fprint(w, ev)
				f.Flush()
			case <-r.Context().Done():
				return
			}
		}
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	ctx := testContext(t)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	got := make(chan mcp.Notification, n)
	for i := range n {
		s := connect(t, ctx, hs.URL, nil)
		t.Cleanup(s.Subscribe(func(m mcp.Notification) { got <- m }))
		// A call, so that each session has its two connections (the GET
		// stream's and the calls') as it will for its life.
		if _, err := callEcho(ctx, s, fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	var open []chan string
	for range n {
		select {
		case ch := <-streams:
			open = append(open, ch)
		case <-ctx.Done():
			t.Fatal("the GET streams did not all open")
		}
	}
	runtime.GC()
	runtime.GC() // and the pools' victims
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	// The server is in this process too, so its side of each session
	// (two connections, a handler) counts: about 64 KiB in all, 80 KiB
	// with the buffer.
	t.Logf("heap per idle session, client and server: %d bytes", per)
	if per > 72<<10 {
		t.Errorf("an idle session holds %d bytes of heap, client and server, want at most 72 KiB (no 16 KiB buffer on its GET stream)", per)
	}
	// An event longer than the small buffer, on every stream.
	data := strings.Repeat("y", 5000)
	ev := `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + data + `"}}` + "\n\n"
	for _, ch := range open {
		ch <- ev
	}
	for range n {
		select {
		case m := <-got:
			if !strings.Contains(string(m.Params), data) {
				t.Fatalf("the notification came as %.80s...", m.Params)
			}
		case <-ctx.Done():
			t.Fatal("not every session got its notification")
		}
	}
}

// TestGETStreamOpensBesideInitialized pins the handshake's GET stream
// opening beside notifications/initialized rather than after its answer:
// the handshake waited for the two in turn, a third of its time on
// loopback. This server answers notifications/initialized only once the
// GET stream has arrived (or 2 s have passed, which fails the test).
func TestGETStreamOpensBesideInitialized(t *testing.T) {
	srv := newLegacyServer()
	got := make(chan struct{})
	var once sync.Once
	srv.onGet = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		once.Do(func() { close(got) })
		<-r.Context().Done()
	}
	var waited atomic.Bool
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, msg := peek(r)
			r.Body = body
			if msg != nil && msg.Method == mcp.NotificationInitialized {
				select {
				case <-got:
				case <-time.After(2 * time.Second): // a bound, not a synchronisation
					waited.Store(true)
				}
			}
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	connect(t, testContext(t), hs.URL, nil)
	if waited.Load() {
		t.Fatal("the GET stream came only after notifications/initialized was answered")
	}
}

// TestIdleSessionClosesItsCallConnection pins the fix for an idle session
// on the Conn's own transport keeping its calls' connection for
// http.DefaultTransport's 90 s: two net/http goroutines and their buffers
// per session (5 goroutines and 37 KB per idle session in bench/'s
// sessions suite, against go-sdk's 4 and 25 KB). With the Conn's
// defaults, the server sees that connection closed a few seconds after
// the last call, while the GET stream's stays open.
func TestIdleSessionClosesItsCallConnection(t *testing.T) {
	t.Parallel()
	srv := newLegacyServer()
	srv.onGet = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
	var (
		mu     sync.Mutex
		open   = map[net.Conn]bool{}
		closed = make(chan struct{}, 16)
	)
	hs := httptest.NewUnstartedServer(srv)
	hs.Config.ConnState = func(c net.Conn, st http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch st {
		case http.StateNew:
			open[c] = true
		case http.StateClosed, http.StateHijacked:
			delete(open, c)
			closed <- struct{}{}
		}
	}
	hs.Start()
	t.Cleanup(hs.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := connect(t, ctx, hs.URL, nil)
	if _, err := callEcho(ctx, s, "hi"); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(open)
	}
	if n := count(); n != 2 {
		t.Fatalf("the server has %d connections from the session, want 2 (the calls' and the GET stream's)", n)
	}
	start := time.Now()
	for count() > 1 {
		select {
		case <-closed:
		case <-ctx.Done():
			t.Fatalf("the calls' connection was still open %v after the last call", time.Since(start).Round(time.Second))
		}
	}
	t.Logf("the calls' connection closed %v after the last call", time.Since(start).Round(100*time.Millisecond))
	// The GET stream is not idle: it stays, and the session still calls.
	if _, err := callEcho(ctx, s, "again"); err != nil {
		t.Fatal(err)
	}
}
