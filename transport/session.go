package transport

// Design note.
//
// Session is the one engine between a Conn (messages) and a Transport
// (operations). Everything that is protocol rather than wire lives here, once:
// id allocation, matching responses to calls, the handshake and era detection,
// per-request _meta, multi round-trip retries (Rounds, rounds.go), answering
// the server's requests (Handlers.Serve), progress, cancellation, pagination
// and the renewal of expired legacy sessions.
//
// Goroutines. A Session runs three goroutines of its own for its whole life,
// plus one per server-to-client request being answered (at most
// Options.MaxServerRequests of those), on the 2026-07-28 wire one holding
// the subscriptions/listen stream, and with Options.PingInterval one
// pinging the server (capabilities.go):
//
//   - the reader calls Conn.Read in a loop (or, for a Conn that is a
//     Pusher, the Conn's own reading goroutine calls the reader's dispatch,
//     which saves a hand-off per message; see pusher.go). It routes a response to the
//     waiting call through that call's buffered channel, queues notifications
//     and progress for the event goroutine (a bounded queue: past
//     Options.MaxQueuedNotifications they are dropped and counted, never a
//     response), and starts a handler goroutine for each server request,
//     or hands the request to the refusal goroutine past the bound. It never
//     writes to the Conn and never runs user code, so a slow callback or a
//     full pipe cannot stall the reading side (a reader that blocks on a
//     write to a server that blocks on its own write is the classic stdio
//     deadlock);
//   - the event goroutine delivers notifications and progress to user
//     callbacks one at a time, in arrival order;
//   - the refusal goroutine writes the busy errors for server requests past
//     the bound, one at a time, each bounded.
//
// The event and refusal goroutines start with the first event or refusal
// there is (startEvents, startRefusals) and then live as long as the
// session: a session that is never sent a notification, the common idle
// one, runs neither (two goroutines and their stacks less for each of a
// host's sessions; bench/'s sessions suite).
//
// Calls run on their callers' goroutines: a call registers itself in the
// pending map, writes its request and waits for its response, its context,
// or the end of the session. Whoever removes a call from the pending map
// completes it; that single rule is what keeps a late response, a
// cancellation and a dying connection from racing each other.
//
// The wire knows, the engine acts. A Conn reports what only it can see as
// typed errors (ErrSessionExpired, ErrRequestLost, ErrAuthRequired,
// ErrLegacyWire) on every kind of message, and the engine decides: an
// expired legacy session is renewed once per expiry, whichever message met
// it, and a session that cannot be renewed ends with Err set (renewSession
// in call.go); an initialize refused in the way of a 2024-11-05 HTTP+SSE
// server makes the engine ask the Conn to switch to that wire, once
// (Informed.SwitchWire, handshake.go). A Conn that
// frames messages with protocol state (Informed, informed.go) is told it by
// the engine instead of parsing messages to learn it.
//
// Shutdown. The first of Close and a fatal Read error records the reason and
// closes done, which fails every pending call at once with an error wrapping
// ErrClosed (our Close) or the Conn's error (which wraps ErrConnectionLost).
// Then the Conn is closed (for stdio, the spec's stdin/SIGTERM/SIGKILL
// sequence) and CloseContext waits, bounded by its context (Close: by
// Options.CloseTimeout), for the Conn and the goroutines; past the bound a
// Conn that can abort is aborted (stdio kills its process group), so the
// caller's deadline is kept and nothing is left running.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tako-mcp/tako/mcp"
)

