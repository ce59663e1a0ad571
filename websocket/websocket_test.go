package websocket_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"strings"
	"sync"
	"testing"
	"time"

	gorilla "github.com/gorilla/websocket"
	"go.uber.org/goleak"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/transport/transporttest"
	"github.com/tako-mcp/tako/websocket"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// limit bounds a test so that a hang becomes a failure.
func limit(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// referenceBackend serves each bridged client with srv over an in-process
// pipe. Serving ends when the bridge closes the pipe; wait waits for every
// Serve to return.
type referenceBackend struct {
	srv *mcptest.Server
	wg  sync.WaitGroup
}

func (b *referenceBackend) backend(ctx context.Context) (transport.Conn, error) {
	client, server := transport.Pipe()
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		// The bridge closes client when it ends, which ends Serve; ctx
		// (the bridge's) ends it too.
		b.srv.Serve(context.WithoutCancel(ctx), server)
	}()
	return client, nil
}

// startBridge serves h on a local httptest server and returns its ws:// URL.
// Everything is shut down when the test ends.
func startBridge(t *testing.T, h *websocket.Handler) string {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.Close()
		h.Close()
	})
	return "ws" + strings.TrimPrefix(ts.URL, "http") + "/mcp"
}

// referenceBridge starts a Handler whose backend is the reference server.
func referenceBridge(t *testing.T, srv *mcptest.Server, h *websocket.Handler) string {
	t.Helper()
	rb := &referenceBackend{srv: srv}
	h.Backend = rb.backend
	// Cleanups run last first: the wait comes after the Handler's Close,
	// which ends every bridge, so no backend is still being started.
	t.Cleanup(rb.wg.Wait)
	return startBridge(t, h)
}

func dial(t *testing.T, url string, opts *websocket.Options) *websocket.Conn {
	t.Helper()
	conn, err := websocket.Dial(limit(t), url, opts)
	if err != nil {
		t.Fatalf("Dial %s: %v", url, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestConformance runs the Conn conformance kit: a websocket.Conn dialled
// to a websocket.Handler whose backend is the in-process reference server.
func TestConformance(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{})
	url := referenceBridge(t, srv, &websocket.Handler{})
	transporttest.Run(t, func(t *testing.T) transport.Conn {
		return dial(t, url, nil)
	}, transporttest.WithServer(srv))
	if v := srv.Violations(); len(v) > 0 {
		t.Errorf("the Session broke the protocol: %q", v)
	}
}

// TestConformanceLegacyServer runs the kit against a legacy-only server,
// whose lifecycle (initialize) is the one WebSocket peers use.
func TestConformanceLegacyServer(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{Versions: []string{mcp.Version20251125, mcp.Version20250618, mcp.Version20250326, mcp.Version20241105}})
	url := referenceBridge(t, srv, &websocket.Handler{})
	transporttest.Run(t, func(t *testing.T) transport.Conn {
		return dial(t, url, nil)
	}, transporttest.WithServer(srv), transporttest.WithVersions("", mcp.Version20241105))
}

// serveHTTP serves h on a local httptest server and, when the test ends,
// closes it and waits for every handler, hijacked ones included (which
// httptest.Server.Close does not wait for). A handler counts itself before
// it answers, so before any client can have seen it.
func serveHTTP(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	var wg sync.WaitGroup
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wg.Add(1)
		defer wg.Done()
		h(w, r)
	}))
	t.Cleanup(func() {
		ts.Close()
		wg.Wait()
	})
	return ts
}

// rawServer upgrades with the mcp subprotocol and hands the gorilla
// connection to serve, for peers that misbehave on purpose.
func rawServer(t *testing.T, serve func(ws *gorilla.Conn)) string {
	t.Helper()
	ts := serveHTTP(t, func(w http.ResponseWriter, r *http.Request) {
		up := gorilla.Upgrader{Subprotocols: []string{"mcp"}}
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		serve(ws)
	})
	return "ws" + strings.TrimPrefix(ts.URL, "http")
}

func TestDialRequiresSubprotocol(t *testing.T) {
	ts := serveHTTP(t, func(w http.ResponseWriter, r *http.Request) {
		up := gorilla.Upgrader{} // selects no subprotocol
		ws, err := up.Upgrade(w, r, nil)
		if err == nil {
			ws.ReadMessage() // until the client goes
			ws.Close()
		}
	})
	_, err := websocket.Dial(limit(t), "ws"+strings.TrimPrefix(ts.URL, "http"), nil)
	if !errors.Is(err, transport.ErrProtocol) || !strings.Contains(err.Error(), `"mcp" subprotocol`) {
		t.Fatalf("Dial to a server without the mcp subprotocol: %v, want an error wrapping ErrProtocol that names the subprotocol", err)
	}
}

