package streamablehttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/streamablehttp"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/transport/httpauth"
)

// legacyServer is a scripted Streamable HTTP server of the 2025-11-25 kind:
// initialize starts a session, every later request must carry it, tools/call
// is answered by onCall (or with an echo), GET by onGet (or 405).
type legacyServer struct {
	mu       sync.Mutex
	sessions map[string]bool
	seq      int
	onCall   func(w http.ResponseWriter, r *http.Request, msg *mcp.Message)
	onGet    func(w http.ResponseWriter, r *http.Request)

	initializes atomic.Int32
	deletes     atomic.Int32
	calls       chan *mcp.Message // every tools/call, if set
	responses   chan *mcp.Message // every response the client posts, if set
}

func newLegacyServer() *legacyServer {
	return &legacyServer{sessions: map[string]bool{}}
}

// expire forgets every session, as a server does when it restarts or
// times sessions out.
func (s *legacyServer) expire() {
	s.mu.Lock()
	s.sessions = map[string]bool{}
	s.mu.Unlock()
}

func writeJSON(w http.ResponseWriter, sid string, msg *mcp.Message) {
	w.Header().Set("Content-Type", "application/json")
	if sid != "" {
		w.Header().Set("Mcp-Session-Id", sid)
	}
	w.Write(msg.AppendJSON(nil))
}

func echoResult(msg *mcp.Message) *mcp.Message {
	var p mcp.CallToolParams
	json.Unmarshal(msg.Params, &p)
	res, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": "echo " + string(p.Arguments)}}})
	return &mcp.Message{ID: msg.ID, Result: res}
}