// Session is a connected MCP server: it implements Transport over a Conn.
// Create one with Connect. All methods are safe for concurrent use; many
// calls may be in flight on one Session at once.
type Session struct {
	conn     Conn
	informed Informed // conn, when it wants to be told protocol state
	opts     Options
	log      *slog.Logger

	// Fixed after the handshake (info is guarded by mu: an expired legacy
	// session runs the handshake again).
	info   ServerInfo
	modern bool
	// 2026-07-28: the reserved _meta members every request carries, and
	// the version they name. SetLogLevel replaces them while calls read
	// them, hence the atomic.
	metaBody    atomic.Pointer[[]byte]
	metaTasks   atomic.Pointer[[]byte] // metaBody opted in to tasks (tasks.go)
	metaVersion string
	logLevel    mcp.LoggingLevel // guarded by mu; see SetLogLevel
	levelMu     sync.Mutex       // orders SetLogLevel's rebuilds of metaBody
	roots       []mcp.Root       // guarded by mu; see roots.go
	rootsMu     sync.Mutex       // orders changes of roots and their notifications
	// resourceSubs holds SubscribeResource's callbacks by URI (guarded by
	// mu); resourceOnce registers their dispatcher once.
	resourceSubs map[string]func(*mcp.ResourceUpdatedParams)
	resourceOnce sync.Once
	// elicits records URL elicitations by id (elicit_url.go).
	elicits elicitations
	// rstreams are the 2026-07-28 listen streams of SubscribeResource
	// (resourcelisten.go).
	rstreams resourceStreams
	// received are the tasks the server created on this client
	// (Options.TaskReceiver, taskreceiver.go).
	received receivedTasks
	// schemas are the output schemas of the tools listed (validate.go).
	schemas toolSchemas
	caps    mcp.ClientCapabilities

	nextID atomic.Int64
	// handler is the Options.Middleware chain around exchange; nil without
	// middleware (middleware.go).
	handler Handler
	// cache keeps cacheable results (cache.go); nil when disabled.
	cache *sessionCache

	mu       sync.Mutex
	pending  map[int64]*pendingCall
	handlers map[string]context.CancelFunc // server requests being answered, by id
	subs     []*subscriber
	subSeq   int
	ttls     map[string]time.Duration // list method -> the server's ttlMs
	// taskRoutes carry the progress of tools/call requests in flight and
	// of the tasks they created, by progress token (taskprogress.go).
	taskRoutes map[int64]*taskRoute
	// listenFilter is what the 2026-07-28 listen stream asks for.
	listenFilter map[string]any

	done      chan struct{} // closed when the session ends
	errOnce   sync.Once
	err       error // why it ended; set before done is closed
	closeOnce sync.Once
	closed    chan struct{} // closed when the Conn's Close has returned
	closeErr  error         // set before closed is closed

	// Legacy sessions that expire (HTTP 404) are re-established once per
	// expiry, however many calls notice it: generation counts handshakes.
	rehandshakeMu sync.Mutex
	generation    atomic.Int64
	renewals      atomic.Int64 // sessions renewed since a request last succeeded

	events    eventQueue
	answering int               // server requests being answered (guarded by mu)
	refusals  chan *mcp.Message // errors for server requests past MaxServerRequests
	dropped   atomic.Int64      // notifications dropped at a full queue
	readerCtx context.Context
	stopRead  context.CancelFunc
	wg        sync.WaitGroup // reader, event goroutine, handlers

	eventsOn, refusalsOn atomic.Bool // the event and refusal goroutines have started
}

type pendingCall struct {
	ch       chan reply // buffered 1: the reader never blocks on it
	progress func(mcp.ProgressParams)
}

// reply is what completes a call: the server's response, or an error that
// belongs to this call alone (a response too large to read).
type reply struct {
	msg *mcp.Message
	err error
}

type subscriber struct {
	id int
	fn func(mcp.Notification)
}

// Connect runs the handshake over conn and returns a ready Session.
//
// Era detection follows the checklist (§1B.11): unless Options pins a legacy
// revision, Connect first sends server/discover. A DiscoverResult (checked
// by mcp.DecodeDiscoverResult), or a -32022 error listing versions, means a
// 2026-07-28 server; any other result or error, or silence for
// Options.ProbeTimeout, means a legacy server, which gets initialize and
// notifications/initialized. With a 2026-07-28 revision pinned, an answer
// that is not a DiscoverResult fails with ErrProtocol. An error wrapping
// ErrAuthRequired or ErrNotMCP ends the probe at once: neither says
// anything of the server's era.
//
// Connect takes ownership of conn: if the handshake fails, conn is closed
// (and for stdio its process group ended) before Connect returns. If conn
// is a SkipReporter that skipped something, the error says what.
func Connect(ctx context.Context, conn Conn, opts *Options) (*Session, error) {
	s := newSession(conn, opts)
	if err := s.handshake(ctx); err != nil {
		// Bounded by the caller's context: a handshake that ran out of
		// time must not be followed by seconds of shutdown.
		cctx, cancel := context.WithTimeout(ctx, s.opts.CloseTimeout)
		s.CloseContext(cctx)
		cancel()
		if s.Err() != nil && !errors.Is(s.Err(), ErrClosed) && !errors.Is(err, s.Err()) {
			err = fmt.Errorf("%w (%w)", err, s.Err())
		}
		// Asked after the close, when the Conn has read all it will.
		if sr, ok := conn.(SkipReporter); ok {
			if skipped := sr.Skipped(); skipped != nil {
				err = fmt.Errorf("%w (%w)", err, skipped)
			}
		}
		return nil, fmt.Errorf("mcp handshake: %w", err)
	}
	s.startPing()
	return s, nil
}