func TestHandlerRejects(t *testing.T) {
	started := 0
	h := &websocket.Handler{
		AllowedOrigins: []string{"https://app.example"},
		Backend: func(context.Context) (transport.Conn, error) {
			started++
			return nil, errors.New("must not start")
		},
	}
	ts := httptest.NewServer(h)
	defer func() { ts.Close(); h.Close() }()
	url := "ws" + strings.TrimPrefix(ts.URL, "http")

	// Without the subprotocol.
	_, resp, err := gorilla.DefaultDialer.Dial(url, nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("dial without subprotocol: %v, %v; want HTTP 400", err, resp)
	}
	// From an origin not in the list.
	_, err = websocket.Dial(limit(t), url, &websocket.Options{Header: http.Header{"Origin": {"https://evil.example"}}})
	var he *websocket.HandshakeError
	if !errors.As(err, &he) || he.StatusCode != http.StatusForbidden || !errors.Is(err, transport.ErrAuthRequired) {
		t.Errorf("dial from a foreign origin: %v, want a HandshakeError with 403", err)
	}
	// Plain HTTP.
	res, err := http.Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusUpgradeRequired {
		t.Errorf("plain GET: HTTP %d, want 426", res.StatusCode)
	}
	if started != 0 {
		t.Errorf("the backend was started %d times for rejected clients", started)
	}
}

func TestHandlerAllowedOrigin(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{})
	url := referenceBridge(t, srv, &websocket.Handler{AllowedOrigins: []string{"https://app.example"}})
	conn := dial(t, url, &websocket.Options{Header: http.Header{"Origin": {"https://APP.example"}}})
	s, err := transport.Connect(limit(t), conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.ListTools(limit(t)); err != nil {
		t.Fatal(err)
	}
}

// cutProxy is a TCP proxy whose connections can be cut, as a network
// failure would: both sockets closed, no close frame.
type cutProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			p.wg.Add(2)
			go func() { defer p.wg.Done(); io.Copy(out, in); out.Close() }()
			go func() { defer p.wg.Done(); io.Copy(in, out); in.Close() }()
		}
	}()
	t.Cleanup(func() { ln.Close(); p.cut(); p.wg.Wait() })
	return p
}

func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

// TestCutMidCallFailsEveryPendingCall: when the TCP connection is cut while
// calls are in flight, every one of them fails with ErrConnectionLost.
func TestCutMidCallFailsEveryPendingCall(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{})
	url := referenceBridge(t, srv, &websocket.Handler{})
	target := strings.TrimPrefix(strings.TrimSuffix(url, "/mcp"), "ws://")
	p := newCutProxy(t, target)
	ctx := limit(t)
	conn := dial(t, "ws://"+p.ln.Addr().String()+"/mcp", nil)
	s, err := transport.Connect(ctx, conn, &transport.Options{ProtocolVersion: mcp.Version20251125})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	const n = 20
	errs := make(chan error, n)
	// The sleep tool reports progress once it runs: then the call is
	// surely pending on the server.
	running := make(chan struct{}, n)
	for range n {
		go func() {
			var once sync.Once
			pctx := transport.WithProgress(ctx, func(mcp.ProgressParams) {
				once.Do(func() { running <- struct{}{} })
			})
			_, err := s.CallTool(pctx, &mcp.CallToolParams{Name: mcptest.ToolSleep, Arguments: json.RawMessage(`{"ms":600000}`)})
			errs <- err
		}()
	}
	for range n {
		select {
		case <-running:
		case <-ctx.Done():
			t.Fatal("the calls never started")
		}
	}
	p.cut()
	for range n {
		err := <-errs
		if !errors.Is(err, transport.ErrConnectionLost) {
			t.Errorf("pending call after the cut: %v, want ErrConnectionLost", err)
		}
	}
	if !errors.Is(s.Err(), transport.ErrConnectionLost) {
		t.Errorf("session error %v, want ErrConnectionLost", s.Err())
	}
}

