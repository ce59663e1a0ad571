package transporttest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
)

// The fault matrix: one table of misbehaving servers and broken wires,
// each row with the outcome tako promises, run against any Transport.
// See RunFaults.

// The rows of the fault matrix, by name (the subtest names of RunFaults).
const (
	FaultServerKilled       = "ServerKilled"
	FaultConnectionCut      = "ConnectionCut"
	FaultSessionExpired     = "SessionExpired"
	FaultJunk               = "Junk"
	FaultUndecodable        = "Undecodable"
	FaultOversized          = "Oversized"
	FaultOversizedMany      = "OversizedMany"
	FaultSilentPeer         = "SilentPeer"
	FaultSlowTrickle        = "SlowTrickle"
	FaultWrongID            = "WrongID"
	FaultDuplicate          = "DuplicateResponse"
	FaultAnswerAfterCancel  = "AnswerAfterCancel"
	FaultNotificationFlood  = "NotificationFlood"
	FaultServerRequestFlood = "ServerRequestFlood"
)

// Bounds the matrix promises. They are what a program may rely on, not
// what the kit needs to avoid flakiness: each is measured from the moment
// the fault happens.
const (
	// LostBound: a server killed or a connection cut fails the calls
	// pending on it within this time.
	LostBound = time.Second
	// FaultMessageSize is the message cap the matrix dials with: results
	// over it must fail their call with transport.ErrMessageTooLarge.
	FaultMessageSize = 1 << 20
	// FloodGoroutines bounds the goroutines a flood of notifications or
	// server requests (thousands of them) may add while it lasts: the
	// bound is on the client's queues and workers, not on the flood.
	FloodGoroutines = 100
	// FaultCloseTimeout is the transport.Options.CloseTimeout the matrix
	// asks for; Close must return within it (plus LostBound of slack).
	FaultCloseTimeout = 2 * time.Second
)

// Fault is what one row of the matrix asks dial for.
type Fault struct {
	// Row is the row's name (one of the Fault* constants).
	Row string
	// Tool and Server: the server must apply Server to tools/call
	// requests for the reference tool Tool, as mcptest's FaultTool does.
	// Tool is "" when the row needs no server fault. A server in the same
	// process calls srv.FaultTool(f.Tool, f.Server); one in another
	// process gets them passed (as JSON, say) and does the same.
	//
	// Server.Trickle needs a byte stream (mcptest.RawWriter). A wire
	// whose server end writes messages (an HTTP or a gRPC server) trickles
	// below them instead: every byte the server sends after the dial, at
	// its net.Conn, in pieces of a few bytes with Server.Trickle between
	// them. Server.Junk, Undecodable and Cut likewise need the server end
	// to implement mcptest.RawWriter; a wire that cannot carry raw bytes
	// declares those rows not applicable.
	Tool   string
	Server mcptest.Fault
	// MaxMessageSize is the cap the Transport must apply to incoming
	// messages (the transport's own MaxMessageSize option).
	MaxMessageSize int
	// Options are the Session options the row needs: Handlers,
	// CallTimeout, CloseTimeout, MaxQueuedNotifications,
	// MaxServerRequests. A Transport that is not a Session maps what it
	// has (the gRPC client: Handlers, CallTimeout) and ignores the rest.
	Options transport.Options
}

// FaultTarget is what dial returns: the Transport under test and the
// hooks the rows need to break its wire from outside.
type FaultTarget struct {
	// Transport is connected to a reference server (mcptest.NewReference)
	// that applies the row's Fault.
	Transport transport.Transport
	// Server is the reference server, when it runs in this process. The
	// kit then sees a call arrive there instead of waiting for its
	// progress, and counts handshakes.
	Server *mcptest.Server
	// Kill ends the server as a crash would: the process killed, or the
	// listener and every connection closed at once. Required unless the
	// ServerKilled row is declared not applicable.
	Kill func()
	// Cut cuts the connection mid-stream while the server lives on (a
	// TCP connection closed under both ends, no close frame). The
	// ConnectionCut row also asks the server for its Cut fault (half an
	// answer, then the connection closed: a byte stream's way to be cut);
	// with a Cut hook, the hook cuts first. A wire whose server cannot
	// write half a message (a message Conn) needs the hook.
	Cut func()
	// Expire makes the server forget the session (HTTP 404 on the next
	// request). Required unless SessionExpired is declared not
	// applicable.
	Expire func()
}

