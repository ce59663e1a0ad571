package streamablehttp_test

import (
	"bytes"
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

// Regression tests for "a legacy HTTP session can break for good after one
// expiry": whichever message first meets the 404 (a request, a
// notification, the notifications/cancelled of a call that timed out, the
// answer to a server request), the engine renews the session once and later
// calls succeed; a server that never accepts a session again ends the
// session with a typed error and Err set, never a silent stream of 400s.

// expiringServer wraps legacyServer: expireOn makes the server forget
// every session as a message of that method arrives (before answering it);
// once armed, the first request of the next new session gets 404 as well
// (a load balancer that routes the retry to a backend that does not know
// the session yet); forgetAll answers 404 to every request on a session.
type expiringServer struct {
	*legacyServer
	expireOn  string
	once      sync.Once
	armed     atomic.Bool
	noSticky  atomic.Int32
	forgetAll atomic.Bool
}

func (s *expiringServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") != "" {
		body, msg := peek(r)
		r.Body = body
		if msg != nil && msg.Method == s.expireOn && s.expireOn != "" {
			s.once.Do(s.expire)
		}
		if s.forgetAll.Load() || (msg != nil && msg.IsRequest() && s.noSticky.Add(-1) >= 0) {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
	}
	if r.Method == http.MethodPost {
		body, msg := peek(r)
		r.Body = body
		if msg != nil && msg.Method == mcp.MethodInitialize && s.armed.Swap(false) {
			s.noSticky.Store(1)
		}
	}
	s.legacyServer.ServeHTTP(w, r)
}

func TestSessionExpiredByNotificationIsRenewed(t *testing.T) {
	srv := &expiringServer{legacyServer: newLegacyServer(), expireOn: "notifications/roots/list_changed"}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ctx := testContext(t)
	s := connect(t, ctx, hs.URL, nil)
	if err := s.Notify(ctx, "notifications/roots/list_changed", nil); err != nil {
		t.Fatalf("notify on an expiring session: %v", err)
	}
	for i := range 3 {
		if _, err := callEcho(ctx, s, fmt.Sprint(i)); err != nil {
			t.Fatalf("call %d after the notification met the expiry: %v", i, err)
		}
	}
	if n := srv.initializes.Load(); n != 2 {
		t.Errorf("%d initialize requests, want 2", n)
	}
	if err := s.Err(); err != nil {
		t.Errorf("Err() = %v on a renewed session", err)
	}
}

// TestSessionExpiredByCancellationIsRenewed: the notifications/cancelled
// of a call that timed out across a server restart meets the 404; the next
// call renews the session instead of going out without one.
func TestSessionExpiredByCancellationIsRenewed(t *testing.T) {
	srv := newLegacyServer()
	release := make(chan struct{})
	srv.onCall = func(w http.ResponseWriter, r *http.Request, msg *mcp.Message) {
		if strings.Contains(string(msg.Params), "hang") {
			srv.expire() // the server restarts while the call runs
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		writeJSON(w, "", echoResult(msg))
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer close(release)
	ctx := testContext(t)
	s := connect(t, ctx, hs.URL, nil)
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err := callEcho(short, s, "hang")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hanging call: %v", err)
	}
	got, err := callEcho(ctx, s, "after")
	if err != nil || !strings.Contains(got, "after") {
		t.Fatalf("call after the cancellation met the expiry: %q %v", got, err)
	}
}

// TestSessionExpiredAgainOnFirstRetryIsRenewedTwice: a load balancer
// without sticky sessions answers 404 to the first request of each new
// session as well; the engine renews again and the call succeeds.
func TestSessionExpiredAgainOnFirstRetryIsRenewedTwice(t *testing.T) {
	srv := &expiringServer{legacyServer: newLegacyServer()}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ctx := testContext(t)
	s := connect(t, ctx, hs.URL, nil)
	srv.armed.Store(true)
	srv.expire()
	got, err := callEcho(ctx, s, "x")
	if err != nil || !strings.Contains(got, "x") {
		t.Fatalf("call: %q %v", got, err)
	}
	if n := srv.initializes.Load(); n != 3 {
		t.Errorf("%d initialize requests, want 3 (first, renewal, renewal after the retry's 404)", n)
	}
	if _, err := callEcho(ctx, s, "y"); err != nil {
		t.Fatalf("later call: %v", err)
	}
}

// TestSessionNeverAcceptedAgainEndsWithErr: a server that forgets every
// session at once ends the session with an error wrapping
// ErrSessionExpired and Err set; later calls fail at once with it.
func TestSessionNeverAcceptedAgainEndsWithErr(t *testing.T) {
	srv := &expiringServer{legacyServer: newLegacyServer()}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ctx := testContext(t)
	s := connect(t, ctx, hs.URL, nil)
	srv.forgetAll.Store(true)
	_, err := callEcho(ctx, s, "x")
	if !errors.Is(err, transport.ErrSessionExpired) {
		t.Fatalf("call: %v, want ErrSessionExpired", err)
	}
	select {
	case <-s.Done():
	case <-ctx.Done():
		t.Fatal("the session did not end")
	}
	if !errors.Is(s.Err(), transport.ErrSessionExpired) {
		t.Fatalf("Err() = %v", s.Err())
	}
	start := time.Now()
	if _, err := callEcho(ctx, s, "y"); !errors.Is(err, transport.ErrSessionExpired) {
		t.Fatalf("later call: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("a call on an ended session took %v", d)
	}
}

// TestCredentialsNotSentOnCrossOriginRedirect: a 307 to another origin
// (here the same host on another port) is refused with *RedirectError; the
// other origin never sees the request, its Authorization header, the
// caller's API key or the session id.
func TestCredentialsNotSentOnCrossOriginRedirect(t *testing.T) {
	var leaked atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Add(1)
		http.Error(w, "should not be reached", http.StatusTeapot)
	}))
	defer other.Close()
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	defer redirecting.Close()
	ctx := testContext(t)
	conn, err := streamablehttp.Dial(ctx, redirecting.URL+"/mcp", &streamablehttp.Options{
		Header: http.Header{"X-Api-Key": {"secret-key"}},
		Auth:   httpauth.TokenSource(func(context.Context) (string, error) { return "secret-token", nil }),
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = transport.Connect(ctx, conn, &transport.Options{ProtocolVersion: mcp.Version20251125})
	var re *streamablehttp.RedirectError
	if !errors.As(err, &re) {
		t.Fatalf("connect: %v, want *RedirectError", err)
	}
	if strings.Contains(err.Error(), "secret") {
		t.Errorf("the error shows a secret: %v", err)
	}
	if n := leaked.Load(); n != 0 {
		t.Fatalf("the other origin got %d requests", n)
	}
}

// TestSameOriginRedirectIsFollowed: a redirect within the origin (a moved
// path) is followed with the body.
func TestSameOriginRedirectIsFollowed(t *testing.T) {
	srv := newLegacyServer()
	mux := http.NewServeMux()
	mux.Handle("/new", srv)
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/new", http.StatusPermanentRedirect)
	})
	hs := httptest.NewServer(mux)
	defer hs.Close()
	ctx := testContext(t)
	s := connect(t, ctx, hs.URL+"/old", nil)
	if _, err := callEcho(ctx, s, "moved"); err != nil {
		t.Fatal(err)
	}
}