// TestReadLimit: a message past the read limit ends the connection with an
// error that says so, and the pending call fails with it.
func TestReadLimit(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{})
	url := referenceBridge(t, srv, &websocket.Handler{})
	ctx := limit(t)
	conn := dial(t, url, &websocket.Options{Keepalive: websocket.Keepalive{MaxMessageSize: 64 << 10}})
	s, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.ToolBig, Arguments: json.RawMessage(`{"bytes":1000}`)}); err != nil {
		t.Fatalf("small result: %v", err)
	}
	_, err = s.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.ToolBig, Arguments: json.RawMessage(`{"bytes":200000}`)})
	if !errors.Is(err, transport.ErrMessageTooLarge) || !strings.Contains(err.Error(), "read limit of 65536 bytes") {
		t.Fatalf("call with a result past the limit: %v, want an error wrapping ErrMessageTooLarge naming the limit", err)
	}
	if _, err := s.ListTools(ctx); !errors.Is(err, transport.ErrMessageTooLarge) {
		t.Errorf("call after the connection ended: %v, want the same error", err)
	}
}

// TestDeadPeerDetected: a peer that never reads again (its TCP connection
// stays open, it just says nothing) is found within the keepalive bound,
// PingInterval+PongTimeout from the last frame, plus a margin.
func TestDeadPeerDetected(t *testing.T) {
	stop := make(chan struct{})
	url := rawServer(t, func(ws *gorilla.Conn) {
		// Never read, so never answer a ping, until the test ends.
		<-stop
	})
	defer close(stop)
	const interval, timeout = 50 * time.Millisecond, 200 * time.Millisecond
	conn := dial(t, url, &websocket.Options{Keepalive: websocket.Keepalive{PingInterval: interval, PongTimeout: timeout}})
	start := time.Now()
	ctx, cancel := context.WithTimeout(limit(t), 10*time.Second)
	defer cancel()
	_, err := conn.Read(ctx)
	if !errors.Is(err, transport.ErrConnectionLost) || !strings.Contains(err.Error(), "ping") {
		t.Fatalf("Read from a silent peer: %v, want ErrConnectionLost about the ping", err)
	}
	if d, bound := time.Since(start), interval+timeout+keepaliveMargin; d > bound {
		t.Errorf("the dead peer was found after %v, want within %v (PingInterval+PongTimeout+margin)", d, bound)
	}
}

// keepaliveMargin is the slack a dead-peer test allows past the configured
// bound: scheduling on a loaded machine under -race, not a second ping
// round (which would cost a further PingInterval+PongTimeout).
const keepaliveMargin = 150 * time.Millisecond

// pingCountingServer is a raw peer that answers every request with an
// empty result and counts the pings it gets. While answer reports true it
// answers them (gorilla's default handler, a pong); once it reports false
// the peer goes on reading but drops pings, as a peer whose keepalive is
// broken or a middlebox that eats control frames would. The time of the
// first dropped ping is sent on dropped.
type pingCountingServer struct {
	answer  func(n int) bool // n: this ping's number, from 1
	reached int              // close enough once this many pings arrived
	enough  chan struct{}
	dropped chan time.Time // 1 slot
}

func (p *pingCountingServer) serve(ws *gorilla.Conn) {
	pong := ws.PingHandler()
	n := 0
	ws.SetPingHandler(func(data string) error {
		n++ // the handler runs on the reading goroutine: no lock needed
		if n == p.reached {
			close(p.enough)
		}
		if p.answer(n) {
			return pong(data)
		}
		select {
		case p.dropped <- time.Now():
		default:
		}
		return nil
	})
	for {
		_, data, err := ws.ReadMessage()
		if err != nil {
			return
		}
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(data, &req) != nil || req.ID == nil {
			continue
		}
		if err := ws.WriteMessage(gorilla.TextMessage, []byte(`{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{}}`)); err != nil {
			return
		}
	}
}

