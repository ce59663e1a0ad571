// Package mcptest is an in-process, scriptable MCP server for tests: tako's
// own and its users'. It serves any transport.Conn (transport.Pipe for tests
// in one process, a stdio stream, a WebSocket, ...) and speaks both eras of
// the protocol on the same connection type:
//
//   - the legacy era (2024-11-05 … 2025-11-25): initialize with version
//     negotiation, notifications/initialized, ping, tools/list with
//     pagination, tools/call, logging/setLevel, server-to-client requests
//     (sampling/createMessage, elicitation/create, roots/list, ping) and
//     notifications (progress, log messages, tools/list_changed);
//   - the modern era (2026-07-28): server/discover, _meta validated on every
//     request (-32602 when a required key is missing, -32022 for an
//     unsupported version), resultType on every result, input_required
//     rounds instead of server-to-client requests, and subscriptions/listen.
//
// Which era a connection speaks is decided by the client: an initialize
// request makes the connection legacy; a request carrying
// _meta["io.modelcontextprotocol/protocolVersion"] is served in the modern
// era. Options.Versions restricts what the server accepts.
//
// # Tools and the two eras
//
// A tool is an mcp.Tool and a ToolHandler. The handler receives a
// CallRequest, whose Sample, Elicit and ListRoots methods ask the client for
// input and work the same way in both eras:
//
//   - legacy: they send a server-to-client request and wait for the answer;
//   - modern: the first call that has no answer yet returns an error
//     wrapping ErrInputRequired. The handler returns it (or anything: the
//     server notices on its own), and the server answers the tools/call with
//     resultType "input_required", one inputRequests entry and a
//     requestState. When the client re-sends the call (with a new id,
//     inputResponses and the requestState), the server runs the handler
//     again from the start, and this time the earlier Sample/Elicit/ListRoots
//     calls return the client's answers. A handler that asks for several
//     inputs in turn runs once per round.
//
// So a handler must ask for its inputs in the same order on every run and
// should not have side effects before its last input; a handler that needs
// to know can look at CallRequest.Round. Answers from earlier rounds travel
// in requestState (base64url JSON), so the server keeps no state between
// rounds, as a 2026-07-28 server must not.
//
// # Faults and records
//
// FaultMethod and FaultTool make the server misbehave on purpose (delay,
// never answer, write junk, answer with a wrong id, close the connection),
// so that a client's error paths can be tested. Every message the server
// receives is recorded (Received, Wait) with the Peer it came on, so tests
// can assert on ids, _meta and params; things the client did wrong are
// collected by Violations.
//
// # Use
//
// In a test, serve one end of an in-memory pipe and connect tako's Session
// to the other:
//
//	srv := mcptest.NewReference(mcptest.Options{})
//	conn, wait := srv.Pipe(ctx)
//	sess, err := transport.Connect(ctx, conn, nil)
//	...
//	sess.Close() // closes conn, which ends Serve
//	wait()
//
// For any other Conn, run Serve on a goroutine of the test's.
//
// NewReference returns a server with a fixed set of tools that tako's
// transport conformance kit (transport/transporttest) and the demo server
// rely on.
package mcptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// Options configure a Server. The zero value works: every revision from
// 2024-11-05 to 2026-07-28, a tools capability with listChanged, logging,
// and every tool in one page.
type Options struct {
	// Versions lists the protocol revisions the server speaks, in any
	// order. Empty means mcp.SupportedVersions. A list without a legacy
	// revision makes a modern-only server (initialize is refused); one
	// without a modern revision makes a legacy-only server (server/discover
	// is an unknown method, as on real legacy servers).
	Versions []string

	// ServerInfo names the server. Zero means {Name: "mcptest", Version:
	// "0.1.0"}.
	ServerInfo mcp.Implementation

	// Capabilities is what the server declares. Nil means tools (with
	// listChanged) and logging.
	Capabilities *mcp.ServerCapabilities

	// Instructions is sent in the initialize and server/discover results.
	Instructions string

	// PageSize is the number of tools per tools/list page. Zero or less
	// means all tools in one page.
	PageSize int

	// Drain is how long Serve lets requests in flight finish and send
	// their answers after the client's side of the connection ended (for
	// stdio: its stdin reached EOF, while stdout may still be read), before
	// it cancels them. Zero cancels them at once, which is what the spec's
	// stdio shutdown expects of a server; a server fed a script through a
	// pipe wants a little drain so that the last answers get out.
	Drain time.Duration

	// DisableRecording stops the server from keeping every received
	// message, for benchmarks and long runs. Received then returns nothing
	// and Wait only fails on its context.
	DisableRecording bool

	// TaskPollInterval is the pollIntervalMs the server suggests for the
	// tasks of the 2026-07-28 extension (tasks.go). Zero means 10 ms.
	TaskPollInterval time.Duration

	// Logger receives the server's diagnostics (protocol violations by the
	// client, handler panics). Nil discards them.
	Logger *slog.Logger
}

