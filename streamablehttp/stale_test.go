package streamablehttp_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/streamablehttp"
)

// countConns counts the TCP connections hs accepts; set it before Start.
func countConns(hs *httptest.Server) func() int {
	var mu sync.Mutex
	n := 0
	hs.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			mu.Lock()
			n++
			mu.Unlock()
		}
	}
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

// TestStaleKeptAliveConnectionIsRetried pins the retry of a message whose
// kept-alive connection the server closed on reading it (it restarted, or
// timed the connection out at that moment): net/http does not retry a
// POST, so the Conn sends it once more, on a new connection. A message
// that fails on a connection dialled for it is not retried.
func TestStaleKeptAliveConnectionIsRetried(t *testing.T) {
	var (
		mu    sync.Mutex
		posts int
		drop  = map[int]bool{} // which POSTs the server hangs up on
	)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		posts++
		n := posts
		mu.Unlock()
		if drop[n] {
			c, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				c.Close()
			}
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	connsOpened := countConns(srv)
	srv.Start()
	defer srv.Close()
	conn, err := streamablehttp.Dial(context.Background(), srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	note := &mcp.Message{Method: "notifications/progress", Params: []byte(`{"progressToken":1,"progress":1}`)}
	ctx := context.Background()

	drop[2] = true // the second POST, on the connection the first left idle
	for i := range 2 {
		if err := conn.Write(ctx, note); err != nil {
			t.Fatalf("write %d: %v", i+1, err)
		}
	}
	mu.Lock()
	gotPosts := posts
	mu.Unlock()
	gotConns := connsOpened()
	if gotPosts != 3 || gotConns != 2 {
		t.Fatalf("the server saw %d POSTs on %d connections, want 3 on 2 (the second sent again on a new one)", gotPosts, gotConns)
	}

	// Every connection is now idle or gone: hang up on the next two, so
	// that the re-sent message fails on the connection dialled for it.
	srv.CloseClientConnections()
	mu.Lock()
	drop[4], drop[5] = true, true
	mu.Unlock()
	if err := conn.Write(ctx, note); err == nil {
		t.Fatal("a message that failed on a fresh connection after its retry was reported sent")
	}
	mu.Lock()
	defer mu.Unlock()
	if posts > 5 {
		t.Fatalf("the server saw %d POSTs, want at most 5: the message was sent again more than once", posts)
	}
}
