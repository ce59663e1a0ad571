package streamablehttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
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
)

// Servers that are not quite what they should be: a legacy server that
// answers server/discover with {}, a web page where the endpoint should be.

// emptyDiscover answers server/discover with an empty result, as some
// legacy servers answer every method they do not know, and hands every
// other message to a legacy server.
type emptyDiscover struct {
	*legacyServer
	mu      sync.Mutex
	methods []string
}

func (s *emptyDiscover) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		if msg, err := mcp.DecodeMessage(body); err == nil {
			s.mu.Lock()
			s.methods = append(s.methods, msg.Method)
			s.mu.Unlock()
			if msg.Method == mcp.MethodDiscover {
				writeJSON(w, "", &mcp.Message{ID: msg.ID, Result: json.RawMessage(`{}`)})
				return
			}
		}
	}
	s.legacyServer.ServeHTTP(w, r)
}

// dialEmptyDiscover serves an emptyDiscover in front of a new legacy
// server and dials it, without the handshake; the server is closed when
// the test ends.
func dialEmptyDiscover(t *testing.T, ctx context.Context) (*emptyDiscover, *streamablehttp.Conn) {
	t.Helper()
	srv := &emptyDiscover{legacyServer: newLegacyServer()}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	conn, err := streamablehttp.Dial(ctx, hs.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	return srv, conn
}

// TestEmptyDiscoverResultIsALegacyServer: {} is a successful answer to
// server/discover but not a DiscoverResult. It was taken for a 2026-07-28
// server with no capabilities, whose ListTools then returned no tools
// without sending anything; the server is legacy, so the session is too,
// and lists its tool.
func TestEmptyDiscoverResultIsALegacyServer(t *testing.T) {
	ctx := testContext(t)
	srv, conn := dialEmptyDiscover(t, ctx)
	s, err := transport.Connect(ctx, conn, nil) // the defaults: nothing pinned
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer s.Close()
	info := s.ServerInfo()
	if info.ProtocolVersion != mcp.Version20251125 || info.Implementation.Name != "legacy" || info.Capabilities.Tools == nil {
		t.Fatalf("server info %+v: want the legacy server's initialize result", info)
	}
	tools, err := s.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].Name != "echo" {
		t.Fatalf("tools %+v, want the legacy server's echo", tools)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if want := []string{mcp.MethodDiscover, mcp.MethodInitialize, mcp.NotificationInitialized, mcp.MethodToolsList}; strings.Join(srv.methods, " ") != strings.Join(want, " ") {
		t.Errorf("the server saw %v, want %v", srv.methods, want)
	}
}

// TestEmptyDiscoverResultPinnedFails: with 2026-07-28 pinned there is no
// fallback, and the error says what was wrong with the answer.
func TestEmptyDiscoverResultPinnedFails(t *testing.T) {
	ctx := testContext(t)
	_, conn := dialEmptyDiscover(t, ctx)
	s, err := transport.Connect(ctx, conn, &transport.Options{ProtocolVersion: mcp.Version20260728})
	if err == nil {
		s.Close()
		t.Fatal("Connect pinned at 2026-07-28 took {} for a DiscoverResult")
	}
	var re *mcp.ResultError
	if !errors.Is(err, transport.ErrProtocol) || !errors.As(err, &re) || re.Member != "supportedVersions" {
		t.Fatalf("err = %v, want ErrProtocol and a *mcp.ResultError about supportedVersions", err)
	}
	if !strings.Contains(err.Error(), "supportedVersions is missing") {
		t.Errorf("the message does not say what was wrong: %v", err)
	}
}

// loginPage is what a login portal or a web site answers, with status 200.
const loginPage = "<!DOCTYPE html>\n<html><head><title>Sign in - Example Portal</title></head><body><form>...</form></body></html>"

// htmlServer answers every POST with page (or, with postStatus set, that
// status and no body) and every GET with page, counting the requests.
type htmlServer struct {
	postStatus int
	mu         sync.Mutex
	requests   []string
}

func (s *htmlServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	what := r.Method
	if r.Method == http.MethodPost {
		body, _ := io.ReadAll(r.Body)
		if msg, err := mcp.DecodeMessage(body); err == nil {
			what += " " + msg.Method
		}
		if s.postStatus != 0 {
			s.record(what)
			http.Error(w, http.StatusText(s.postStatus), s.postStatus)
			return
		}
	}
	s.record(what)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, loginPage)
}