// FaultNotApplicable declares that a row of the fault matrix does not
// apply to the wire under test, and why (a typed wire has no bytes to
// garble; stdio has no sessions to expire). RunFaults skips the row with
// that reason. It is for what the wire cannot express, not for a missing
// test dependency.
func FaultNotApplicable(row, reason string) Option {
	return func(c *config) {
		if c.faultNA == nil {
			c.faultNA = map[string]string{}
		}
		c.faultNA[row] = reason
	}
}

// FaultKnownDefect declares that a row fails on this wire because of a
// known, tracked defect. RunFaults runs the row anyway: if it fails, the
// row is skipped with reason (so that the defect stays visible); if it
// passes, the row passes and says that the declaration can go.
func FaultKnownDefect(row, reason string) Option {
	return func(c *config) {
		if c.faultDefect == nil {
			c.faultDefect = map[string]string{}
		}
		c.faultDefect[row] = reason
	}
}

// FaultResends declares that the wire re-sends a request whose answer
// was cut off (the 2026-07-28 Streamable HTTP wire, checklist §4C.1): on
// it, the ConnectionCut row expects the call to be answered after the
// cut rather than to fail.
func FaultResends() Option {
	return func(c *config) { c.faultResends = true }
}

// FaultTooLargeEndsConnection declares that on this wire a message over
// the cap ends the connection (a WebSocket read limit), with the reason:
// the Oversized rows then expect later calls to fail with
// transport.ErrConnectionLost instead of going on.
func FaultTooLargeEndsConnection(reason string) Option {
	return func(c *config) { c.faultTooLargeFatal = reason }
}

// RunFaults runs the fault matrix against Transports returned by dial,
// one fresh Transport per row. dial gets the row's Fault, must connect a
// Transport (with f.Options and f.MaxMessageSize applied) to a reference
// server that applies f.Server to f.Tool, and should register its cleanup
// with t.Cleanup; the kit closes the Transport first.
//
// The rows and what each promises:
//
//   - ServerKilled: Kill during a call: the call fails with an error
//     wrapping transport.ErrConnectionLost within LostBound, and so does
//     (or with ErrClosed) the next call.
//   - ConnectionCut: the connection cut while a call's answer is on its
//     way: the call fails with ErrConnectionLost within LostBound; on a
//     wire that re-sends (FaultResends), it is answered instead.
//   - SessionExpired: the server forgets the session between two calls:
//     the second call succeeds on a new session (a second handshake).
//   - Junk: bytes that are not JSON-RPC before each answer: every call is
//     answered, the connection goes on.
//   - Undecodable: a response with the request's id that cannot be
//     decoded ("jsonrpc":"1.0"): that call fails at once (within
//     LostBound) with an error wrapping transport.ErrProtocol, and the
//     next call is answered (DESIGN.md rule 7).
//   - Oversized: a result just over the cap (FaultMessageSize): the call fails
//     with transport.ErrMessageTooLarge, and the connection goes on
//     (unless FaultTooLargeEndsConnection).
//   - OversizedMany: eight such results at once: each call fails with
//     ErrMessageTooLarge (or ErrConnectionLost, once the connection ended
//     on a wire that ends it), and no goroutine is left from them.
//   - SilentPeer: a request never answered: the call ends with
//     context.DeadlineExceeded when its context does, and when
//     Options.CallTimeout does; the connection goes on.
//   - SlowTrickle: every answer arrives a few bytes at a time: every call,
//     concurrent ones too, gets its own answer intact.
//   - WrongID: an answer under an id nobody asked for: the call is not
//     answered (its context ends it), nobody else gets it, and with the
//     right answer after it the call gets that one.
//   - DuplicateResponse: every answer sent twice: each call gets its own
//     answer, concurrent calls too; the copies are dropped.
//   - AnswerAfterCancel: a server that answers a call after the client
//     cancelled it: the call returns context.Canceled within LostBound,
//     and the late answer reaches no other call.
//   - NotificationFlood: 3000 notifications before an answer, to a
//     subscriber that blocks: the answer arrives, at most
//     Options.MaxQueuedNotifications wait for the subscriber, the rest
//     are dropped and counted (Session.DroppedNotifications, when the
//     Transport has it), and goroutines grow by at most FloodGoroutines.
//   - ServerRequestFlood: 2000 pings from the server before an answer:
//     the answer arrives, goroutines grow by at most FloodGoroutines
//     (Options.MaxServerRequests answering at once).
//
// Every row also checks that Close returns within FaultCloseTimeout (plus
// LostBound); a goleak.VerifyTestMain in the calling package checks that
// nothing is left running.
func RunFaults(t *testing.T, dial func(t *testing.T, f Fault) FaultTarget, opts ...Option) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	m := &matrix{cfg: cfg, dial: dial}
	for _, r := range []struct {
		name string
		run  func(t *testing.T) error
	}{
		{FaultServerKilled, m.serverKilled},
		{FaultConnectionCut, m.connectionCut},
		{FaultSessionExpired, m.sessionExpired},
		{FaultJunk, m.junk},
		{FaultUndecodable, m.undecodable},
		{FaultOversized, m.oversized},
		{FaultOversizedMany, m.oversizedMany},
		{FaultSilentPeer, m.silentPeer},
		{FaultSlowTrickle, m.slowTrickle},
		{FaultWrongID, m.wrongID},
		{FaultDuplicate, m.duplicate},
		{FaultAnswerAfterCancel, m.answerAfterCancel},
		{FaultNotificationFlood, m.notificationFlood},
		{FaultServerRequestFlood, m.serverRequestFlood},
	} {
		t.Run(r.name, func(t *testing.T) {
			if reason, ok := cfg.faultNA[r.name]; ok {
				t.Skip("does not apply to this wire: " + reason)
			}
			err := r.run(t)
			defect, known := cfg.faultDefect[r.name]
			switch {
			case err != nil && known:
				t.Logf("row failed: %v", err)
				t.Skip("known defect: " + defect)
			case err != nil:
				t.Fatal(err)
			case known:
				t.Logf("declared a known defect (%s), but the row passes: the declaration can go", defect)
			}
		})
	}
}

