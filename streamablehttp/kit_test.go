package streamablehttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/streamablehttp"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/transport/transporttest"
)

// bridge serves an mcptest.Server over Streamable HTTP, so that the Conn
// can be run through the transporttest kit. A legacy session (initialize)
// gets a pipe of its own to the server; 2026-07-28 requests, which carry no
// session, share one. Each POSTed request is answered on an SSE stream that
// carries the messages routed to it (its progress, and server requests when
// no GET stream is open) and then its response; other server messages go
// to the session's GET stream. Closing a 2026 response stream early is
// turned into notifications/cancelled, as a 2026 server must (§4C.7).
type bridge struct {
	srv *mcptest.Server
	ctx context.Context
	wg  sync.WaitGroup

	mu       sync.Mutex
	sessions map[string]*bridgeSession
	seq      int
}

type bridgeSession struct {
	pipe transport.Conn
	dead chan struct{} // closed when the server's end of the pipe is gone

	mu      sync.Mutex
	streams map[string]chan *mcp.Message // POST streams by request id
	latest  chan *mcp.Message
	get     chan *mcp.Message
	backlog []*mcp.Message
}

func (b *bridge) session(id string, create bool) *bridgeSession {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s := b.sessions[id]; s != nil || !create {
		return s
	}
	s := b.newSession()
	b.sessions[id] = s
	return s
}

// newSession connects a new pipe to the server.
func (b *bridge) newSession() *bridgeSession {
	client, server := transport.Pipe()
	s := &bridgeSession{pipe: client, dead: make(chan struct{}), streams: map[string]chan *mcp.Message{}}
	b.wg.Add(2)
	go func() { defer b.wg.Done(); b.srv.Serve(b.ctx, rawPipe{server}) }()
	go func() { defer b.wg.Done(); s.route(b.ctx) }()
	return s
}

// rawMethod marks a message that carries raw bytes the server wrote
// (mcptest.RawWriter): its Params are sent as one SSE event's data as
// they are, JSON or not.
const rawMethod = "x-bridge/raw"

// rawPipe is the server's end of a bridge pipe, with the RawWriter that
// lets mcptest's Junk, Undecodable and Cut faults put bytes on the wire.
type rawPipe struct{ transport.Conn }

func (p rawPipe) WriteRaw(ctx context.Context, b []byte) error {
	return p.Write(ctx, &mcp.Message{Method: rawMethod, Params: bytes.TrimRight(b, "\n")})
}

// sseData is how m goes out as an SSE event's data.
func sseData(m *mcp.Message) []byte {
	if m.Method == rawMethod {
		return m.Params
	}
	return m.AppendJSON(nil)
}

