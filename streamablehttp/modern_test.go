package streamablehttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/streamablehttp"
	"github.com/tako-mcp/tako/transport"
)

// modernServer is a scripted 2026-07-28 server: stateless, POST only.
type modernServer struct {
	onCall func(w http.ResponseWriter, r *http.Request, msg *mcp.Message, attempt int)

	mu       sync.Mutex
	methods  []string      // Mcp-Method of every POST, in order
	headers  []http.Header // headers of every tools/call
	attempts int
}

func (s *modernServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	msg, err := mcp.DecodeMessage(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.methods = append(s.methods, r.Header.Get("Mcp-Method"))
	var attempt int
	if msg.Method == mcp.MethodToolsCall {
		s.headers = append(s.headers, r.Header.Clone())
		s.attempts++
		attempt = s.attempts
	}
	s.mu.Unlock()
	if r.Header.Get("Mcp-Protocol-Version") != mcp.Version20260728 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32022,"message":"version","data":{"supported":["2026-07-28"]}}}`)
		return
	}
	if !msg.IsRequest() {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	switch msg.Method {
	case mcp.MethodDiscover:
		writeJSON(w, "", &mcp.Message{ID: msg.ID, Result: json.RawMessage(`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"public"}`)})
	case mcp.MethodToolsList:
		writeJSON(w, "", &mcp.Message{ID: msg.ID, Result: json.RawMessage(`{"resultType":"complete","tools":[
			{"name":"echo","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"}}}},
			{"name":"broken","inputSchema":{"type":"object","properties":{"v":{"type":"number","x-mcp-header":"V"}}}}]}`)})
	case mcp.MethodToolsCall:
		if s.onCall != nil {
			s.onCall(w, r, msg, attempt)
			return
		}
		writeJSON(w, "", echoResult(msg))
	default:
		writeJSON(w, "", &mcp.Message{ID: msg.ID, Result: json.RawMessage(`{"resultType":"complete"}`)})
	}
}

func connectModern(t *testing.T, ctx context.Context, srv http.Handler) *transport.Session {
	t.Helper()
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	conn, err := streamablehttp.Dial(ctx, hs.URL+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if v := s.ServerInfo().ProtocolVersion; v != mcp.Version20260728 {
		t.Fatalf("negotiated %q, want 2026-07-28", v)
	}
	return s
}

// TestModernHeaders: Mcp-Method, Mcp-Name and Mcp-Param-* on a tools/call,
// and the tool with an invalid x-mcp-header dropped from tools/list.
func TestModernHeaders(t *testing.T) {
	srv := &modernServer{}
	ctx := testContext(t)
	s := connectModern(t, ctx, srv)
	tools, err := s.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].Name != "echo" {
		t.Fatalf("tools %v, want only echo (broken has an x-mcp-header on a number)", tools)
	}
	_, err = s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"region":" eu ","n":7}`)})
	if err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	h := srv.headers[0]
	srv.mu.Unlock()
	for k, want := range map[string]string{
		"Mcp-Method":           "tools/call",
		"Mcp-Name":             "echo",
		"Mcp-Param-Region":     "=?base64?IGV1IA==?=",
		"Mcp-Param-N":          "7",
		"Mcp-Protocol-Version": "2026-07-28",
	} {
		if got := h.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	if h.Get("Mcp-Session-Id") != "" {
		t.Error("a 2026-07-28 request carried Mcp-Session-Id")
	}
}

// TestModernLostRequest: a response stream that breaks before the
// response loses the request; the engine re-sends it with a new id.
func TestModernLostRequest(t *testing.T) {
	var ids sync.Map
	srv := &modernServer{onCall: func(w http.ResponseWriter, r *http.Request, msg *mcp.Message, attempt int) {
		ids.Store(msg.ID.String(), true)
		if attempt == 1 {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			fmt.Fprint(w, ": working\n\n")
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}
		writeJSON(w, "", echoResult(msg))
	}}
	ctx := testContext(t)
	s := connectModern(t, ctx, srv)
	got, err := callEcho(ctx, s, "again")
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	if !strings.Contains(got, "again") {
		t.Errorf("result %q", got)
	}
	n := 0
	ids.Range(func(any, any) bool { n++; return true })
	if n != 2 {
		t.Errorf("the server saw %d distinct ids for the call, want 2", n)
	}
}

// TestModernCancelClosesStream: cancelling a call on the 2026 wire closes
// its response stream (the server sees its request context end) and posts
// no notifications/cancelled.
func TestModernCancelClosesStream(t *testing.T) {
	started := make(chan struct{})
	closed := make(chan struct{})
	var once sync.Once
	srv := &modernServer{onCall: func(w http.ResponseWriter, r *http.Request, msg *mcp.Message, attempt int) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		close(started)
		<-r.Context().Done()
		once.Do(func() { close(closed) })
	}}
	ctx := testContext(t)
	s := connectModern(t, ctx, srv)
	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { _, err := callEcho(cctx, s, "x"); errc <- err }()
	<-started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	select {
	case <-closed:
	case <-ctx.Done():
		t.Fatal("the server never saw the response stream close")
	}
	// A ping after the cancellation (on this wire a server/discover),
	// answered by the server: whatever the cancellation posted went out
	// before it, so it is in methods. A ping that failed, or that never
	// reached the server, would prove nothing about what was posted.
	srv.mu.Lock()
	before := len(srv.methods)
	srv.mu.Unlock()
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("ping after the cancellation: %v", err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.methods) == before {
		t.Fatalf("the server saw %q and nothing from the ping", srv.methods)
	}
	if slices.Contains(srv.methods, mcp.NotificationCancelled) {
		t.Errorf("notifications/cancelled was posted on the 2026 wire: the server saw %q", srv.methods)
	}
}

// TestModernVersionRetry: a 400 with -32022 for server/discover is read
// as a JSON-RPC answer, not an HTTP failure.
func TestModernVersionRetry(t *testing.T) {
	var first atomic.Bool
	srv := &modernServer{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if first.CompareAndSwap(false, true) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32022,"message":"version","data":{"supported":["2026-07-28"]}}}`)
			return
		}
		srv.ServeHTTP(w, r)
	})
	ctx := testContext(t)
	connectModern(t, ctx, h)
}