// TestKeepaliveKeepsQuietLivePeer: a live peer that sends nothing but
// answers every ping is kept across many ping rounds, for longer than
// PongTimeout, and a call still succeeds afterwards. If pongs went
// unnoticed the first ping would time out after PongTimeout and no second
// ping would ever go out, so counting the pings the peer receives tells a
// working keepalive from one that only has not fired yet.
func TestKeepaliveKeepsQuietLivePeer(t *testing.T) {
	const interval, timeout, rounds = 15 * time.Millisecond, 150 * time.Millisecond, 20
	peer := &pingCountingServer{answer: func(int) bool { return true }, reached: rounds, enough: make(chan struct{}), dropped: make(chan time.Time, 1)}
	url := rawServer(t, peer.serve)
	ctx := limit(t)
	start := time.Now()
	conn := dial(t, url, &websocket.Options{Keepalive: websocket.Keepalive{PingInterval: interval, PongTimeout: timeout}})
	type read struct {
		m   *mcp.Message
		err error
	}
	reads := make(chan read, 1)
	go func() {
		m, err := conn.Read(ctx)
		reads <- read{m, err}
	}()
	select {
	case <-peer.enough:
	case r := <-reads:
		t.Fatalf("the connection to a quiet peer that answers pings ended before %d pings: %v, %v", rounds, r.m, r.err)
	}
	if d := time.Since(start); d < timeout {
		t.Fatalf("%d pings took %v, less than PongTimeout %v: the test proves nothing", rounds, d, timeout)
	}
	if err := conn.Write(ctx, &mcp.Message{ID: mcp.Int64ID(1), Method: "ping", Params: json.RawMessage(`{}`)}); err != nil {
		t.Fatalf("Write after %d ping rounds: %v", rounds, err)
	}
	r := <-reads
	if r.err != nil || !r.m.IsResponse() || r.m.ID != mcp.Int64ID(1) || r.m.Error != nil {
		t.Fatalf("call after %d ping rounds: %v, %v; want the peer's answer", rounds, r.m, r.err)
	}
}

// TestKeepaliveFindsPeerThatStopsAnsweringPings: a peer that answered pings
// and then stops (it keeps its TCP connection and keeps reading, it just
// never pongs again) is declared dead within PongTimeout of the first ping
// it ignored, which is within PingInterval+PongTimeout of its last pong,
// with an error wrapping ErrConnectionLost.
func TestKeepaliveFindsPeerThatStopsAnsweringPings(t *testing.T) {
	const interval, timeout, answered = 30 * time.Millisecond, 200 * time.Millisecond, 3
	peer := &pingCountingServer{answer: func(n int) bool { return n <= answered }, reached: answered, enough: make(chan struct{}), dropped: make(chan time.Time, 1)}
	url := rawServer(t, peer.serve)
	conn := dial(t, url, &websocket.Options{Keepalive: websocket.Keepalive{PingInterval: interval, PongTimeout: timeout}})
	ctx, cancel := context.WithTimeout(limit(t), 10*time.Second)
	defer cancel()
	_, err := conn.Read(ctx)
	found := time.Now()
	if !errors.Is(err, transport.ErrConnectionLost) || !strings.Contains(err.Error(), "ping") {
		t.Fatalf("Read from a peer that stopped answering pings: %v, want an error wrapping ErrConnectionLost about the ping", err)
	}
	select {
	case <-peer.enough:
	default:
		t.Fatalf("the connection ended before the peer answered %d pings: %v", answered, err)
	}
	var first time.Time
	select {
	case first = <-peer.dropped:
	default:
		t.Fatalf("the connection ended without the peer dropping a ping: %v", err)
	}
	if d, bound := found.Sub(first), timeout+keepaliveMargin; d > bound {
		t.Errorf("the dead peer was found %v after the first unanswered ping, want within %v (PongTimeout+margin)", d, bound)
	}
}

// TestClientGoneEndsBackend: when the client disconnects, its backend is
// closed.
func TestClientGoneEndsBackend(t *testing.T) {
	closed := make(chan struct{})
	srv := mcptest.NewReference(mcptest.Options{})
	rb := &referenceBackend{srv: srv}
	url := startBridge(t, &websocket.Handler{Backend: func(ctx context.Context) (transport.Conn, error) {
		c, err := rb.backend(ctx)
		return &notifyClose{Conn: c, closed: closed}, err
	}})
	t.Cleanup(rb.wg.Wait)
	conn := dial(t, url, nil)
	s, err := transport.Connect(limit(t), conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	select {
	case <-closed:
	case <-limit(t).Done():
		t.Fatal("the backend was not closed after the client left")
	}
}

type notifyClose struct {
	transport.Conn
	once   sync.Once
	closed chan struct{}
}

func (n *notifyClose) Close() error {
	err := n.Conn.Close()
	n.once.Do(func() { close(n.closed) })
	return err
}

// TestBackendGoneClosesClient: when the backend ends, the client's
// connection ends too.
func TestBackendGoneClosesClient(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{})
	srv.FaultTool(mcptest.ToolEcho, mcptest.Fault{Die: true})
	url := referenceBridge(t, srv, &websocket.Handler{})
	ctx := limit(t)
	conn := dial(t, url, nil)
	s, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.ToolEcho, Arguments: json.RawMessage(`{"message":"x"}`)})
	if !errors.Is(err, transport.ErrConnectionLost) {
		t.Fatalf("call whose backend died: %v, want ErrConnectionLost", err)
	}
}

