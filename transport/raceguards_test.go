package transport_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
)

// cancelRaceConn makes a call's context end at the very moment its
// response arrives. Writing the tools/call it was armed for cancels that
// call's context, has the server's end of the pipe deliver the request's
// answer, and returns only once the session's reader has handed the
// answer to the call: the call then finds its answer and its ended
// context ready at once. The request itself goes no further.
type cancelRaceConn struct {
	transport.Conn
	server transport.Conn // the far end of the Pipe, to answer from
	handed chan struct{}  // receives once the reader has dispatched the raced answer

	mu     sync.Mutex
	cancel context.CancelFunc // armed: ends the context of the next tools/call
	racing mcp.ID             // the request whose answer is on its way
	seen   bool               // the reader returned that answer
}

func (c *cancelRaceConn) arm(cancel context.CancelFunc) {
	c.mu.Lock()
	c.cancel = cancel
	c.mu.Unlock()
}

func (c *cancelRaceConn) Read(ctx context.Context) (*mcp.Message, error) {
	// The reader dispatches a response before it reads again: a Read
	// after the raced answer means the answer is in the call's channel.
	c.mu.Lock()
	if c.seen {
		c.seen = false
		c.handed <- struct{}{}
	}
	c.mu.Unlock()
	m, err := c.Conn.Read(ctx)
	if err == nil && m.IsResponse() {
		c.mu.Lock()
		c.seen = c.racing.IsValid() && m.ID == c.racing
		c.mu.Unlock()
	}
	return m, err
}

func (c *cancelRaceConn) Write(ctx context.Context, m *mcp.Message) error {
	c.mu.Lock()
	cancel := c.cancel
	if m.Method != mcp.MethodToolsCall {
		cancel = nil
	}
	if cancel != nil {
		c.cancel = nil
		c.racing = m.ID
	}
	c.mu.Unlock()
	if cancel == nil {
		return c.Conn.Write(ctx, m)
	}
	cancel()
	if err := c.server.Write(context.Background(), echoTool(m)); err != nil {
		return err
	}
	timer := time.NewTimer(fakeWait)
	defer timer.Stop()
	select {
	case <-c.handed:
	case <-timer.C:
		return errors.New("test: the reader never dispatched the raced answer")
	}
	c.mu.Lock()
	c.racing = mcp.ID{}
	c.mu.Unlock()
	return nil
}

// echoCall calls echoTool's tool with args and returns the text of its
// result, which is args as the server received them.
func echoCall(ctx context.Context, s *transport.Session, args string) (string, error) {
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(args)})
	if err != nil {
		return "", err
	}
	return res.Text(), nil
}