// ToolHandler runs one tools/call. It returns the tool's result, or an
// error:
//
//   - an *mcp.Error is sent as that JSON-RPC error (note that Sample,
//     Elicit and ListRoots return the client's refusal as an *mcp.Error
//     too: a handler that wants it reported as a tool error converts it);
//   - an error wrapping ErrInputRequired (modern era) becomes an
//     input_required result, see the package documentation;
//   - an error wrapping ErrMissingCapability becomes -32021 in the modern
//     era and a tool error (isError) in the legacy era;
//   - if ctx was cancelled by the client (notifications/cancelled), nothing
//     is sent, whatever the handler returns;
//   - any other error becomes a result with isError set and the error's
//     text, as a tool execution error should.
type ToolHandler func(ctx context.Context, req *CallRequest) (*mcp.CallToolResult, error)

// Errors a ToolHandler may see or return.
var (
	// ErrInputRequired is returned (wrapped) by CallRequest.Sample, Elicit
	// and ListRoots in the modern era when the client has not answered that
	// input yet. Return it from the handler; the server turns it into an
	// input_required result and re-runs the handler on the client's retry.
	ErrInputRequired = errors.New("mcptest: client input required")
	// ErrMissingCapability is returned (wrapped) by Sample, Elicit and
	// ListRoots when the client did not declare the capability the request
	// needs, so the server did not ask.
	ErrMissingCapability = errors.New("mcptest: client lacks capability")
)

type toolEntry struct {
	tool    mcp.Tool
	handler ToolHandler
}

// Server is a scriptable MCP server. Its methods are safe for concurrent
// use, also while it serves; it may serve several connections at once, and
// they share its tools, faults and records.
type Server struct {
	opts           Options
	info           mcp.Implementation
	infoRaw        json.RawMessage
	caps           mcp.ServerCapabilities
	versions       []string // newest first
	legacyVersions []string // newest first
	modernVersions []string // newest first
	logger         *slog.Logger

	mu         sync.Mutex
	tools      []toolEntry
	faults     []*faultRule
	records    []Record
	changed    chan struct{} // closed and replaced when records grow
	violations []string
	peers      map[*Peer]struct{}
	nextPeer   int
	tasks      map[string]*serverTask // the tasks extension's (tasks.go)
	nextTask   int
}

// maxViolations bounds the violation log, so that a client that misbehaves
// in a loop cannot grow it without end.
const maxViolations = 10000

// New returns a server with no tools.
func New(opts Options) *Server {
	s := &Server{opts: opts, changed: make(chan struct{}), peers: make(map[*Peer]struct{})}
	s.info = opts.ServerInfo
	if s.info.Name == "" {
		s.info.Name = "mcptest"
	}
	if s.info.Version == "" {
		s.info.Version = "0.1.0"
	}
	s.infoRaw, _ = json.Marshal(s.info) // a struct of strings always marshals
	if opts.Capabilities != nil {
		s.caps = *opts.Capabilities
	} else {
		s.caps = mcp.ServerCapabilities{
			Tools:   &mcp.ListChangedCapability{ListChanged: true},
			Logging: &struct{}{},
		}
	}
	versions := opts.Versions
	if len(versions) == 0 {
		versions = mcp.SupportedVersions
	}
	for _, v := range versions {
		if v == "" || slices.Contains(s.versions, v) {
			continue
		}
		s.versions = append(s.versions, v)
	}
	// Revisions are dates, so a reverse string sort puts the newest first.
	sort.Sort(sort.Reverse(sort.StringSlice(s.versions)))
	for _, v := range s.versions {
		if mcp.IsModernVersion(v) {
			s.modernVersions = append(s.modernVersions, v)
		} else {
			s.legacyVersions = append(s.legacyVersions, v)
		}
	}
	s.logger = opts.Logger
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	return s
}

// ServerInfo returns the implementation the server announces.
func (s *Server) ServerInfo() mcp.Implementation { return s.info }

// Versions returns the revisions the server speaks, newest first.
func (s *Server) Versions() []string { return slices.Clone(s.versions) }