type matrix struct {
	cfg  config
	dial func(t *testing.T, f Fault) FaultTarget
	// sleeps numbers the sleep calls, so that each can be found among the
	// server's records by its arguments.
	sleeps atomic.Int64
}

// open dials a row's Transport and registers the check that Close is
// bounded. It returns the target with its Transport.
func (m *matrix) open(t *testing.T, f Fault) FaultTarget {
	t.Helper()
	f.Row = t.Name()[strings.LastIndexByte(t.Name(), '/')+1:]
	if f.MaxMessageSize == 0 {
		f.MaxMessageSize = FaultMessageSize
	}
	if f.Options.CloseTimeout == 0 {
		f.Options.CloseTimeout = FaultCloseTimeout
	}
	ft := m.dial(t, f)
	if ft.Transport == nil {
		t.Fatal("dial returned no Transport")
	}
	t.Cleanup(func() {
		start := time.Now()
		done := make(chan struct{})
		go func() { defer close(done); ft.Transport.Close() }()
		select {
		case <-done:
			if d := time.Since(start); d > FaultCloseTimeout+LostBound {
				t.Errorf("Close took %v, over its CloseTimeout %v", d, FaultCloseTimeout)
			}
		case <-time.After(Timeout):
			t.Errorf("Close did not return within %v", Timeout)
		}
	})
	return ft
}