// TestHandshakeBoundedByContext: a server that accepts TCP but never
// answers the upgrade does not hold Dial past its context.
func TestHandshakeBoundedByContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := ln.Accept()
		if err != nil {
			return
		}
		io.Copy(io.Discard, c) // until the client gives up
		c.Close()
	}()
	defer func() { ln.Close(); wg.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = websocket.Dial(ctx, "ws://"+ln.Addr().String()+"/mcp", nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Dial to a mute server: %v, want DeadlineExceeded", err)
	}
}

// TestHeaderSent: Options.Header reaches the server (Authorization).
func TestHeaderSent(t *testing.T) {
	got := make(chan string, 1)
	ts := serveHTTP(t, func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
		up := gorilla.Upgrader{Subprotocols: []string{"mcp"}}
		if ws, err := up.Upgrade(w, r, nil); err == nil {
			ws.ReadMessage()
			ws.Close()
		}
	})
	conn, err := websocket.Dial(limit(t), "ws"+strings.TrimPrefix(ts.URL, "http"), &websocket.Options{Header: http.Header{"Authorization": {"Bearer s3cret"}}})
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if a := <-got; a != "Bearer s3cret" {
		t.Errorf("Authorization %q", a)
	}
}

// TestBadFrames: a binary frame or a text frame that is not JSON-RPC is one
// bad message; the connection goes on.
func TestBadFrames(t *testing.T) {
	url := rawServer(t, func(ws *gorilla.Conn) {
		ws.WriteMessage(gorilla.BinaryMessage, []byte{1, 2, 3})
		ws.WriteMessage(gorilla.TextMessage, []byte(`{"jsonrpc":"2.0","id":7,"result":{},"error":{"code":1,"message":"both"}}`))
		ws.WriteMessage(gorilla.TextMessage, []byte(`{"jsonrpc":"2.0","method":"notifications/x"}`))
		ws.ReadMessage()
	})
	conn := dial(t, url, nil)
	ctx := limit(t)
	var me *transport.MessageError
	if _, err := conn.Read(ctx); !errors.As(err, &me) {
		t.Fatalf("binary frame: %v, want a MessageError", err)
	}
	if _, err := conn.Read(ctx); !errors.As(err, &me) || me.ID.String() != "7" {
		t.Fatalf("bad message: %v, want a MessageError for id 7", err)
	}
	m, err := conn.Read(ctx)
	if err != nil || m.Method != "notifications/x" {
		t.Fatalf("then: %v %v, want the notification", m, err)
	}
}

// blockedWriter fills the connection to a peer that never reads until a
// Write blocks, and returns that Write's result on a channel once it ends.
func blockedWriter(t *testing.T, ctx context.Context, conn *websocket.Conn) <-chan error {
	t.Helper()
	big := &mcp.Message{Method: "notifications/x", Params: json.RawMessage(`{"pad":"` + strings.Repeat("x", 1<<20) + `"}`)}
	errc := make(chan error, 1)
	go func() {
		for {
			if err := conn.Write(ctx, big); err != nil {
				errc <- err
				return
			}
		}
	}()
	return errc
}