// AddTool adds a tool, or replaces the tool of the same name in place. A
// tool without an inputSchema gets {"type":"object"}, which the spec
// requires. Clients learn of the change only if told:
// call NotifyToolsListChanged.
func (s *Server) AddTool(tool mcp.Tool, h ToolHandler) error {
	if tool.Name == "" {
		return errors.New("mcptest: AddTool: tool has no name")
	}
	if h == nil {
		return fmt.Errorf("mcptest: AddTool %q: nil handler", tool.Name)
	}
	if len(tool.InputSchema) == 0 {
		tool.InputSchema = json.RawMessage(`{"type":"object"}`)
	} else if !json.Valid(tool.InputSchema) {
		return fmt.Errorf("mcptest: AddTool %q: inputSchema is not valid JSON", tool.Name)
	}
	if len(tool.OutputSchema) > 0 && !json.Valid(tool.OutputSchema) {
		return fmt.Errorf("mcptest: AddTool %q: outputSchema is not valid JSON", tool.Name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.tools {
		if s.tools[i].tool.Name == tool.Name {
			s.tools[i] = toolEntry{tool, h}
			return nil
		}
	}
	s.tools = append(s.tools, toolEntry{tool, h})
	return nil
}

// RemoveTool removes the named tool and reports whether it was there.
func (s *Server) RemoveTool(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.tools {
		if s.tools[i].tool.Name == name {
			s.tools = slices.Delete(s.tools, i, i+1)
			return true
		}
	}
	return false
}

// Tools returns the tools in the order tools/list sends them.
func (s *Server) Tools() []mcp.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]mcp.Tool, len(s.tools))
	for i := range s.tools {
		out[i] = s.tools[i].tool
	}
	return out
}

func (s *Server) lookupTool(name string) (toolEntry, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.tools {
		if e.tool.Name == name {
			return e, true
		}
	}
	return toolEntry{}, false
}

// NotifyToolsListChanged tells every connected client that the tool list
// changed: a plain notifications/tools/list_changed on legacy connections,
// and a notification tagged with the subscription id on every modern
// subscriptions/listen stream that asked for tool changes (2026-07-28 sends
// it nowhere else). It returns the first write error.
func (s *Server) NotifyToolsListChanged(ctx context.Context) error {
	var first error
	for _, p := range s.Peers() {
		if err := p.toolsListChanged(ctx, false); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Peers returns the connections being served, in the order they started.
func (s *Server) Peers() []*Peer {
	s.mu.Lock()
	out := make([]*Peer, 0, len(s.peers))
	for p := range s.peers {
		out = append(out, p)
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].num < out[j].num })
	return out
}

// Record is one message the server received.
type Record struct {
	// Peer is the connection it came on.
	Peer *Peer
	// Msg is the message. Its Params and Result are the server's own copy.
	Msg *mcp.Message
}

// Meta returns the message's params._meta, or nil.
func (r Record) Meta() mcp.Meta {
	var p struct {
		Meta mcp.Meta `json:"_meta"`
	}
	if len(r.Msg.Params) == 0 || json.Unmarshal(r.Msg.Params, &p) != nil {
		return nil
	}
	return p.Meta
}

// Params decodes the message's params into v.
func (r Record) Params(v any) error {
	if len(r.Msg.Params) == 0 {
		return errors.New("mcptest: message has no params")
	}
	return json.Unmarshal(r.Msg.Params, v)
}

// Received returns every message received so far, on every connection, in
// the order they were read.
func (s *Server) Received() []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.records)
}

// Wait blocks until a received message (one already recorded, or one still
// to come) satisfies match, and returns it. It returns ctx.Err() if ctx ends
// first. It is how a test waits for something the server should see (a
// notifications/cancelled, a retry) without sleeping.
func (s *Server) Wait(ctx context.Context, match func(Record) bool) (Record, error) {
	seen := 0
	for {
		s.mu.Lock()
		recs := s.records[seen:]
		ch := s.changed
		s.mu.Unlock()
		for _, r := range recs {
			if match(r) {
				return r, nil
			}
		}
		seen += len(recs)
		select {
		case <-ch:
		case <-ctx.Done():
			return Record{}, ctx.Err()
		}
	}
}

// WaitMethod waits for a received message with the given method (a request
// or a notification) and returns it.
func (s *Server) WaitMethod(ctx context.Context, method string) (Record, error) {
	return s.Wait(ctx, func(r Record) bool { return r.Msg.Method == method })
}