func (s *legacyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	s.mu.Lock()
	known := s.sessions[sid]
	s.mu.Unlock()
	switch r.Method {
	case http.MethodGet:
		if !known {
			http.Error(w, "unknown session", http.StatusNotFound)
			return
		}
		if s.onGet == nil {
			http.Error(w, "no GET stream", http.StatusMethodNotAllowed)
			return
		}
		s.onGet(w, r)
		return
	case http.MethodDelete:
		s.deletes.Add(1)
		s.mu.Lock()
		delete(s.sessions, sid)
		s.mu.Unlock()
		return
	case http.MethodPost:
	default:
		http.Error(w, "method", http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	msg, err := mcp.DecodeMessage(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if msg.Method == mcp.MethodInitialize {
		s.initializes.Add(1)
		s.mu.Lock()
		s.seq++
		sid = fmt.Sprintf("session-%d", s.seq)
		s.sessions[sid] = true
		s.mu.Unlock()
		res := `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"legacy","version":"1"}}`
		writeJSON(w, sid, &mcp.Message{ID: msg.ID, Result: json.RawMessage(res)})
		return
	}
	if sid == "" {
		http.Error(w, "session id required", http.StatusBadRequest)
		return
	}
	if !known {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	if !msg.IsRequest() {
		if msg.IsResponse() && s.responses != nil {
			s.responses <- msg
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	switch msg.Method {
	case mcp.MethodToolsCall:
		if s.calls != nil {
			s.calls <- msg
		}
		if s.onCall != nil {
			s.onCall(w, r, msg)
			return
		}
		writeJSON(w, "", echoResult(msg))
	case mcp.MethodToolsList:
		writeJSON(w, "", &mcp.Message{ID: msg.ID, Result: json.RawMessage(`{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`)})
	default:
		writeJSON(w, "", &mcp.Message{ID: msg.ID, Result: json.RawMessage(`{}`)})
	}
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func connect(t *testing.T, ctx context.Context, url string, opts *streamablehttp.Options) *transport.Session {
	t.Helper()
	conn, err := streamablehttp.Dial(ctx, url, opts)
	if err != nil {
		t.Fatal(err)
	}
	s, err := transport.Connect(ctx, conn, &transport.Options{ProtocolVersion: mcp.Version20251125})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func callEcho(ctx context.Context, s *transport.Session, arg string) (string, error) {
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"m":"` + arg + `"}`)})
	if err != nil {
		return "", err
	}
	return res.Text(), nil
}

// TestResumeCutStream: the SSE answer to a call is cut after its first
// event; the Conn resumes with GET and Last-Event-ID, the result arrives,
// and arrives once.
func TestResumeCutStream(t *testing.T) {
	srv := newLegacyServer()
	var lastEventID atomic.Value
	srv.onCall = func(w http.ResponseWriter, r *http.Request, msg *mcp.Message) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, "id: ev-1\nretry: 10\ndata: \n\n")
		// Half an event, then the connection dies.
		fmt.Fprint(w, "id: ev-2\ndata: {\"jsonrpc\":\"2.0\",")
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
	var pending sync.Map // id -> *mcp.Message, answered on resumption
	srv.onGet = func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("Last-Event-ID")
		if id == "" {
			http.Error(w, "no standalone stream", http.StatusMethodNotAllowed)
			return
		}
		lastEventID.Store(id)
		w.Header().Set("Content-Type", "text/event-stream")
		pending.Range(func(k, v any) bool {
			resp := echoResult(v.(*mcp.Message))
			fmt.Fprintf(w, "id: ev-3\ndata: %s\n\n", resp.AppendJSON(nil))
			pending.Delete(k)
			return true
		})
	}
	srv.calls = make(chan *mcp.Message, 1)
	hs := httptest.NewServer(srv)
	defer hs.Close()

	ctx := testContext(t)
	conn, err := streamablehttp.Dial(ctx, hs.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Drive the Conn by hand, so that a duplicate would be seen.
	write := func(m *mcp.Message) {
		t.Helper()
		if err := conn.Write(ctx, m); err != nil {
			t.Fatalf("write %s: %v", m.Method, err)
		}
	}
	read := func() *mcp.Message {
		t.Helper()
		m, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		return m
	}
	write(&mcp.Message{ID: mcp.Int64ID(1), Method: mcp.MethodInitialize, Params: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)})
	read()
	write(&mcp.Message{Method: mcp.NotificationInitialized})

	call := &mcp.Message{ID: mcp.Int64ID(2), Method: mcp.MethodToolsCall, Params: json.RawMessage(`{"name":"echo","arguments":{"m":"x"}}`)}
	pending.Store(int64(2), call)
	write(call)
	<-srv.calls
	m := read()
	if n, _ := m.ID.Int64(); n != 2 || m.Error != nil || !strings.Contains(string(m.Result), "echo") {
		t.Fatalf("got %s, want the result of request 2", m.AppendJSON(nil))
	}
	if got, _ := lastEventID.Load().(string); got != "ev-1" {
		t.Errorf("resumed with Last-Event-ID %q, want ev-1", got)
	}
	// The next message must be the ping's answer, not a second copy.
	write(&mcp.Message{ID: mcp.Int64ID(3), Method: mcp.MethodPing})
	if m := read(); m.ID != mcp.Int64ID(3) {
		t.Errorf("after the result came %s, want the ping's answer", m.AppendJSON(nil))
	}
}

// TestExpiredSession: a 404 on a request that carried the session id makes
// a new session, and the call succeeds on it.
func TestExpiredSession(t *testing.T) {
	srv := newLegacyServer()
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ctx := testContext(t)
	s := connect(t, ctx, hs.URL, nil)
	if _, err := callEcho(ctx, s, "one"); err != nil {
		t.Fatal(err)
	}
	srv.expire()
	got, err := callEcho(ctx, s, "two")
	if err != nil {
		t.Fatalf("call after the session expired: %v", err)
	}
	if !strings.Contains(got, "two") {
		t.Errorf("result %q", got)
	}
	if n := srv.initializes.Load(); n != 2 {
		t.Errorf("%d initialize requests, want 2", n)
	}
}

// TestServerRestart: the server goes away between two calls and comes
// back on the same address without the session; the second call recovers.
func TestServerRestart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	first := &http.Server{Handler: newLegacyServer()}
	go first.Serve(ln)

	ctx := testContext(t)
	s := connect(t, ctx, "http://"+addr+"/mcp", nil)
	if _, err := callEcho(ctx, s, "before"); err != nil {
		t.Fatal(err)
	}
	first.Close()

	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen again on %s: %v", addr, err)
	}
	second := &http.Server{Handler: newLegacyServer()}
	go second.Serve(ln2)
	defer second.Close()

	got, err := callEcho(ctx, s, "after")
	if err != nil {
		t.Fatalf("call after the restart: %v", err)
	}
	if !strings.Contains(got, "after") {
		t.Errorf("result %q", got)
	}
}

// TestNeverAnswers: a server that accepts the call and never answers
// cannot hold the caller past its context.
func TestNeverAnswers(t *testing.T) {
	srv := newLegacyServer()
	stop := make(chan struct{})
	srv.onCall = func(w http.ResponseWriter, r *http.Request, msg *mcp.Message) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer close(stop)
	ctx := testContext(t)
	s := connect(t, ctx, hs.URL, nil)
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, err := callEcho(cctx, s, "x")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
}

// TestStatus500HTML: a 500 with an HTML page is a *StatusError that
// carries the status and the start of the body.
func TestStatus500HTML(t *testing.T) {
	srv := newLegacyServer()
	srv.onCall = func(w http.ResponseWriter, r *http.Request, msg *mcp.Message) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, "<html><body><h1>Internal Server Error</h1></body></html>")
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ctx := testContext(t)
	s := connect(t, ctx, hs.URL, nil)
	_, err := callEcho(ctx, s, "x")
	var se *streamablehttp.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v (%T), want a *StatusError", err, err)
	}
	if se.Code != http.StatusInternalServerError || !strings.Contains(se.Body, "<h1>Internal Server Error</h1>") {
		t.Errorf("StatusError %+v", se)
	}
}

// TestCloseWithTricklingServer: a call whose SSE answer trickles in one
// byte at a time does not hold Close past its bound.
func TestCloseWithTricklingServer(t *testing.T) {
	srv := newLegacyServer()
	srv.calls = make(chan *mcp.Message, 1)
	srv.onCall = func(w http.ResponseWriter, r *http.Request, msg *mcp.Message) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
				if _, err := w.Write([]byte(":")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		}
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ctx := testContext(t)
	const bound = 500 * time.Millisecond
	conn, err := streamablehttp.Dial(ctx, hs.URL, &streamablehttp.Options{CloseTimeout: bound})
	if err != nil {
		t.Fatal(err)
	}
	s, err := transport.Connect(ctx, conn, &transport.Options{ProtocolVersion: mcp.Version20251125})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := callEcho(ctx, s, "slow"); done <- err }()
	<-srv.calls
	start := time.Now()
	s.Close()
	// Generous slack: the bound is what matters, not the machine's speed.
	if d := time.Since(start); d > 4*bound+2*time.Second {
		t.Errorf("Close took %v with a bound of %v", d, bound)
	}
	if err := <-done; !errors.Is(err, transport.ErrClosed) {
		t.Errorf("pending call: %v, want ErrClosed", err)
	}
	if srv.deletes.Load() != 1 {
		t.Errorf("%d DELETE requests, want 1", srv.deletes.Load())
	}
}

// TestUnauthorized: a 401 the auth hook cannot fix is an error wrapping
// transport.ErrAuthRequired; a hook that refreshes the token gets the
// request through.
func TestUnauthorized(t *testing.T) {
	inner := newLegacyServer()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer good" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="x"`)
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	defer hs.Close()
	ctx := testContext(t)

	conn, _ := streamablehttp.Dial(ctx, hs.URL, &streamablehttp.Options{
		Auth: httpauth.TokenSource(func(context.Context) (string, error) { return "bad", nil }),
	})
	_, err := transport.Connect(ctx, conn, &transport.Options{ProtocolVersion: mcp.Version20251125})
	if !errors.Is(err, transport.ErrAuthRequired) {
		t.Fatalf("err = %v, want ErrAuthRequired", err)
	}

	var token atomic.Value
	token.Store("bad")
	var hooks atomic.Int32
	conn, _ = streamablehttp.Dial(ctx, hs.URL, &streamablehttp.Options{
		Auth: authHooks{
			authorize: func(req *http.Request) error {
				req.Header.Set("Authorization", "Bearer "+token.Load().(string))
				return nil
			},
			unauthorized: func(_ context.Context, resp *http.Response) error {
				hooks.Add(1)
				if !strings.Contains(resp.Header.Get("Www-Authenticate"), "resource_metadata") {
					return errors.New("no challenge")
				}
				token.Store("good")
				return nil
			},
		},
	})
	s, err := transport.Connect(ctx, conn, &transport.Options{ProtocolVersion: mcp.Version20251125})
	if err != nil {
		t.Fatalf("connect after refreshing the token: %v", err)
	}
	defer s.Close()
	if hooks.Load() != 1 {
		t.Errorf("OnUnauthorized called %d times, want 1", hooks.Load())
	}
}

// TestBatchAnswer: a 2025-03-26 server may answer with a JSON batch; every
// message in it is delivered.
func TestBatchAnswer(t *testing.T) {
	srv := newLegacyServer()
	srv.onCall = func(w http.ResponseWriter, r *http.Request, msg *mcp.Message) {
		note := &mcp.Message{Method: mcp.NotificationMessage, Params: json.RawMessage(`{"level":"info","data":"batched"}`)}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "[%s,%s]", note.AppendJSON(nil), echoResult(msg).AppendJSON(nil))
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ctx := testContext(t)
	s := connect(t, ctx, hs.URL, nil)
	got := make(chan mcp.Notification, 1)
	defer s.Subscribe(func(n mcp.Notification) { got <- n })()
	if _, err := callEcho(ctx, s, "b"); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-got:
		if !strings.Contains(string(n.Params), "batched") {
			t.Errorf("notification %s", n.Params)
		}
	case <-ctx.Done():
		t.Fatal("the batched notification never arrived")
	}
}

// TestTooLargeAnswer: an answer over MaxMessageSize fails that call with
// ErrMessageTooLarge and leaves the connection working.
func TestTooLargeAnswer(t *testing.T) {
	srv := newLegacyServer()
	srv.onCall = func(w http.ResponseWriter, r *http.Request, msg *mcp.Message) {
		var p mcp.CallToolParams
		json.Unmarshal(msg.Params, &p)
		if strings.Contains(string(p.Arguments), "big") {
			res, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": strings.Repeat("x", 8192)}}})
			writeJSON(w, "", &mcp.Message{ID: msg.ID, Result: res})
			return
		}
		writeJSON(w, "", echoResult(msg))
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ctx := testContext(t)
	s := connect(t, ctx, hs.URL, &streamablehttp.Options{MaxMessageSize: 4096})
	if _, err := callEcho(ctx, s, "big"); !errors.Is(err, transport.ErrMessageTooLarge) {
		t.Fatalf("err = %v, want ErrMessageTooLarge", err)
	}
	if _, err := callEcho(ctx, s, "small"); err != nil {
		t.Fatalf("the call after the oversized answer: %v", err)
	}
}

// TestGETStreamReconnects: the standalone GET stream carries a server
// request (answered by POST) and, after the server drops it, is re-opened
// with Last-Event-ID and carries a notification to a subscriber.
func TestGETStreamReconnects(t *testing.T) {
	srv := newLegacyServer()
	srv.responses = make(chan *mcp.Message, 4)
	var gets atomic.Int32
	lastIDs := make(chan string, 4)
	srv.onGet = func(w http.ResponseWriter, r *http.Request) {
		n := gets.Add(1)
		lastIDs <- r.Header.Get("Last-Event-ID")
		w.Header().Set("Content-Type", "text/event-stream")
		switch n {
		case 1:
			fmt.Fprint(w, "id: g1\nretry: 10\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"ping\"}\n\n")
			// and the stream ends: the client must come back.
		default:
			fmt.Fprint(w, "id: g2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"again\"}}\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close) // after the session closes: the GET handler waits for it
	ctx := testContext(t)
	s := connect(t, ctx, hs.URL, &streamablehttp.Options{Reconnect: streamablehttp.ReconnectPolicy{Backoff: 10 * time.Millisecond}})
	got := make(chan mcp.Notification, 1)
	defer s.Subscribe(func(n mcp.Notification) {
		select {
		case got <- n:
		default:
		}
	})()
	select {
	case resp := <-srv.responses:
		if resp.ID != mcp.StringID("srv-1") || resp.Error != nil {
			t.Errorf("answer to the server's ping: %s", resp.AppendJSON(nil))
		}
	case <-ctx.Done():
		t.Fatal("the server's ping was never answered")
	}
	select {
	case n := <-got:
		if !strings.Contains(string(n.Params), "again") {
			t.Errorf("notification %s", n.Params)
		}
	case <-ctx.Done():
		t.Fatal("no notification after the GET stream was re-opened")
	}
	if first, second := <-lastIDs, <-lastIDs; first != "" || second != "g1" {
		t.Errorf("Last-Event-ID %q then %q, want none then g1", first, second)
	}
}

// TestAuthorizeHook: Authorize sets each request's headers itself, a hook
// that resolves a 401 gets up to MaxAuthRetries re-sends, and a hook's
// error reaches the caller inside the AuthError.
func TestAuthorizeHook(t *testing.T) {
	inner := newLegacyServer()
	var proofs atomic.Int32
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "DPoP t" || r.Header.Get("DPoP") != "nonce-2" {
			w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce"`)
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	defer hs.Close()
	ctx := testContext(t)
	var nonce atomic.Int32
	conn, _ := streamablehttp.Dial(ctx, hs.URL, &streamablehttp.Options{Auth: authHooks{
		authorize: func(req *http.Request) error {
			proofs.Add(1)
			req.Header.Set("Authorization", "DPoP t")
			req.Header.Set("DPoP", fmt.Sprintf("nonce-%d", nonce.Load()))
			return nil
		},
		unauthorized: func(context.Context, *http.Response) error { nonce.Add(1); return nil },
	}})
	s, err := transport.Connect(ctx, conn, &transport.Options{ProtocolVersion: mcp.Version20251125})
	if err != nil {
		t.Fatalf("connect after two retries: %v", err)
	}
	s.Close()

	sentinel := errors.New("the hook's reason")
	conn, _ = streamablehttp.Dial(ctx, hs.URL, &streamablehttp.Options{Auth: authHooks{
		unauthorized: func(context.Context, *http.Response) error { return sentinel },
	}})
	_, err = transport.Connect(ctx, conn, &transport.Options{ProtocolVersion: mcp.Version20251125})
	var ae *streamablehttp.AuthError
	if !errors.Is(err, transport.ErrAuthRequired) || !errors.Is(err, sentinel) || !errors.As(err, &ae) {
		t.Fatalf("err = %v, want an AuthError wrapping ErrAuthRequired and the hook's error", err)
	}
}