// route reads the server's messages and sends each to a stream. When the
// server's end is gone (a fault closed it), the streams waiting on it are
// aborted, as a dying server's would be.
func (s *bridgeSession) route(ctx context.Context) {
	defer close(s.dead)
	for {
		m, err := s.pipe.Read(ctx)
		if err != nil {
			return
		}
		key := ""
		switch {
		case m.Method == rawMethod:
			// Raw bytes belong to the request being answered.
			s.mu.Lock()
			ch := s.latest
			s.mu.Unlock()
			if ch != nil {
				ch <- m
				continue
			}
		case m.IsResponse():
			key = m.ID.String()
		case m.Method == mcp.NotificationProgress:
			var p struct {
				Token json.RawMessage `json:"progressToken"`
			}
			json.Unmarshal(m.Params, &p)
			key = string(p.Token)
		}
		s.mu.Lock()
		ch := s.streams[key]
		switch {
		case ch != nil:
		case s.get != nil:
			ch = s.get
		case s.latest != nil:
			ch = s.latest
		default:
			s.backlog = append(s.backlog, m)
		}
		s.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
}

func (b *bridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	switch r.Method {
	case http.MethodGet:
		s := b.session(sid, false)
		if sid == "" || s == nil {
			http.Error(w, "no stream", http.StatusMethodNotAllowed)
			return
		}
		ch := make(chan *mcp.Message, 1024)
		s.mu.Lock()
		s.get = ch
		for _, m := range s.backlog {
			ch <- m
		}
		s.backlog = nil
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case m := <-ch:
				fmt.Fprintf(w, "data: %s\n\n", sseData(m))
				w.(http.Flusher).Flush()
			case <-s.dead:
				panic(http.ErrAbortHandler)
			case <-r.Context().Done():
				s.mu.Lock()
				if s.get == ch {
					s.get = nil
				}
				s.mu.Unlock()
				return
			}
		}
	case http.MethodDelete:
		b.mu.Lock()
		s := b.sessions[sid]
		delete(b.sessions, sid)
		b.mu.Unlock()
		if s != nil {
			s.pipe.Close()
		}
		return
	case http.MethodPost:
	default:
		http.Error(w, "method", http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	m, err := mcp.DecodeMessage(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var s *bridgeSession
	if m.Method == mcp.MethodInitialize {
		b.mu.Lock()
		b.seq++
		sid = "s" + strconv.Itoa(b.seq)
		b.mu.Unlock()
		s = b.session(sid, true)
		w.Header().Set("Mcp-Session-Id", sid)
	} else if sid == "" {
		// 2026-07-28: every request stands alone, so ids of different
		// clients may coincide; each gets a pipe of its own.
		if !m.IsRequest() {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		s = b.newSession()
		defer s.pipe.Close()
	} else if s = b.session(sid, false); s == nil {
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	}
	if !m.IsRequest() {
		s.pipe.Write(r.Context(), m)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	key := m.ID.String()
	ch := make(chan *mcp.Message, 1024)
	s.mu.Lock()
	s.streams[key] = ch
	s.latest = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.streams, key)
		if s.latest == ch {
			s.latest = nil
		}
		s.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	if err := s.pipe.Write(r.Context(), m); err != nil {
		return
	}
	for {
		select {
		case out := <-ch:
			fmt.Fprintf(w, "data: %s\n\n", sseData(out))
			w.(http.Flusher).Flush()
			if out.IsResponse() && out.ID == m.ID {
				return
			}
		case <-s.dead:
			panic(http.ErrAbortHandler)
		case <-r.Context().Done():
			if sid == "" {
				p, _ := json.Marshal(map[string]any{"requestId": m.ID})
				s.pipe.Write(context.Background(), &mcp.Message{Method: mcp.NotificationCancelled, Params: p})
			}
			return
		}
	}
}

// TestKit runs the transporttest conformance kit over Streamable HTTP, in
// both eras, against the reference server behind the bridge.
func TestKit(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	b := &bridge{srv: srv, ctx: ctx, sessions: map[string]*bridgeSession{}}
	hs := httptest.NewServer(b)
	defer func() {
		hs.CloseClientConnections()
		cancel()
		hs.Close()
		b.wg.Wait()
	}()
	transporttest.Run(t, func(t *testing.T) transport.Conn {
		c, err := streamablehttp.Dial(context.Background(), hs.URL+"/mcp", nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}, transporttest.WithServer(srv))
	if v := srv.Violations(); len(v) > 0 {
		t.Errorf("the client broke the protocol: %q", v)
	}
}

// Regression: with Go's default of 2 idle connections per host, concurrent
// calls closed most connections as their answers came back, and the next
// calls opened new ones (7,108 TCP connections for 25k calls in bench/).
// The Conn's own transport keeps enough idle connections to reuse them.
func TestConcurrentCallsReuseConnections(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{DisableRecording: true})
	ctx, cancel := context.WithCancel(context.Background())
	b := &bridge{srv: srv, ctx: ctx, sessions: map[string]*bridgeSession{}}
	hs := httptest.NewUnstartedServer(b)
	connsOpened := countConns(hs)
	hs.Start()
	defer func() {
		hs.CloseClientConnections()
		cancel()
		hs.Close()
		b.wg.Wait()
	}()
	c, err := streamablehttp.Dial(context.Background(), hs.URL+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := transport.Connect(context.Background(), c, &transport.Options{ProtocolVersion: mcp.Version20251125})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const callers, calls = 16, 100
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range calls {
				if _, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"message":"x"}`)}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	// 16 callers need about 16 connections (plus the GET stream); with 2
	// idle slots this test opened several hundred.
	opened := connsOpened()
	t.Logf("%d calls from %d callers opened %d connections", callers*calls, callers, opened)
	if opened > 3*callers {
		t.Errorf("%d calls from %d callers opened %d TCP connections", callers*calls, callers, opened)
	}
}

// serveBridge serves srv over Streamable HTTP on a loopback httptest
// server, through the bridge, and returns the endpoint's URL and how to
// stop it (the server, the bridge's streams and its sessions).
func serveBridge(srv *mcptest.Server) (url string, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	b := &bridge{srv: srv, ctx: ctx, sessions: map[string]*bridgeSession{}}
	hs := httptest.NewServer(b)
	return hs.URL + "/mcp", func() {
		hs.CloseClientConnections()
		cancel()
		hs.Close()
		b.wg.Wait()
	}
}