func newSession(conn Conn, opts *Options) *Session {
	s := &Session{
		conn:     conn,
		pending:  make(map[int64]*pendingCall),
		handlers: make(map[string]context.CancelFunc),
		done:     make(chan struct{}),
	}
	if opts != nil {
		s.opts = *opts
	}
	s.informed, _ = conn.(Informed)
	if s.opts.ClientInfo.Name == "" {
		s.opts.ClientInfo = mcp.Implementation{Name: "tako", Version: Version}
	}
	if s.opts.ProbeTimeout <= 0 {
		s.opts.ProbeTimeout = 3 * time.Second
	}
	if s.opts.CloseTimeout <= 0 {
		s.opts.CloseTimeout = 5 * time.Second
	}
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.initRoots()
	implied := s.opts.Handlers.capabilities()
	if implied.Roots != nil {
		// Legacy eras: changes are announced (SetRoots, NotifyRootsChanged).
		implied.Roots.ListChanged = true
	}
	s.caps = mergeCapabilities(s.opts.Capabilities, implied)
	if h := &s.opts.Handlers; s.opts.TaskReceiver && (h.Sampling != nil || h.Elicitation != nil) {
		s.caps.Tasks = receiverCapability(h)
	}
	s.logLevel = s.opts.LogLevel
	if s.opts.MaxQueuedNotifications <= 0 {
		s.opts.MaxQueuedNotifications = DefaultMaxQueuedNotifications
	}
	if s.opts.MaxServerRequests <= 0 {
		s.opts.MaxServerRequests = DefaultMaxServerRequests
	}
	s.events.init(s.opts.MaxQueuedNotifications)
	s.handler = s.chain()
	s.cache = s.newCache()
	s.readerCtx, s.stopRead = context.WithCancel(context.Background())
	s.wg.Add(1) // the reader's: the Conn's own goroutine, for a Pusher
	if p, ok := conn.(Pusher); ok {
		p.Push(s.push)
	} else {
		go s.readLoop()
	}
	return s
}

func (h *Handlers) capabilities() mcp.ClientCapabilities {
	var c mcp.ClientCapabilities
	if h.Roots != nil {
		c.Roots = &mcp.RootsCapability{}
	}
	if h.Sampling != nil {
		c.Sampling = &mcp.SamplingCapability{}
		if h.SamplingTools {
			c.Sampling.Tools = &struct{}{}
		}
	}
	if h.Elicitation != nil {
		c.Elicitation = &mcp.ElicitationCapability{Form: &struct{}{}}
		if h.ElicitationURL {
			c.Elicitation.URL = &struct{}{}
		}
	}
	return c
}

// ServerInfo returns what the handshake learned about the server.
func (s *Session) ServerInfo() ServerInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info
}

// setInfo records what a handshake learned; a legacy session that expired
// runs the handshake again while calls are in flight.
func (s *Session) setInfo(info ServerInfo) {
	s.mu.Lock()
	s.info = info
	s.mu.Unlock()
}

// Done is closed when the session has ended, by Close or because the Conn
// was lost.
func (s *Session) Done() <-chan struct{} { return s.done }

// Err returns why the session ended, or nil while it runs. After Close it
// wraps ErrClosed; after the server went away, the Conn's error (which wraps
// ErrConnectionLost).
func (s *Session) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

// Close ends the session: every pending call fails with an error wrapping
// ErrClosed, the Conn is closed, and Close waits, bounded by
// Options.CloseTimeout, for the session's goroutines and the Conn's
// shutdown (CloseContext). It is idempotent and returns the Conn's Close
// error.
func (s *Session) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.CloseTimeout)
	defer cancel()
	return s.CloseContext(ctx)
}

// aborter is the optional part of a Conn that can end at once, skipping
// the graceful steps of its Close (stdio: SIGKILL to the process group
// rather than closing stdin and waiting).
type aborter interface{ Abort() }