func bounded(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

func echo(ctx context.Context, tr transport.Transport, msg string) error {
	res, err := callTool(ctx, tr, mcptest.ToolEcho, map[string]any{"message": msg})
	if err != nil {
		return fmt.Errorf("echo %q: %w", msg, err)
	}
	if res.IsError || res.Text() != msg {
		return fmt.Errorf("echo %q answered %q (isError %v): answers crossed or were mangled", msg, res.Text(), res.IsError)
	}
	return nil
}

// echoOK is an echo that must succeed within Timeout.
func echoOK(tr transport.Transport, msg string) error {
	ctx, cancel := bounded(Timeout)
	defer cancel()
	return echo(ctx, tr, msg)
}

// outcome is how a call ended, and when.
type outcome struct {
	res *mcp.CallToolResult
	err error
	at  time.Time
}

// sleepCall is a sleep call on a goroutine of its own, known to have
// reached the server when startSleep returns.
type sleepCall struct {
	done <-chan outcome
}

func (m *matrix) startSleep(t *testing.T, ctx context.Context, ft FaultTarget, ms int64) (sleepCall, error) {
	ms += m.sleeps.Add(1) // unique among the server's records
	started := make(chan struct{})
	var once sync.Once
	pctx := transport.WithProgress(ctx, func(mcp.ProgressParams) { once.Do(func() { close(started) }) })
	done := make(chan outcome, 1)
	go func() {
		res, err := callTool(pctx, ft.Transport, mcptest.ToolSleep, map[string]any{"ms": ms})
		done <- outcome{res, err, time.Now()}
	}()
	c := sleepCall{done: done}
	wait, cancel := bounded(Timeout)
	defer cancel()
	if srv := ft.Server; srv != nil {
		_, err := srv.Wait(wait, func(r mcptest.Record) bool {
			var a struct {
				Name      string `json:"name"`
				Arguments struct {
					MS int64 `json:"ms"`
				} `json:"arguments"`
			}
			return r.Msg.Method == mcp.MethodToolsCall && r.Params(&a) == nil && a.Name == mcptest.ToolSleep && a.Arguments.MS == ms
		})
		if err != nil {
			return c, fmt.Errorf("the server never saw the sleep call: %w", err)
		}
		return c, nil
	}
	select {
	case <-started:
		return c, nil
	case o := <-done:
		return c, fmt.Errorf("the sleep call ended before it started: %v", o.err)
	case <-wait.Done():
		return c, errors.New("the sleep call never reported progress (give FaultTarget.Server when the Transport carries no progress)")
	}
}

// await waits for a call's outcome, failing past Timeout.
func await(c sleepCall) (outcome, error) {
	select {
	case o := <-c.done:
		return o, nil
	case <-time.After(Timeout):
		return outcome{}, fmt.Errorf("the call did not return within %v", Timeout)
	}
}

func within(what string, d, bound time.Duration) error {
	if d > bound {
		return fmt.Errorf("%s took %v, over the %v promised", what, d.Round(time.Millisecond), bound)
	}
	return nil
}

func lost(err error) bool {
	return errors.Is(err, transport.ErrConnectionLost)
}

func (m *matrix) serverKilled(t *testing.T) error {
	ft := m.open(t, Fault{})
	if ft.Kill == nil {
		return errors.New("the setup gives no Kill; declare the row not applicable if the wire has no server to kill")
	}
	c, err := m.startSleep(t, context.Background(), ft, 3_600_000)
	if err != nil {
		return err
	}
	killed := time.Now()
	ft.Kill()
	o, err := await(c)
	if err != nil {
		return err
	}
	if !lost(o.err) {
		return fmt.Errorf("a call pending when the server was killed returned %v, want an error wrapping ErrConnectionLost", o.err)
	}
	if err := within("failing the pending call", o.at.Sub(killed), LostBound); err != nil {
		return err
	}
	start := time.Now()
	ctx, cancel := bounded(Timeout)
	defer cancel()
	err = echo(ctx, ft.Transport, "after the kill")
	if !lost(err) && !errors.Is(err, transport.ErrClosed) {
		return fmt.Errorf("a call after the kill returned %v, want an error wrapping ErrConnectionLost or ErrClosed", err)
	}
	return within("a call after the kill", time.Since(start), LostBound)
}

func (m *matrix) connectionCut(t *testing.T) error {
	// The sleep is short, so that a wire that re-sends the call gets its
	// answer soon; a cut that did not happen shows as a success.
	const ms = 500
	ft := m.open(t, Fault{Tool: mcptest.ToolSleep, Server: mcptest.Fault{Cut: true, Times: 1}})
	c, err := m.startSleep(t, context.Background(), ft, ms)
	if err != nil {
		return err
	}
	cut, bound := time.Now(), LostBound
	if ft.Cut != nil {
		ft.Cut()
	} else {
		// The server cuts its own answer, once the sleep is over.
		bound += ms * time.Millisecond
	}
	o, err := await(c)
	if err != nil {
		return err
	}
	if m.cfg.faultResends {
		if o.err != nil || o.res.Text() != "slept" {
			return fmt.Errorf("on a wire that re-sends, the cut call returned %v, %v; want it answered", o.res, o.err)
		}
		return echoOK(ft.Transport, "after the cut")
	}
	if !lost(o.err) {
		return fmt.Errorf("a call whose stream was cut returned %v, %v; want an error wrapping ErrConnectionLost", o.res, o.err)
	}
	return within("failing the cut call", o.at.Sub(cut), bound)
}

func (m *matrix) sessionExpired(t *testing.T) error {
	ft := m.open(t, Fault{})
	if ft.Expire == nil {
		return errors.New("the setup gives no Expire; declare the row not applicable if the wire has no sessions")
	}
	if err := echoOK(ft.Transport, "before"); err != nil {
		return err
	}
	inits := func() int {
		n := 0
		if ft.Server != nil {
			for _, r := range ft.Server.Received() {
				if r.Msg.Method == mcp.MethodInitialize {
					n++
				}
			}
		}
		return n
	}
	before := inits()
	ft.Expire()
	if err := echoOK(ft.Transport, "after the session expired"); err != nil {
		return fmt.Errorf("the session was not renewed: %w", err)
	}
	if ft.Server != nil && inits() <= before {
		return errors.New("the call after the expiry succeeded without a new handshake")
	}
	return echoOK(ft.Transport, "on the new session")
}

func (m *matrix) junk(t *testing.T) error {
	ft := m.open(t, Fault{Tool: mcptest.ToolEcho, Server: mcptest.Fault{Junk: true}})
	for i := range 3 {
		if err := echoOK(ft.Transport, fmt.Sprintf("after junk %d", i)); err != nil {
			return err
		}
	}
	return nil
}

func (m *matrix) undecodable(t *testing.T) error {
	ft := m.open(t, Fault{Tool: mcptest.ToolEcho, Server: mcptest.Fault{Undecodable: true, Times: 1}})
	start := time.Now()
	ctx, cancel := bounded(2 * LostBound)
	defer cancel()
	err := echo(ctx, ft.Transport, "garbled")
	if !errors.Is(err, transport.ErrProtocol) {
		return fmt.Errorf("a call answered with an undecodable response returned %v after %v, want an error wrapping ErrProtocol at once", err, time.Since(start).Round(time.Millisecond))
	}
	if err := within("failing the call", time.Since(start), LostBound); err != nil {
		return err
	}
	return echoOK(ft.Transport, "after the garbled answer")
}

func (m *matrix) tooLargeAfter(ft FaultTarget) error {
	if m.cfg.faultTooLargeFatal == "" {
		return echoOK(ft.Transport, "after the oversized answer")
	}
	ctx, cancel := bounded(Timeout)
	defer cancel()
	if err := echo(ctx, ft.Transport, "after"); !lost(err) && !errors.Is(err, transport.ErrClosed) {
		return fmt.Errorf("the wire ends the connection on an oversized message (%s), but a later call returned %v", m.cfg.faultTooLargeFatal, err)
	}
	return nil
}

// oversize is the size of the Oversized rows' results: just over the cap,
// so that reading up to it is all the work.
const oversize = FaultMessageSize + 64<<10

func (m *matrix) oversized(t *testing.T) error {
	ft := m.open(t, Fault{Tool: mcptest.ToolBig, Server: mcptest.Fault{Huge: oversize}})
	ctx, cancel := bounded(Timeout)
	defer cancel()
	_, err := callTool(ctx, ft.Transport, mcptest.ToolBig, map[string]any{"size": 1})
	if !errors.Is(err, transport.ErrMessageTooLarge) {
		return fmt.Errorf("a result of %d bytes under a cap of %d returned %v, want an error wrapping ErrMessageTooLarge", oversize, FaultMessageSize, err)
	}
	return m.tooLargeAfter(ft)
}

func (m *matrix) oversizedMany(t *testing.T) error {
	ft := m.open(t, Fault{Tool: mcptest.ToolBig, Server: mcptest.Fault{Huge: oversize}})
	if err := echoOK(ft.Transport, "warm"); err != nil {
		return err
	}
	base := runtime.NumGoroutine()
	const n = 8
	errs := make(chan error, n)
	ctx, cancel := bounded(Timeout)
	defer cancel()
	for range n {
		go func() {
			_, err := callTool(ctx, ft.Transport, mcptest.ToolBig, map[string]any{"size": 1})
			errs <- err
		}()
	}
	for range n {
		err := <-errs
		if errors.Is(err, transport.ErrMessageTooLarge) || (m.cfg.faultTooLargeFatal != "" && lost(err)) {
			continue
		}
		return fmt.Errorf("one of %d oversized results at once returned %v, want an error wrapping ErrMessageTooLarge", n, err)
	}
	if err := m.tooLargeAfter(ft); err != nil {
		return err
	}
	return settle(base, 8)
}

// settle waits for the goroutine count to come back to within slack of
// base: what a fault started must end with it.
func settle(base, slack int) error {
	deadline := time.Now().Add(Timeout)
	for {
		n := runtime.NumGoroutine()
		if n <= base+slack {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d goroutines, %d before the fault: the fault left goroutines behind", n, base)
		}
		time.Sleep(10 * time.Millisecond) // polling a count; nothing to wait on
	}
}

func (m *matrix) silentPeer(t *testing.T) error {
	const callTimeout = 300 * time.Millisecond
	ft := m.open(t, Fault{Tool: mcptest.ToolEcho, Server: mcptest.Fault{Drop: true, Times: 2}, Options: transport.Options{CallTimeout: callTimeout}})
	// Bounded by its context.
	ctx, cancel := bounded(200 * time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := echo(ctx, ft.Transport, "unheard"); !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("a call the server never answers returned %v, want an error wrapping context.DeadlineExceeded", err)
	}
	if err := within("ending the call at its deadline", time.Since(start), 200*time.Millisecond+LostBound); err != nil {
		return err
	}
	// Bounded by CallTimeout when its context has no deadline.
	start = time.Now()
	if err := echo(context.Background(), ft.Transport, "unheard again"); !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("a call without a deadline under CallTimeout %v returned %v, want an error wrapping context.DeadlineExceeded", callTimeout, err)
	}
	if err := within("ending the call at CallTimeout", time.Since(start), callTimeout+LostBound); err != nil {
		return err
	}
	return echoOK(ft.Transport, "heard")
}