// quoted returns tool arguments, as JSON, holding note: a realistic
// payload with quotes, newlines and non-ASCII text.
func quoted(t *testing.T, note string) string {
	t.Helper()
	b, err := json.Marshal(map[string]string{"note": note})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAnswerRacingCancellationStaysWithItsCall pins the race in which a
// call's context ends just as its response arrives. The response then
// sits in the call's pooled channel; a call that returned the context's
// error without draining it handed the channel, answer and all, to the
// next call that took it from the pool, which returned another request's
// result as its own. The call must take the answer that won the race,
// and every later call must get its own result.
func TestAnswerRacingCancellationStaysWithItsCall(t *testing.T) {
	f, conn := startFake(t, legacy(mcp.Version20251125, echoTool))
	rc := &cancelRaceConn{Conn: conn, server: f.conn, handed: make(chan struct{}, 1)}
	s := connect(t, rc, &transport.Options{ProtocolVersion: mcp.Version20251125})
	outer, cancelOuter := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelOuter()
	for i := range 200 {
		raced := quoted(t, fmt.Sprintf("raced %d: \"first\"\nnaïve café ☕", i))
		ctx, cancel := context.WithCancel(outer)
		rc.arm(cancel)
		got, err := echoCall(ctx, s, raced)
		cancel()
		// Both were ready; a call that returns at all with its answer
		// there must return the answer (or, at worst, the context's
		// error, having drained the answer), never a stale one.
		if err == nil && got != raced {
			t.Fatalf("round %d: the raced call got %q, want its own %q", i, got, raced)
		}
		own := quoted(t, fmt.Sprintf("second %d: «deuxième»\n\"quoted\"", i))
		got, err = echoCall(outer, s, own)
		if err != nil {
			t.Fatalf("round %d: the next call: %v", i, err)
		}
		if got != own {
			t.Fatalf("round %d: the next call got %q, another request's result; want its own %q", i, got, own)
		}
	}
}

// TestServerCancelDoesNotFailLegacyCall pins that on the legacy wires
// the server's notifications/cancelled names a request of the server's
// own: our ids and the server's are separate spaces that share numbers.
// A server that cancels its request 2 (say, a sampling request) while our
// call 2 is pending must not fail our call; the call's answer, which
// follows, is its result.
func TestServerCancelDoesNotFailLegacyCall(t *testing.T) {
	base := legacy(mcp.Version20251125, echoTool)
	_, conn := startFake(t, func(f *fakeServer, m *mcp.Message) *mcp.Message {
		if m.Method != mcp.MethodToolsCall {
			return base(f, m)
		}
		params, err := json.Marshal(mcp.CancelledParams{RequestID: m.ID, Reason: "the user closed the «sampling» dialog"})
		if err != nil {
			panic(err)
		}
		// The server's cancellation of its own request with the same
		// number, then the answer to ours, in that order.
		if err := f.conn.Write(context.Background(), &mcp.Message{Method: mcp.NotificationCancelled, Params: params}); err != nil {
			return nil
		}
		return echoTool(m)
	})
	s := connect(t, conn, &transport.Options{ProtocolVersion: mcp.Version20251125})
	ctx, cancel := context.WithTimeout(context.Background(), fakeWait)
	defer cancel()
	args := quoted(t, "line one\nline \"two\" — ünïcode")
	got, err := echoCall(ctx, s, args)
	if err != nil {
		t.Fatalf("the server's cancellation of its own request failed our call with the same number: %v", err)
	}
	if got != args {
		t.Fatalf("result %q, want %q", got, args)
	}
}

// TestLostRequestIsResentAFewTimesOnly pins the bound on re-sending a
// request the wire keeps reporting lost (ErrRequestLost): it is re-sent
// at most twice, as documented, and the call then fails with that error.
// Unbounded, a broken wire made the call send the request forever.
func TestLostRequestIsResentAFewTimesOnly(t *testing.T) {
	_, conn := startFake(t, legacy(mcp.Version20251125, echoTool))
	ctx, cancel := context.WithTimeout(context.Background(), fakeWait)
	defer cancel()
	writes := 0
	fc := &faultConn{Conn: conn}
	fc.onWrite = func(m *mcp.Message) error {
		if m.Method != mcp.MethodToolsCall {
			return nil
		}
		writes++
		if writes > 20 {
			cancel() // long past the bound: stop a call that will not
		}
		return fmt.Errorf("the response stream broke before the response: %w", transport.ErrRequestLost)
	}
	s := connect(t, fc, &transport.Options{ProtocolVersion: mcp.Version20251125})
	_, err := echoCall(ctx, s, quoted(t, "lost \"in transit\"\n∞"))
	if !errors.Is(err, transport.ErrRequestLost) {
		t.Fatalf("err = %v, want one wrapping ErrRequestLost", err)
	}
	fc.mu.Lock()
	n := writes
	fc.mu.Unlock()
	if n != 3 {
		t.Fatalf("the lost request was written %d times, want 3 (sent, then re-sent twice)", n)
	}
}

// TestCallTimeoutDoesNotShortenCallersDeadline pins Options.CallTimeout's
// documented scope: it bounds calls whose context has no deadline. A
// caller that gave its call a longer deadline of its own gets that long;
// the engine's default must not cut the call short.
func TestCallTimeoutDoesNotShortenCallersDeadline(t *testing.T) {
	const callTimeout = 20 * time.Millisecond
	srv := mcptest.New(mcptest.Options{})
	if err := srv.AddTool(mcp.Tool{Name: "slow"}, func(_ context.Context, req *mcptest.CallRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("done: " + string(req.Arguments))}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	// The server answers well after CallTimeout, well within the caller's
	// own deadline.
	srv.FaultTool("slow", mcptest.Fault{Delay: 25 * callTimeout})
	sctx, scancel := context.WithCancel(context.Background())
	conn, wait := srv.Pipe(sctx)
	s := connect(t, conn, &transport.Options{CallTimeout: callTimeout})
	t.Cleanup(func() { s.Close(); scancel(); wait() })

	ctx, cancel := context.WithTimeout(context.Background(), fakeWait)
	defer cancel()
	args := quoted(t, "take your time — «lent»\n")
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("CallTimeout cut short a call with a longer deadline of its own: %v", err)
	}
	if got, want := res.Text(), "done: "+args; got != want {
		t.Fatalf("result %q, want %q", got, want)
	}
}

// TestLegacyExpiryWithCallsInFlightRenewsOnce pins the renewal of a
// legacy session that several calls in flight see expire at once: the
// first to notice runs initialize, the others find the session already
// renewed and re-send on it. Each renewing again counted every one as a
// session forgotten in a row, passed maxRenewals and ended the session
// with ErrSessionExpired. Here 8 calls are in flight when the server
// forgets the session; the server answers the re-sent calls once all 8
// are back, so a renewal per call cannot be hidden by one succeeding in
// between.
func TestLegacyExpiryWithCallsInFlightRenewsOnce(t *testing.T) {
	const inFlight = 8
	var (
		mu      sync.Mutex
		held    []*mcp.Message
		expired = map[mcp.ID]bool{}
		phase   = 0 // 0: holding the first sends; 1: holding the re-sends
	)
	base := legacy(mcp.Version20251125, echoTool)
	f, conn := startFake(t, func(f *fakeServer, m *mcp.Message) *mcp.Message {
		if m.Method != mcp.MethodToolsCall {
			return base(f, m)
		}
		mu.Lock()
		defer mu.Unlock()
		held = append(held, m)
		if len(held) < inFlight {
			return nil
		}
		batch := held
		held = nil
		for _, h := range batch {
			resp := echoTool(h)
			if phase == 0 {
				// The wire turns these into the session's expiry
				// (the HTTP 404 of a legacy session), below.
				expired[h.ID] = true
			}
			if err := f.conn.Write(context.Background(), resp); err != nil {
				return nil
			}
		}
		phase++
		return nil
	})
	fc := &faultConn{Conn: conn}
	fc.onRead = func(m *mcp.Message) error {
		mu.Lock()
		defer mu.Unlock()
		if m.IsResponse() && expired[m.ID] {
			return &transport.MessageError{ID: m.ID, Err: fmt.Errorf("HTTP 404: session not found: %w", transport.ErrSessionExpired)}
		}
		return nil
	}
	s := connect(t, fc, &transport.Options{ProtocolVersion: mcp.Version20251125})
	ctx, cancel := context.WithTimeout(context.Background(), fakeWait)
	defer cancel()

	type outcome struct {
		args, got string
		err       error
	}
	out := make(chan outcome, inFlight)
	for i := range inFlight {
		args := quoted(t, fmt.Sprintf("call %d of \"%d\"\n— ñ", i, inFlight))
		go func() {
			got, err := echoCall(ctx, s, args)
			out <- outcome{args, got, err}
		}()
	}
	for range inFlight {
		o := within(t, out, "a call to return")
		if o.err != nil {
			t.Errorf("call %s: %v", o.args, o.err)
		} else if o.got != o.args {
			t.Errorf("call %s got %q", o.args, o.got)
		}
	}
	if n := len(f.messages(mcp.MethodInitialize)); n != 2 {
		t.Errorf("%d initialize requests, want 2: the handshake and one renewal", n)
	}
	if err := s.Err(); err != nil {
		t.Errorf("the session ended: %v", err)
	}
}