// Violations returns what clients did wrong so far, one line each: a
// request before initialize, a response to an id the server never used, a
// modern request without the required _meta, a retry without requestState,
// and so on. The server still answers such messages as best it can.
func (s *Server) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.violations)
}

func (s *Server) record(p *Peer, m *mcp.Message) {
	if s.opts.DisableRecording {
		return
	}
	s.mu.Lock()
	s.records = append(s.records, Record{Peer: p, Msg: m})
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

func (s *Server) violation(p *Peer, format string, args ...any) {
	line := fmt.Sprintf("conn %d: ", p.num) + fmt.Sprintf(format, args...)
	s.logger.Warn("mcptest: client protocol violation", "conn", p.num, "what", line)
	s.mu.Lock()
	if len(s.violations) < maxViolations {
		s.violations = append(s.violations, line)
	}
	s.mu.Unlock()
}

// Serve serves one connection until ctx ends or the connection ends (the
// client closed it, or a fault closed it). Serve takes ownership of conn and
// closes it before returning; when it returns, every goroutine it started
// has ended and every tool handler it ran has returned (handlers see their
// context cancelled).
//
// When the client's side ends first (its Read fails), requests in flight
// get Options.Drain to finish and answer before they are cancelled.
//
// Serve returns nil when ctx ends or the peer closes the connection, and the
// Read error otherwise. A Read error wrapping *transport.MessageError (one
// bad message) is recorded as a violation and does not end the connection.
func (s *Server) Serve(ctx context.Context, conn transport.Conn) error {
	if conn == nil {
		return errors.New("mcptest: Serve: nil conn")
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	p := s.newPeer(ctx, conn)
	p.life = parent
	var drained <-chan struct{}
	defer func() {
		// Stop handlers first, then unblock their writes, then wait for
		// them: in that order nothing can block the wait.
		cancel()
		conn.Close()
		p.wg.Wait()
		if drained != nil {
			<-drained
		}
		s.mu.Lock()
		delete(s.peers, p)
		s.mu.Unlock()
	}()
	for {
		msg, err := conn.Read(ctx)
		if err != nil {
			var me *transport.MessageError
			if errors.As(err, &me) {
				s.violation(p, "unreadable message: %v", err)
				continue
			}
			if parent.Err() != nil || p.hasDied() {
				return nil
			}
			if s.opts.Drain > 0 {
				drained = p.drain(s.opts.Drain)
			}
			if errors.Is(err, transport.ErrClosed) || errors.Is(err, transport.ErrConnectionLost) {
				return nil
			}
			return err
		}
		p.receive(msg)
	}
}

// Pipe serves one end of a new transport.Pipe on a goroutine of its own and
// returns the other end, for a client in the same process. Serving ends
// when the client closes its end or ctx ends; wait blocks until then and
// returns what Serve returned. A test typically does:
//
//	conn, wait := srv.Pipe(ctx)
//	t.Cleanup(func() { conn.Close(); wait() })
func (s *Server) Pipe(ctx context.Context) (client transport.Conn, wait func() error) {
	client, server := transport.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, server) }()
	var once sync.Once
	var err error
	return client, func() error {
		once.Do(func() { err = <-done })
		return err
	}
}

func (s *Server) newPeer(ctx context.Context, conn transport.Conn) *Peer {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextPeer++
	p := &Peer{
		srv:       s,
		conn:      conn,
		num:       s.nextPeer,
		ctx:       ctx,
		inflight:  make(map[mcp.ID]*inflight),
		pending:   make(map[mcp.ID]chan *mcp.Message),
		abandoned: make(map[mcp.ID]bool),
		listens:   make(map[mcp.ID]mcp.SubscriptionFilter),
	}
	s.peers[p] = struct{}{}
	return p
}