func (m *matrix) slowTrickle(t *testing.T) error {
	ft := m.open(t, Fault{Tool: mcptest.ToolEcho, Server: mcptest.Fault{Trickle: time.Millisecond}})
	if err := echoOK(ft.Transport, strings.Repeat("trickled ", 20)); err != nil {
		return err
	}
	const n = 4
	errs := make(chan error, n)
	for i := range n {
		go func() { errs <- echoOK(ft.Transport, fmt.Sprintf("trickle %d %s", i, strings.Repeat("é", 30))) }()
	}
	for range n {
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}

func (m *matrix) wrongID(t *testing.T) error {
	ft := m.open(t, Fault{Tool: mcptest.ToolEcho, Server: mcptest.Fault{WrongID: true, Times: 1}})
	ctx, cancel := bounded(300 * time.Millisecond)
	defer cancel()
	if err := echo(ctx, ft.Transport, "misaddressed"); !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("a call answered only under a wrong id returned %v, want its context to end it (context.DeadlineExceeded)", err)
	}
	if err := echoOK(ft.Transport, "addressed"); err != nil {
		return err
	}
	if ft.Server == nil {
		return nil
	}
	// The wrong id first, then the right one: the call gets the right one.
	ft.Server.FaultTool(mcptest.ToolEcho, mcptest.Fault{WrongID: true, AlsoRight: true, Times: 1})
	return echoOK(ft.Transport, "wrong, then right")
}