// sseServer answers every POST as an SSE stream that ends after the
// response, as the official Go SDK does, and counts TCP connections. The
// end comes linger after the response.
func sseServer(t *testing.T, linger time.Duration) (*httptest.Server, *atomic.Int32) {
	var conns atomic.Int32
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "no", http.StatusMethodNotAllowed)
			return
		}
		_, msg := peek(r)
		if msg == nil || !msg.IsRequest() {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var res json.RawMessage
		switch msg.Method {
		case mcp.MethodInitialize:
			w.Header().Set("Mcp-Session-Id", "s1")
			res = json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"sse","version":"1"}}`)
		case mcp.MethodToolsCall:
			res = echoResult(msg).Result
		default:
			res = json.RawMessage(`{}`)
		}
		// Headers first, then the event, each flushed, then the end of
		// the stream: a chunked body whose last chunk comes after the
		// response, as a streaming server sends it.
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", (&mcp.Message{ID: msg.ID, Result: res}).AppendJSON(nil))
		w.(http.Flusher).Flush()
		if linger > 0 {
			// A server whose writer finishes a little after its last
			// event (a slow path, not a synchronisation).
			time.Sleep(linger)
		}
	}))
	hs.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	hs.Start()
	t.Cleanup(hs.Close)
	return hs, &conns
}

// TestSequentialCallsOverSSEReuseOneConnection: after the response arrives
// on a POST's SSE stream, the Conn reads the stream to its end before it
// lets go, so that the connection returns to the pool; 200 calls one after
// another open one or two TCP connections, not one each (before the fix:
// one each).
func TestSequentialCallsOverSSEReuseOneConnection(t *testing.T) {
	hs, conns := sseServer(t, 0)
	ctx := testContext(t)
	s := connect(t, ctx, hs.URL, nil)
	for i := range 200 {
		callCtx, cancel := context.WithCancel(ctx)
		_, err := callEcho(callCtx, s, fmt.Sprint(i))
		cancel() // as every caller does the moment its call returns
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := conns.Load(); n > 2 {
		t.Fatalf("200 sequential calls opened %d TCP connections", n)
	}
}

// peek reads a request's body, decodes it as one message (nil if it is
// not one), and returns a fresh body for the handler that follows.
func peek(r *http.Request) (io.ReadCloser, *mcp.Message) {
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	msg, err := mcp.DecodeMessage(b)
	if err != nil {
		msg = nil
	}
	return io.NopCloser(bytes.NewReader(b)), msg
}

// eofBody records whether a response body was read to its end before it
// was closed.
type eofBody struct {
	io.ReadCloser
	eof, early *atomic.Int32
	closed     chan<- struct{}
	seen       bool
}

func (b *eofBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.seen {
		b.seen = true
		b.eof.Add(1)
	}
	return n, err
}

func (b *eofBody) Close() error {
	if !b.seen {
		b.early.Add(1)
	}
	err := b.ReadCloser.Close()
	b.closed <- struct{}{}
	return err
}

type eofTransport struct {
	http.RoundTripper
	eof, early atomic.Int32
	closed     chan struct{}
}

func (t *eofTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.RoundTripper.RoundTrip(r)
	if err == nil && resp.Header.Get("Content-Type") == "text/event-stream" {
		resp.Body = &eofBody{ReadCloser: resp.Body, eof: &t.eof, early: &t.early, closed: t.closed}
	}
	return resp, err
}

// TestSSEStreamReadToItsEndAfterTheResponse: the fix for the connection
// churn of issue "Streamable HTTP churns TCP connections": a POST's SSE
// stream is read to its end after the response, not closed at it, even
// when the end comes later than the response and the caller cancels its
// context as soon as the call returns.
func TestSSEStreamReadToItsEndAfterTheResponse(t *testing.T) {
	hs, _ := sseServer(t, 20*time.Millisecond)
	ctx := testContext(t)
	const calls = 5
	tr := &eofTransport{RoundTripper: http.DefaultTransport.(*http.Transport).Clone(), closed: make(chan struct{}, calls+8)}
	s := connect(t, ctx, hs.URL, &streamablehttp.Options{RoundTripper: tr})
	for i := range calls {
		callCtx, cancel := context.WithCancel(ctx)
		_, err := callEcho(callCtx, s, fmt.Sprint(i))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	// Every SSE body (initialize's and each call's) is closed by its
	// stream's goroutine; wait for them before closing the session, which
	// would cut what is still being read.
	for range calls + 1 {
		select {
		case <-tr.closed:
		case <-ctx.Done():
			t.Fatal("SSE bodies were never closed")
		}
	}
	if early := tr.early.Load(); early != 0 {
		t.Fatalf("%d SSE bodies closed before their end", early)
	}
	if n := tr.eof.Load(); n < calls {
		t.Fatalf("%d SSE bodies read to their end, want at least %d", n, calls)
	}
}

// TestLingeringServerIsRemembered: a server that keeps each stream open
// well past its response gets its stream cut, and is remembered, so that
// later responses wait only briefly for an end that will not come; a
// server that ends its streams promptly never is.
func TestLingeringServerIsRemembered(t *testing.T) {
	for _, tc := range []struct {
		linger time.Duration
		want   bool
	}{{0, false}, {time.Second, true}} {
		hs, _ := sseServer(t, tc.linger)
		ctx := testContext(t)
		conn, err := streamablehttp.Dial(ctx, hs.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := transport.Connect(ctx, conn, &transport.Options{ProtocolVersion: mcp.Version20251125})
		if err != nil {
			t.Fatal(err)
		}
		// Each call against the lingering server holds its response for
		// endWait; the first stream is cut drainWait after its response,
		// some calls later. 200 calls are far more than that takes.
		for i := 0; i < 200 && !conn.Lingers(); i++ {
			if _, err := callEcho(ctx, s, fmt.Sprint(i)); err != nil {
				t.Fatal(err)
			}
		}
		got := conn.Lingers()
		s.Close()
		if got != tc.want {
			t.Errorf("linger %v: Lingers() = %v, want %v", tc.linger, got, tc.want)
		}
	}
}