// Fault makes the server misbehave on a request. Fields combine, in this
// order: Delay, then Die or Drop; else Notify and Ask, the handler (or
// Huge), then Junk, Undecodable, Cut, WrongID, the answer (written
// slowly with Trickle) and Twice.
type Fault struct {
	// Delay holds the answer back this long (or until the request is
	// cancelled or the connection ends).
	Delay time.Duration
	// Drop never answers the request (nor runs its handler).
	Drop bool
	// Die closes the connection instead of answering, as a crashing server
	// would.
	Die bool
	// Junk writes a line that is not JSON before the answer, if the
	// connection is a byte stream (it implements RawWriter); on a message
	// Conn it writes a response with an id nobody asked for instead.
	Junk bool
	// WrongID sends the answer with an id nobody asked for instead of the
	// request's own.
	WrongID bool
	// AlsoRight, with WrongID, sends the answer with the right id too,
	// after the wrong one.
	AlsoRight bool
	// Huge answers with a result holding one text block of this many
	// bytes ('x's) instead of running the handler, for a client's message
	// cap. The result is built once per request: a test that sends many
	// such requests at once pays that many times Huge bytes on the server.
	Huge int
	// Notify sends this many notifications/message (level "info") before
	// the answer, as fast as the connection takes them, for a client's
	// bound on queued notifications. They are sent in either era: a test
	// of a client's bounds wants them even where the spec asks a server
	// to stay quiet unless asked.
	Notify int
	// Ask sends this many ping requests to the client before the answer,
	// without waiting for their answers (answers that arrive later are
	// expected, not violations), for a client's bound on the server
	// requests it answers at once. They are sent in either era.
	Ask int
	// Trickle writes the answer, on a byte stream (the Conn implements
	// RawWriter), in pieces of a few bytes with this pause after each, so
	// that the client reads one message in many reads. On a message Conn
	// it is ignored: trickle such a wire below its messages (at its
	// net.Conn, say).
	Trickle time.Duration
	// Twice sends the answer a second time, as a duplicated response.
	Twice bool
	// IgnoreCancel answers even when the client cancelled the request
	// (notifications/cancelled), as a server that missed the
	// cancellation does: Delay then runs to its end, and the answer
	// arrives after the client gave up. The handler's context is not
	// cancelled by the client's cancellation either.
	IgnoreCancel bool
	// Undecodable answers, on a connection that implements RawWriter,
	// with a response that carries the request's id but cannot be decoded
	// as JSON-RPC ("jsonrpc":"1.0"), instead of the real answer. On a
	// message Conn it is ignored and the real answer goes out.
	Undecodable bool
	// Cut writes the first half of the answer's bytes (on a RawWriter
	// connection; nothing on a message Conn) and then closes the
	// connection, as a connection cut mid-message would.
	Cut bool
	// Times limits the fault to the next Times matching requests. Zero
	// means every matching request until ClearFaults.
	Times int
}

type faultRule struct {
	method string // "" with tool set means tools/call
	tool   string
	fault  Fault
	left   int // < 0: unlimited
}

// FaultMethod applies f to requests of the given method (tools/call
// included). When several rules match a request, the most recently added
// one applies.
func (s *Server) FaultMethod(method string, f Fault) {
	s.addFault(&faultRule{method: method, fault: f})
}

// FaultTool applies f to tools/call requests for the named tool.
func (s *Server) FaultTool(tool string, f Fault) {
	s.addFault(&faultRule{method: mcp.MethodToolsCall, tool: tool, fault: f})
}

func (s *Server) addFault(r *faultRule) {
	r.left = r.fault.Times
	if r.left <= 0 {
		r.left = -1
	}
	s.mu.Lock()
	s.faults = append(s.faults, r)
	s.mu.Unlock()
}

// ClearFaults removes every fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	s.faults = nil
	s.mu.Unlock()
}

// takeFault returns the fault that applies to msg and uses up one of its
// Times.
func (s *Server) takeFault(msg *mcp.Message) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.faults) == 0 {
		return Fault{}, false
	}
	tool := ""
	if msg.Method == mcp.MethodToolsCall {
		var p struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(msg.Params, &p) // a bad call matches method rules only
		tool = p.Name
	}
	for i := len(s.faults) - 1; i >= 0; i-- {
		r := s.faults[i]
		if r.method != msg.Method || (r.tool != "" && r.tool != tool) {
			continue
		}
		f := r.fault
		if r.left > 0 {
			r.left--
			if r.left == 0 {
				s.faults = slices.Delete(s.faults, i, i+1)
			}
		}
		return f, true
	}
	return Fault{}, false
}

// RawWriter is implemented by Conns that can write bytes outside the
// message framing: on a byte stream (stdio, a socket), bytes between two
// messages; on a message-framed wire (an SSE stream, WebSocket frames), b
// as the body of one message of the wire's own. The Junk fault uses it to
// write a line that is not JSON, which a client must skip; Undecodable,
// Trickle and Cut use it to write a response's bytes themselves. Every
// b those faults write ends in a newline.
type RawWriter interface {
	// WriteRaw writes b as is, between two messages.
	WriteRaw(ctx context.Context, b []byte) error
}