// TestCloseUnblocksWrite: a Write blocked on a peer that does not read is
// ended by Close, with ErrClosed, within the close bound.
func TestCloseUnblocksWrite(t *testing.T) {
	stop := make(chan struct{})
	url := rawServer(t, func(ws *gorilla.Conn) { <-stop })
	defer close(stop)
	conn, err := websocket.Dial(limit(t), url, &websocket.Options{Keepalive: websocket.Keepalive{PingInterval: -1, CloseTimeout: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	errc := blockedWriter(t, context.Background(), conn)
	// The writer is blocked once the socket buffers are full; Close must
	// end it whether or not it got that far.
	conn.Close()
	if err := <-errc; !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("blocked Write after Close: %v, want ErrClosed", err)
	}
}

// TestWriteContextEnds: a Write blocked on a peer that does not read gives
// up when its context ends; the connection is then unusable and says so.
func TestWriteContextEnds(t *testing.T) {
	stop := make(chan struct{})
	url := rawServer(t, func(ws *gorilla.Conn) { <-stop })
	defer close(stop)
	conn := dial(t, url, &websocket.Options{Keepalive: websocket.Keepalive{PingInterval: -1, CloseTimeout: 100 * time.Millisecond}})
	ctx, cancel := context.WithCancel(context.Background())
	errc := blockedWriter(t, ctx, conn)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Write whose context ended: %v, want context.Canceled", err)
	}
}

// TestClientCutEndsBackend: a client whose TCP connection is cut (no close
// frame) also has its backend closed.
func TestClientCutEndsBackend(t *testing.T) {
	closed := make(chan struct{})
	srv := mcptest.NewReference(mcptest.Options{})
	rb := &referenceBackend{srv: srv}
	url := startBridge(t, &websocket.Handler{Backend: func(ctx context.Context) (transport.Conn, error) {
		c, err := rb.backend(ctx)
		return &notifyClose{Conn: c, closed: closed}, err
	}})
	t.Cleanup(rb.wg.Wait)
	p := newCutProxy(t, strings.TrimSuffix(strings.TrimPrefix(url, "ws://"), "/mcp"))
	conn := dial(t, "ws://"+p.ln.Addr().String()+"/mcp", nil)
	s, err := transport.Connect(limit(t), conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p.cut()
	select {
	case <-closed:
	case <-limit(t).Done():
		t.Fatal("the backend was not closed after the client's connection was cut")
	}
}

// BenchmarkEchoOverBridge measures one tools/call round trip through a
// WebSocket client, the bridge and an in-process reference server.
func BenchmarkEchoOverBridge(b *testing.B) {
	srv := mcptest.NewReference(mcptest.Options{})
	rb := &referenceBackend{srv: srv}
	h := &websocket.Handler{Backend: rb.backend}
	ts := httptest.NewServer(h)
	defer func() { ts.Close(); h.Close(); rb.wg.Wait() }()
	ctx := context.Background()
	conn, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.URL, "http"), nil)
	if err != nil {
		b.Fatal(err)
	}
	s, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	params := &mcp.CallToolParams{Name: mcptest.ToolEcho, Arguments: json.RawMessage(`{"message":"hi"}`)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.CallTool(ctx, params); err != nil {
			b.Fatal(err)
		}
	}
}

// TestKeepaliveBackPressureIsNotDeath: a peer whose message waits for us
// to Read it is not declared dead while it waits, even though its pongs sit
// unread behind that message.
func TestKeepaliveBackPressureIsNotDeath(t *testing.T) {
	url := rawServer(t, func(ws *gorilla.Conn) {
		ws.WriteMessage(gorilla.TextMessage, []byte(`{"jsonrpc":"2.0","method":"notifications/first"}`))
		ws.WriteMessage(gorilla.TextMessage, []byte(`{"jsonrpc":"2.0","method":"notifications/second"}`))
		for { // answer pings until the client goes
			if _, _, err := ws.ReadMessage(); err != nil {
				return
			}
		}
	})
	const interval, timeout = 10 * time.Millisecond, 20 * time.Millisecond
	conn := dial(t, url, &websocket.Options{Keepalive: websocket.Keepalive{PingInterval: interval, PongTimeout: timeout}})
	// Not reading for many keepalive rounds is the point of this test.
	time.Sleep(20 * (interval + timeout))
	ctx := limit(t)
	for _, want := range []string{"notifications/first", "notifications/second"} {
		m, err := conn.Read(ctx)
		if err != nil || m.Method != want {
			t.Fatalf("Read after a pause: %v, %v; want %s", m, err, want)
		}
	}
}

// TestDialThroughProxy: Options.Proxy sends the handshake through an
// HTTP proxy (CONNECT), as HTTPS_PROXY would.
func TestDialThroughProxy(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{})
	target := referenceBridge(t, srv, &websocket.Handler{})
	var (
		wg        sync.WaitGroup
		connected = make(chan string, 1)
	)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
			return
		}
		up, err := net.Dial("tcp", r.Host)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		down, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			up.Close()
			return
		}
		connected <- r.Host
		wg.Add(2)
		down.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
		go func() { defer wg.Done(); io.Copy(up, down); up.Close() }()
		go func() { defer wg.Done(); io.Copy(down, up); down.Close() }()
	}))
	defer func() { proxy.Close(); wg.Wait() }()
	proxyURL, _ := neturl.Parse(proxy.URL)

	ctx := limit(t)
	conn, err := websocket.Dial(ctx, target, &websocket.Options{Proxy: http.ProxyURL(proxyURL)})
	if err != nil {
		t.Fatal(err)
	}
	s, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	if host := <-connected; !strings.Contains(target, host) {
		t.Errorf("the proxy was asked for %q, want the host of %s", host, target)
	}
}