// CloseContext is Close bounded by ctx rather than by CloseTimeout. The
// Conn's shutdown runs in the background (for stdio: stdin closed, then
// SIGTERM, then SIGKILL, each step with its grace); if ctx ends first,
// a Conn that can abort is aborted (stdio: the process group is killed at
// once) and CloseContext returns the context's error. Either way nothing
// is left running: the caller's deadline is kept, and what remains of the
// shutdown is bounded.
func (s *Session) CloseContext(ctx context.Context) error {
	s.closeOnce.Do(func() {
		s.end(ErrClosed)
		s.closed = make(chan struct{})
		go func() {
			err := s.conn.Close()
			s.stopRead()
			s.closeErr = err
			close(s.closed)
		}()
	})
	select {
	case <-s.closed:
	case <-ctx.Done():
		if a, ok := s.conn.(aborter); ok {
			a.Abort()
		}
		return fmt.Errorf("mcp: close: %w", context.Cause(ctx))
	}
	waited := make(chan struct{})
	go func() { s.wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-ctx.Done():
		s.log.Warn("mcp: session goroutines still running after the close deadline")
	}
	return s.closeErr
}

// end records why the session ended and wakes every waiter. The first reason
// wins.
func (s *Session) end(reason error) {
	s.errOnce.Do(func() {
		s.mu.Lock()
		s.err = reason
		cancels := make([]context.CancelFunc, 0, len(s.handlers))
		for _, c := range s.handlers {
			cancels = append(cancels, c)
		}
		s.mu.Unlock()
		close(s.done)
		if s.cache != nil && s.opts.Cache != nil {
			s.cache.release()
		}
		for _, c := range cancels {
			c()
		}
		s.events.close()
	})
}

// readLoop is the reader goroutine; see the design note.
func (s *Session) readLoop() {
	defer s.wg.Done()
	for {
		msg, err := s.conn.Read(s.readerCtx)
		if !s.dispatch(msg, err, false) {
			return
		}
	}
}

// dispatch routes one result of reading: a message, a bad message
// (*MessageError) or the error that ends the connection, for which it
// reports false. pushed says it runs on a Pusher's goroutine, which must
// not wait for its own Conn's Close.
func (s *Session) dispatch(msg *mcp.Message, err error, pushed bool) bool {
	if err != nil {
		var me *MessageError
		if errors.As(err, &me) {
			s.failOne(me)
			return true
		}
		select {
		case <-s.done: // closed by us; the Read error is the echo of that
		default:
			s.log.Debug("mcp: connection ended", "err", err)
			s.end(err)
			// Release what the Conn holds (a dead child's pipes) even if
			// the owner never calls Close.
			if pushed {
				go s.conn.Close()
			} else {
				s.conn.Close()
			}
		}
		return false
	}
	switch {
	case msg.IsResponse():
		s.deliver(msg)
	case msg.IsRequest():
		s.serveRequest(msg)
	default:
		s.notification(msg)
	}
	return true
}

// push is the deliver function a Pusher is given.
func (s *Session) push(msg *mcp.Message, err error) {
	if !s.dispatch(msg, err, true) {
		s.wg.Done() // the reader's share: no more calls come
	}
}

// failOne fails the one call a bad message belonged to.
func (s *Session) failOne(me *MessageError) {
	n, ok := me.ID.Int64()
	if ok {
		if pc := s.take(n); pc != nil {
			pc.ch <- reply{err: me}
			return
		}
	}
	s.log.Warn("mcp: dropped a bad message", "err", me)
}

// take removes call n from the pending map; the caller then owns completing
// it. It returns nil when someone else got there first.
func (s *Session) take(n int64) *pendingCall {
	s.mu.Lock()
	pc := s.pending[n]
	if pc != nil {
		delete(s.pending, n)
	}
	s.mu.Unlock()
	return pc
}

func (s *Session) deliver(msg *mcp.Message) {
	n, ok := msg.ID.Int64()
	var pc *pendingCall
	if ok {
		pc = s.take(n)
	}
	if pc == nil {
		// Never fatal, never delivered to the wrong caller. An id this
		// session sent is a late answer to a call it gave up (cancelled,
		// or a server/discover probe that a slow-starting server answers
		// after ProbeTimeout), or a second answer: expected of a peer,
		// and nothing for the program to act on. An id never sent is the
		// peer's mistake.
		if ok && n > 0 && n <= s.nextID.Load() {
			s.log.Debug("mcp: response to a request no longer pending", "id", msg.ID.String())
		} else {
			s.log.Warn("mcp: response to an id never sent", "id", msg.ID.String())
		}
		return
	}
	if msg.Error != nil && msg.Error.Code == mcp.CodeURLElicitationRequired {
		s.noteURLElicitations(msg.Error)
	}
	pc.ch <- reply{msg: msg}
}