func (m *matrix) duplicate(t *testing.T) error {
	ft := m.open(t, Fault{Tool: mcptest.ToolEcho, Server: mcptest.Fault{Twice: true}})
	for i := range 10 {
		if err := echoOK(ft.Transport, fmt.Sprintf("once %d", i)); err != nil {
			return err
		}
	}
	const n = 16
	errs := make(chan error, n)
	for i := range n {
		go func() { errs <- echoOK(ft.Transport, fmt.Sprintf("concurrent %d", i)) }()
	}
	for range n {
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}

func (m *matrix) answerAfterCancel(t *testing.T) error {
	// The sleep is answered ("slept") after the client gave up on it; an
	// echo held back past that moment must still get its own answer.
	ft := m.open(t, Fault{Tool: mcptest.ToolSleep, Server: mcptest.Fault{IgnoreCancel: true, Times: 1}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := m.startSleep(t, ctx, ft, 300)
	if err != nil {
		return err
	}
	cancelled := time.Now()
	cancel()
	o, err := await(c)
	if err != nil {
		return err
	}
	if !errors.Is(o.err, context.Canceled) {
		return fmt.Errorf("a cancelled call returned %v, %v; want an error wrapping context.Canceled", o.res, o.err)
	}
	if err := within("returning the cancelled call", o.at.Sub(cancelled), LostBound); err != nil {
		return err
	}
	// Echo calls until well after the late answer was due (the sleep
	// lasts about 300 ms).
	until := time.Now().Add(time.Second)
	for i := 0; time.Now().Before(until); i++ {
		if err := echoOK(ft.Transport, fmt.Sprintf("mine %d", i)); err != nil {
			return err
		}
	}
	return nil
}

// droppedCounter is the part of a Transport (a Session) that counts the
// notifications it dropped at a full queue.
type droppedCounter interface{ DroppedNotifications() int64 }

// growth runs fn and reports by how many goroutines the count, sampled
// every millisecond while fn ran, rose above what it was before.
func growth(fn func() error) (grew int, err error) {
	base := runtime.NumGoroutine()
	stop := make(chan struct{})
	out := make(chan int, 1)
	go func() {
		high := 0
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if n := runtime.NumGoroutine(); n > high {
				high = n
			}
			select {
			case <-stop:
				out <- high
				return
			case <-tick.C:
			}
		}
	}()
	err = fn()
	close(stop)
	return <-out - base, err
}

func (m *matrix) notificationFlood(t *testing.T) error {
	const flood, queue = 3000, 64
	ft := m.open(t, Fault{Tool: mcptest.ToolEcho, Server: mcptest.Fault{Notify: flood, Times: 1}, Options: transport.Options{MaxQueuedNotifications: queue}})
	release := make(chan struct{})
	var delivered atomic.Int64
	unsubscribe := ft.Transport.Subscribe(func(n mcp.Notification) {
		if n.Method == mcp.NotificationMessage {
			delivered.Add(1)
			<-release // the slow subscriber: stuck until the answer came
		}
	})
	defer unsubscribe()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	if err := echoOK(ft.Transport, "warm"); err != nil {
		return err
	}
	grew, err := growth(func() error { return echoOK(ft.Transport, "after the flood") })
	if err != nil {
		return fmt.Errorf("the answer after %d notifications to a stuck subscriber: %w", flood, err)
	}
	if grew > FloodGoroutines {
		return fmt.Errorf("goroutines grew by %d during a flood of %d notifications, over the bound of %d", grew, flood, FloodGoroutines)
	}
	if dc, ok := ft.Transport.(droppedCounter); ok && ft.Transport.ServerInfo().Notifications {
		// One is with the subscriber, queue wait, the rest must be
		// dropped. They may come on a stream of their own (HTTP's GET
		// stream), so some may still be on their way after the answer.
		deadline := time.Now().Add(Timeout)
		for d := dc.DroppedNotifications(); d < flood-queue-1; d = dc.DroppedNotifications() {
			if time.Now().After(deadline) {
				return fmt.Errorf("%d notifications dropped of %d sent to a stuck subscriber with a queue of %d: the queue is not bounded", d, flood, queue)
			}
			time.Sleep(time.Millisecond) // polling a counter; nothing to wait on
		}
	}
	close(release)
	if d := delivered.Load(); d > queue+1 {
		return fmt.Errorf("%d notifications delivered after the queue of %d was full", d, queue)
	}
	return nil
}

func (m *matrix) serverRequestFlood(t *testing.T) error {
	const flood, workers = 2000, 4
	ft := m.open(t, Fault{Tool: mcptest.ToolEcho, Server: mcptest.Fault{Ask: flood, Times: 1}, Options: transport.Options{MaxServerRequests: workers}})
	if err := echoOK(ft.Transport, "warm"); err != nil {
		return err
	}
	grew, err := growth(func() error { return echoOK(ft.Transport, "after the flood") })
	if err != nil {
		return fmt.Errorf("the answer after %d server requests: %w", flood, err)
	}
	if grew > FloodGoroutines {
		return fmt.Errorf("goroutines grew by %d during a flood of %d server requests, over the bound of %d", grew, flood, FloodGoroutines)
	}
	return echoOK(ft.Transport, "still here")
}