func (s *htmlServer) record(what string) {
	s.mu.Lock()
	s.requests = append(s.requests, what)
	s.mu.Unlock()
}

func (s *htmlServer) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// connectWithin runs Connect with opts and wants it to fail within 2 s
// (the test's own bound is far longer: a Connect that waits for an answer
// to a page runs into it and fails the test on the elapsed time) with a
// *ContentTypeError for method.
func connectWithin(t *testing.T, url string, opts *transport.Options, method string) *streamablehttp.ContentTypeError {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := streamablehttp.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s, err := transport.Connect(ctx, conn, opts)
	elapsed := time.Since(start)
	if err == nil {
		s.Close()
		t.Fatal("Connect to a web page succeeded")
	}
	if elapsed > 2*time.Second {
		t.Errorf("Connect took %v to fail (%v), want under 2s", elapsed.Round(time.Millisecond), err)
	}
	var cte *streamablehttp.ContentTypeError
	if !errors.As(err, &cte) || !errors.Is(err, transport.ErrNotMCP) {
		t.Fatalf("err = %v, want a *ContentTypeError wrapping ErrNotMCP", err)
	}
	if cte.Code != http.StatusOK || cte.ContentType != "text/html" || cte.Method != method || !strings.Contains(cte.Body, "<title>Sign in") {
		t.Errorf("ContentTypeError %+v", cte)
	}
	if !strings.Contains(err.Error(), "the server answered text/html, not ") || !strings.Contains(err.Error(), "is this the MCP endpoint?") {
		t.Errorf("message %q", err)
	}
	return cte
}

// TestHTMLPageFailsConnectAtOnce: an endpoint that answers a web page with
// 200 held Connect until its deadline: server/discover waited out the
// probe's timeout for an answer on another stream, was then taken for a
// legacy server's silence, and initialize waited for the caller's deadline.
// With the default options it fails at once, on the probe, which is the
// only request sent.
func TestHTMLPageFailsConnectAtOnce(t *testing.T) {
	srv := &htmlServer{}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	connectWithin(t, hs.URL+"/mcp", nil, mcp.MethodDiscover)
	if got := srv.seen(); len(got) != 1 || got[0] != "POST "+mcp.MethodDiscover {
		t.Errorf("the server saw %q, want only the server/discover POST", got)
	}
}

// TestHTMLPageFailsLegacyInitialize: the same with a legacy revision
// pinned, where initialize is the first request.
func TestHTMLPageFailsLegacyInitialize(t *testing.T) {
	srv := &htmlServer{}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	connectWithin(t, hs.URL+"/mcp", &transport.Options{ProtocolVersion: mcp.Version20251125}, mcp.MethodInitialize)
}

// TestHTMLPageFailsOldSSEFallback: a web site refuses the POST with 405
// and serves its page to the 2024-11-05 fallback's GET.
func TestHTMLPageFailsOldSSEFallback(t *testing.T) {
	srv := &htmlServer{postStatus: http.StatusMethodNotAllowed}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	connectWithin(t, hs.URL, nil, http.MethodGet)
	want := []string{"POST " + mcp.MethodDiscover, "POST " + mcp.MethodInitialize, "GET"}
	if got := srv.seen(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("the server saw %q, want %q", got, want)
	}
}

// TestHTMLPageFailsSessionCall: a portal that steps in front of a legacy
// session (its login expired) answers a call with its page: the call
// fails at once rather than at its deadline.
func TestHTMLPageFailsSessionCall(t *testing.T) {
	srv := newLegacyServer()
	var portal atomic.Bool
	portal.Store(true)
	srv.onCall = func(w http.ResponseWriter, r *http.Request, msg *mcp.Message) {
		if !portal.Load() {
			writeJSON(w, "", echoResult(msg))
			return
		}
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, loginPage)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ctx := testContext(t)
	s := connect(t, ctx, hs.URL, nil)
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	start := time.Now()
	_, err := callEcho(cctx, s, "x")
	var cte *streamablehttp.ContentTypeError
	if !errors.As(err, &cte) || cte.Method != mcp.MethodToolsCall {
		t.Fatalf("err = %v, want a *ContentTypeError for tools/call", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the call took %v to fail", d)
	}
	// The session itself is fine: the next call gets its answer.
	portal.Store(false)
	if got, err := callEcho(ctx, s, "y"); err != nil || !strings.Contains(got, "y") {
		t.Errorf("the next call: %q, %v", got, err)
	}
}