func (s *Session) notification(msg *mcp.Message) {
	if s.cache != nil {
		s.cache.notified(msg)
	}
	if msg.Method == mcp.NotificationToolsListChanged {
		s.schemas.changed()
	}
	switch msg.Method {
	case mcp.NotificationProgress:
		var p mcp.ProgressParams
		if err := json.Unmarshal(msg.Params, &p); err != nil {
			s.log.Warn("mcp: bad progress notification", "err", err)
			return
		}
		n, err := strconv.ParseInt(string(p.ProgressToken), 10, 64)
		if err != nil {
			s.log.Debug("mcp: progress for a token we did not send", "token", string(p.ProgressToken))
			return
		}
		// The callback is read under the lock: once the call takes itself
		// out of pending, its pendingCall goes back to the pool and may
		// serve another call, so it must not be touched after that.
		var fn func(mcp.ProgressParams)
		s.mu.Lock()
		if pc := s.pending[n]; pc != nil {
			fn = pc.progress
		} else {
			fn = s.taskRouteFn(n)
		}
		s.mu.Unlock()
		if fn == nil {
			return
		}
		s.queueEvent(func() { fn(p) })
		return
	case mcp.NotificationCancelled:
		var p mcp.CancelledParams
		if err := json.Unmarshal(msg.Params, &p); err == nil {
			s.mu.Lock()
			cancel := s.handlers[p.RequestID.String()]
			s.mu.Unlock()
			if cancel != nil {
				cancel()
			}
			// A 2026-07-28 server may also end one of our long-lived
			// requests (a listen stream) this way. In the legacy eras the
			// id can only name the server's own request, and our ids share
			// its number space, so it must not touch our calls.
			if n, ok := p.RequestID.Int64(); ok && s.modern {
				if pc := s.take(n); pc != nil {
					pc.ch <- reply{err: errServerCancelled}
				}
			}
		}
		return
	case mcp.NotificationElicitationComplete:
		s.elicitationCompleted(msg.Params)
	case mcp.NotificationSubscriptionsAck:
		if !s.resourceAck(msg.Params) {
			s.checkAck(msg.Params)
		}
		return
	case mcp.NotificationResourceUpdated:
		if s.modern && !s.resourceUpdateLive(msg.Params) {
			return
		}
	case mcp.NotificationMessage:
		s.log.Debug("mcp: server log", "params", string(msg.Params))
	}
	n := mcp.Notification{Method: msg.Method, Params: msg.Params}
	s.queueEvent(func() {
		s.mu.Lock()
		subs := s.subs
		s.mu.Unlock()
		for _, sub := range subs {
			sub.fn(n)
		}
	})
}

// Subscribe registers fn for every notification not tied to one call (list
// changes, log messages, resource updates). Notifications reach fn in order,
// one at a time, on the session's event goroutine: fn must not block for
// long, and must not wait for another call on this session to finish.
func (s *Session) Subscribe(fn func(mcp.Notification)) (unsubscribe func()) {
	s.mu.Lock()
	s.subSeq++
	id := s.subSeq
	// Copy on write: the event goroutine reads the slice without the lock.
	s.subs = append(slices.Clip(s.subs), &subscriber{id: id, fn: fn})
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.subs = slices.DeleteFunc(slices.Clone(s.subs), func(x *subscriber) bool { return x.id == id })
		s.mu.Unlock()
	}
}

// startEvents starts the event goroutine if it has not started and the
// session has not ended. Whoever queues an event calls it.
func (s *Session) startEvents() { s.startOnce(&s.eventsOn, s.eventLoop) }

// startRefusals starts the refusal goroutine likewise.
func (s *Session) startRefusals() { s.startOnce(&s.refusalsOn, s.refuseLoop) }

// startOnce runs loop on a goroutine of the session's the first time it is
// called for on, unless the session has ended. The check and the wg.Add
// are under s.mu, under which end records the reason before it closes
// done: either the Add comes first, and so before Close waits for the
// goroutines, or the reason is seen and nothing is added.
func (s *Session) startOnce(on *atomic.Bool, loop func()) {
	if on.Load() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if on.Load() || s.err != nil {
		return
	}
	on.Store(true)
	s.wg.Add(1)
	go loop()
}

func (s *Session) eventLoop() {
	defer s.wg.Done()
	for {
		fn, ok := s.events.pop()
		if !ok {
			return
		}
		fn()
	}
}
