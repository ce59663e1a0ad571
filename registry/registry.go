// Package registry keeps the program's own Go tools and the tools of every
// connected MCP server in one table, and dispatches a model's tool calls to
// whichever owns the name.
//
// [New] makes a [Registry]. [Registry.AddTool] adds a Go function as a
// [Tool] ([Func] makes one from a function of a typed argument, whose
// schema [SchemaFor] derives); [Registry.AddServer] adds a connected
// server, any [transport.Transport] (a [transport.Session] over stdio,
// HTTP or WebSocket, a gRPC client, a Transport of one's own), whose tools
// it lists and keeps current as the server announces changes.
// [Registry.Tools] is what to offer a model, each [Definition] under the
// name the model sees ([Options.Naming]: [Prefix] keeps two servers'
// "search" apart); [Registry.Dispatch] runs one [Call] and returns its
// [Result]. [ServerOptions] filter a server's tools and restart it when it
// dies ([RestartPolicy]). The agent loop of package orchestrator is built
// on it.
//
// A tool call never ends the caller's loop: an unknown name, arguments that
// break the tool's input schema, a tool that fails or panics, and a server
// that died all come back as a Result with IsError set, whose text tells the
// model what went wrong so that it can correct itself. A Go tool reports
// progress with [ReportProgress] to a caller that asked for it with
// [transport.WithProgress].
//
// A Registry is safe for concurrent use.
package registry

// Design note.
//
// The registry owns one table, the names a model sees, each bound to a Go
// function or to one server's tool under the server's own name, and the
// servers behind it: their transports (AddServer takes ownership and closes
// a transport on Close, on RemoveServer, and when AddServer fails), their
// notification subscriptions and their restart state. It owns no protocol:
// listing, calling, caching and era handling are the transport's.
//
// Concurrency. Registry.mu (a RWMutex) guards the table, the servers and
// closed; it is never held across a call to a transport or a tool.
// Dispatch holds it only to look the name up, then runs the call on the
// caller's goroutine with no registry lock, so calls run at once and a
// slow tool holds up only its caller. Each server has a goroutine of its
// own (server.loop) that lists the tools again when the server says they
// changed: the transport's notification callback only drops a token into a
// one-slot channel, so it never blocks the transport's event goroutine and
// a burst of list_changed costs one refresh. A new list is fetched
// outside the lock and put in under it in one step (install), so a
// Dispatch sees the old table or the new one, never half of each. AddServer reserves the
// name before it lists, so two AddServer of one name cannot both succeed,
// and subscribes before it lists, so a change announced meanwhile is not
// lost. server.mu guards a server's transport and its dead/restart state;
// restartMu makes one call restart a dead server while the others wait and
// take the new transport. Close shuts the servers down at once, each
// waiting for its loop, and returns when all are closed.
//
// Bounded: a refresh after list_changed (30 s, and ended by Close), the
// restarts of a dead server (RestartPolicy.MaxAttempts over its life, 3 by
// default, the first at once and each after a failed one waiting twice as
// long, from 500 ms; the wait ends with the call's context), the names an
// error result lists (50 for an unknown tool, 4 in a ClashError), the age
// of the tool list of a server that sends no notifications (re-listed by
// Refresh after its TTL or Options.CacheTTL). A call's own duration is its
// context's to bound, and how many calls run at once is the caller's.
//
// Refused, with an error to the program: a tool without a name or a
// handler, a local tool whose schema does not compile, a server name taken
// already, tool names that clash on AddServer (a *ClashError: a naming
// policy is the fix; a clash that appears on a later refresh leaves those
// tools out and logs it, as there is no caller to tell). Refused with an
// error result to the model, before anything reaches the server: arguments
// that are not an object or break the input schema (once the required
// arguments that have a default are filled in, as servers that list them
// so accept), unknown names, any call after Close. A server's schema that
// does not compile is logged and its arguments go unchecked: the server
// still checks them itself.
//
// Why: the caller of Dispatch is a model loop, which can do nothing with a
// Go error but stop. Every failure is therefore text the model can read
// and act on, and a panicking Go tool is recovered into one.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tako-mcp/tako/internal/schemacheck"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// DefaultCacheTTL is how long a server's tool list is trusted when its
// transport can neither deliver notifications/tools/list_changed nor says
// how long the list stays fresh.
const DefaultCacheTTL = 5 * time.Minute

// refreshTimeout bounds one tools/list issued because the list changed.
const refreshTimeout = 30 * time.Second

// Call is one tool call from a model.
type Call struct {
	// ID is the provider's id for the call; it is echoed in the Result so
	// that the provider can pair them.
	ID   string
	Name string
	// Arguments is a JSON object; nil or empty means {}.
	Arguments json.RawMessage
}

// Result is the answer to a Call: content for the model plus an error flag.
type Result struct {
	ID                string
	Name              string
	Content           []mcp.Content
	StructuredContent json.RawMessage
	IsError           bool
}

// Text returns the text of the result's text blocks, joined by newlines.
func (r Result) Text() string {
	res := mcp.CallToolResult{Content: r.Content}
	return res.Text()
}

// Definition is a tool as a model sees it.
type Definition struct {
	// Name is the name the model calls; with a naming policy it may differ
	// from the server's own name, which is kept in Original.
	Name        string
	Description string
	InputSchema json.RawMessage
	// Server is the server that owns the tool; empty for a local tool.
	Server   string
	Original string
}

// NamingPolicy maps a server's tool name to the name the model sees. It must
// be deterministic. With no policy the server's names are used as they are,
// and a clash is an error.
type NamingPolicy func(server, tool string) string

// Prefix returns a NamingPolicy that prefixes every server tool with the
// server's name and sep, such as "files__read" for sep "__". Model APIs
// accept only letters, digits, '_' and '-' in tool names, so a separator
// from those is the safe choice.
func Prefix(sep string) NamingPolicy {
	return func(server, tool string) string { return server + sep + tool }
}

// Options configure a Registry. The zero value works: no renaming, a
// five-minute cache for transports without notifications, no logging.
type Options struct {
	// Naming renames server tools; nil keeps their names.
	Naming NamingPolicy
	// CacheTTL is how long the tool list of a server whose transport
	// cannot deliver notifications, and gave no TTL, is trusted before
	// Refresh lists it again. Zero means DefaultCacheTTL. Sessions whose
	// servers give a ttlMs are governed by it, through their own cache.
	CacheTTL time.Duration
	// Logger receives failed refreshes, dropped clashing tools and
	// transport failures behind error results. Nil discards them.
	Logger *slog.Logger
	// OnRefresh, if set, is called after every refresh of a server's tool
	// list that a notification or an expired cache caused, with the
	// refresh's error (nil on success). It runs on a goroutine of the
	// registry's and must not block for long.
	OnRefresh func(server string, err error)
	// OnNotification, if set, receives every notification a server sends
	// that is not tied to one call (log messages, list changes), so that a
	// host sees them without subscribing again after each restart. It runs
	// on the transport's goroutine and must not block for long.
	OnNotification func(server string, n mcp.Notification)
}

// ServerOptions configure one server in the registry.
type ServerOptions struct {
	// Allow, if not empty, keeps only the tools whose (original) name
	// matches one of these path.Match patterns; Deny then drops the tools
	// that match one of its patterns.
	Allow, Deny []string
	// Restart, if set, reconnects the server on the next call after it
	// died.
	Restart *RestartPolicy
}

// RestartPolicy says how a dead server is brought back: on the next call
// to one of its tools, Connect is called at most MaxAttempts times over the
// server's life, waiting Backoff before the first retry and twice as long
// before each one after.
type RestartPolicy struct {
	Connect func(ctx context.Context) (transport.Transport, error)
	// MaxAttempts is the total number of restarts allowed; zero means 3.
	MaxAttempts int
	// Backoff is the wait before a restart that follows a failed one; zero
	// means 500ms. The first restart after a death happens at once.
	Backoff time.Duration
}

// Tool is a local tool: a Go function the model can call.
type Tool struct {
	Name        string
	Description string
	// InputSchema is the JSON Schema of the arguments; nil means any
	// object. See SchemaFor and Func.
	InputSchema json.RawMessage
	// Handler runs the tool. An error becomes an error result whose text
	// is the error's message; a panic is recovered the same way.
	Handler func(ctx context.Context, arguments json.RawMessage) (*mcp.CallToolResult, error)
}

// ReportProgress tells whoever called the tool running with ctx how far
// it has come, as an MCP server's notifications/progress would: progress
// so far, total (0 if unknown) and a message. A Go tool calls it from its
// Handler; it reports false, and does nothing, when the caller asked for no
// progress. It runs the caller's callback on the tool's goroutine, so a
// tool that calls it from several goroutines gets calls at once.
func ReportProgress(ctx context.Context, progress, total float64, message string) bool {
	fn := transport.ProgressFunc(ctx)
	if fn == nil {
		return false
	}
	p := mcp.ProgressParams{Progress: progress, Message: message}
	if total > 0 {
		p.Total = &total
	}
	fn(p)
	return true
}

// errClosed is what a closed registry returns.
var errClosed = fmt.Errorf("registry: %w", transport.ErrClosed)

// Errors returned by AddTool and AddServer. After Close, every method
// returns an error wrapping transport.ErrClosed, the one sentinel for a
// closed thing everywhere in tako.
var (
	// ErrClash: the name is already taken by another tool. AddServer's
	// error is a *ClashError that wraps it.
	ErrClash = errors.New("registry: tool name clash")
	// ErrDuplicateServer: a server of that name is already registered.
	ErrDuplicateServer = errors.New("registry: duplicate server name")
)

// Registry holds local and server tools under one namespace.
type Registry struct {
	opts Options

	mu      sync.RWMutex
	entries map[string]*entry // by the name the model sees
	servers map[string]*server
	order   []string // server names, in the order they were added
	closed  bool

	// defs is the tools sorted by name, made by Tools once after each
	// change and copied for every caller since: an agent asks for them
	// every turn, and sorting 10,000 anew took 3 ms a turn. nil: stale.
	// gen counts the changes (Generation).
	defs []Definition
	gen  uint64
}

// changed records that entries changed. r.mu is held for writing.
func (r *Registry) changed() {
	r.defs = nil
	r.gen++
}

// entry is one tool under the name the model sees.
type entry struct {
	def    Definition
	local  *Tool
	srv    *server
	schema *schemacheck.Schema // nil: no validation (none given or it did not compile)
	// defaults are the required arguments whose schema gives a default,
	// filled in when a call leaves them out (see fillDefaults).
	defaults map[string]json.RawMessage
}

// New returns an empty Registry.
func New(opts Options) *Registry {
	if opts.CacheTTL <= 0 {
		opts.CacheTTL = DefaultCacheTTL
	}
	return &Registry{opts: opts, entries: map[string]*entry{}, servers: map[string]*server{}}
}

func (r *Registry) logger() *slog.Logger {
	if r.opts.Logger != nil {
		return r.opts.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// AddTool registers a local tool. Its name must be free.
func (r *Registry) AddTool(t Tool) error {
	if t.Name == "" {
		return errors.New("registry: a tool needs a name")
	}
	if t.Handler == nil {
		return fmt.Errorf("registry: tool %q has no handler", t.Name)
	}
	schema, err := compileSchema(t.InputSchema)
	if err != nil {
		return fmt.Errorf("registry: tool %q: %w", t.Name, err)
	}
	if len(t.InputSchema) == 0 {
		t.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errClosed
	}
	if e, ok := r.entries[t.Name]; ok {
		return fmt.Errorf("%w: %q is already %s", ErrClash, t.Name, e.owner())
	}
	tc := t
	r.entries[t.Name] = &entry{
		def:      Definition{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, Original: t.Name},
		local:    &tc,
		schema:   schema,
		defaults: requiredDefaults(t.InputSchema),
	}
	r.changed()
	return nil
}

// ownerName is who has the entry, for a ClashError.
func (e *entry) ownerName() string {
	if e.srv == nil {
		return "local tools"
	}
	return fmt.Sprintf("server %q", e.srv.name)
}

func (e *entry) owner() string {
	if e.srv == nil {
		return "a local tool"
	}
	return fmt.Sprintf("tool %q of server %q", e.def.Original, e.srv.name)
}

// AddServer lists the tools of t and registers them under the server's
// name. The registry takes ownership of t: it closes it on Close, on
// RemoveServer, and when AddServer fails. A tool name that clashes with one
// already registered is an error (wrapping ErrClash) unless the naming
// policy makes the names distinct.
func (r *Registry) AddServer(ctx context.Context, name string, t transport.Transport, opts *ServerOptions) error {
	if name == "" {
		t.Close()
		return errors.New("registry: a server needs a name")
	}
	s := &server{reg: r, name: name, t: t, wake: make(chan struct{}, 1), stop: make(chan struct{})}
	if opts != nil {
		s.opts = *opts
	}
	r.mu.Lock()
	switch {
	case r.closed:
		r.mu.Unlock()
		t.Close()
		return errClosed
	case r.servers[name] != nil:
		r.mu.Unlock()
		t.Close()
		return fmt.Errorf("%w: %q", ErrDuplicateServer, name)
	}
	// Reserve the name so that a concurrent AddServer of the same name
	// fails; the server's tools are installed below.
	r.servers[name] = s
	r.order = append(r.order, name)
	r.mu.Unlock()

	// Subscribe before listing: a change announced after the list was
	// taken must not be lost.
	s.subscribe(t)
	err := s.refresh(ctx, true)
	if err != nil {
		r.mu.Lock()
		delete(r.servers, name)
		r.order = slices.DeleteFunc(r.order, func(n string) bool { return n == name })
		r.mu.Unlock()
		s.shutdown()
		return err
	}
	s.wg.Add(1)
	go s.loop()
	return nil
}

// RemoveServer unregisters the server's tools and closes its transport.
func (r *Registry) RemoveServer(name string) error {
	r.mu.Lock()
	s := r.servers[name]
	if s == nil {
		r.mu.Unlock()
		return fmt.Errorf("registry: no server %q", name)
	}
	delete(r.servers, name)
	r.order = slices.DeleteFunc(r.order, func(n string) bool { return n == name })
	for k, e := range r.entries {
		if e.srv == s {
			delete(r.entries, k)
		}
	}
	r.changed()
	r.mu.Unlock()
	return s.shutdown()
}

// Close closes every server's transport and makes later calls fail. It
// returns the transports' Close errors, joined.
func (r *Registry) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	servers := make([]*server, 0, len(r.servers))
	for _, n := range r.order {
		servers = append(servers, r.servers[n])
	}
	r.mu.Unlock()
	var (
		wg   sync.WaitGroup
		errs = make([]error, len(servers))
	)
	for i, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.shutdown(); err != nil {
				errs[i] = fmt.Errorf("server %q: %w", s.name, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Tools returns every tool as the model should see it, sorted by name.
// The slice is the caller's own.
func (r *Registry) Tools() []Definition {
	r.mu.RLock()
	defs := r.defs
	r.mu.RUnlock()
	if defs == nil {
		r.mu.Lock()
		if r.defs == nil {
			r.defs = make([]Definition, 0, len(r.entries))
			for _, e := range r.entries {
				r.defs = append(r.defs, e.def)
			}
			slices.SortFunc(r.defs, func(a, b Definition) int { return strings.Compare(a.Name, b.Name) })
		}
		defs = r.defs
		r.mu.Unlock()
	}
	return slices.Clone(defs)
}

// Generation returns a number that changes whenever the tools change: a
// tool added, a server added, removed or listed again. A caller that
// converts Tools for a model's API can keep its conversion while the
// number stays the same, as the orchestrator's Agent does between turns.
// Read it before Tools, so that what Tools returns is at least as new.
func (r *Registry) Generation() uint64 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.gen
}

// Servers returns the names of the registered servers, in the order they
// were added.
func (r *Registry) Servers() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.order)
}

// Transport returns the current transport of the named server, or nil.
func (r *Registry) Transport(name string) transport.Transport {
	r.mu.RLock()
	s := r.servers[name]
	r.mu.RUnlock()
	if s == nil {
		return nil
	}
	return s.transport()
}

// Refresh lists again the tools of every server whose list may be out of
// date. A Session whose server gave its list a ttlMs is always asked, and
// answers from its own cache (transport.Cache) while the TTL holds, so a
// Refresh within the TTL sends nothing; list_changed empties that cache. A
// transport without a cache is listed again when the TTL it reports
// (transport.ListTTL), or Options.CacheTTL, has run out, unless it delivers
// notifications, which keep it current. Servers that fail are logged and
// keep their old list; the error joins their failures.
func (r *Registry) Refresh(ctx context.Context) error {
	r.mu.RLock()
	var stale []*server
	for _, n := range r.order {
		if s := r.servers[n]; s.stale(r.opts.CacheTTL) {
			stale = append(stale, s)
		}
	}
	r.mu.RUnlock()
	var errs []error
	for _, s := range stale {
		err := s.refresh(ctx, false)
		if r.opts.OnRefresh != nil {
			r.opts.OnRefresh(s.name, err)
		}
		if err != nil {
			r.logger().Warn("refreshing tools", "server", s.name, "err", err)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// install replaces the tools of s with tools. On the first install a clash
// is an error and nothing is installed; on a later one the clashing tools
// are left out and logged, since there is no caller to return an error to.
func (r *Registry) install(s *server, tools []mcp.Tool, first bool) error {
	type candidate struct {
		name string
		tool mcp.Tool
	}
	var cands []candidate
	for _, t := range tools {
		if !s.keep(t.Name) {
			continue
		}
		name := t.Name
		if r.opts.Naming != nil {
			name = r.opts.Naming(s.name, t.Name)
		}
		cands = append(cands, candidate{name, t})
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errClosed
	}
	if r.servers[s.name] != s {
		return nil // removed meanwhile
	}
	clash := &ClashError{Server: s.name}
	seen := map[string]bool{}
	next := make(map[string]*entry, len(cands))
	for _, c := range cands {
		if e, ok := r.entries[c.name]; ok && e.srv != s {
			clash.Names = append(clash.Names, c.name)
			if o := e.ownerName(); !slices.Contains(clash.Owners, o) {
				clash.Owners = append(clash.Owners, o)
			}
			continue
		}
		if seen[c.name] {
			clash.Twice = append(clash.Twice, c.name)
			continue
		}
		seen[c.name] = true
		schema, err := compileSchema(c.tool.InputSchema)
		if err != nil {
			// A schema we cannot compile is the server's problem; the
			// server still checks the arguments itself.
			r.logger().Warn("tool input schema not usable, arguments go unchecked", "server", s.name, "tool", c.tool.Name, "err", err)
		}
		in := c.tool.InputSchema
		if len(in) == 0 {
			in = json.RawMessage(`{"type":"object"}`)
		}
		desc := c.tool.Description
		if desc == "" {
			desc = c.tool.Title
		}
		next[c.name] = &entry{
			def:      Definition{Name: c.name, Description: desc, InputSchema: in, Server: s.name, Original: c.tool.Name},
			srv:      s,
			schema:   schema,
			defaults: requiredDefaults(in),
		}
	}
	if len(clash.Names)+len(clash.Twice) > 0 {
		if first {
			return clash
		}
		r.logger().Warn("tools left out", "err", clash)
	}
	for k, e := range r.entries {
		if e.srv == s {
			delete(r.entries, k)
		}
	}
	for k, e := range next {
		r.entries[k] = e
	}
	r.changed()
	return nil
}

// Dispatch runs one call and returns its result. It never returns an
// error: every failure is an error result for the model.
func (r *Registry) Dispatch(ctx context.Context, call Call) Result {
	res := r.dispatch(ctx, call)
	res.ID, res.Name = call.ID, call.Name
	if res.Content == nil {
		res.Content = []mcp.Content{}
	}
	return res
}

func (r *Registry) dispatch(ctx context.Context, call Call) Result {
	r.mu.RLock()
	e, ok := r.entries[call.Name]
	closed := r.closed
	r.mu.RUnlock()
	switch {
	case closed:
		return errorResult("the tool registry is closed")
	case !ok:
		names := r.names()
		if len(names) > 50 {
			// Enough to spot a typo without flooding the model's context.
			names = append(names[:50], fmt.Sprintf("and %d more", len(names)-50))
		}
		return errorResult(fmt.Sprintf("unknown tool %q; the available tools are: %s", call.Name, strings.Join(names, ", ")))
	}
	args := call.Arguments
	if len(strings.TrimSpace(string(args))) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	args = fillDefaults(args, e.defaults)
	if err := validate(e.schema, args); err != nil {
		return errorResult(fmt.Sprintf("invalid arguments for tool %q: %v", call.Name, err))
	}
	if e.local != nil {
		return runLocal(ctx, e.local, args)
	}
	return e.srv.call(ctx, e.def.Original, args)
}

func (r *Registry) names() []string {
	r.mu.RLock()
	names := make([]string, 0, len(r.entries))
	for k := range r.entries {
		names = append(names, k)
	}
	r.mu.RUnlock()
	slices.Sort(names)
	return names
}

// runLocal runs a local tool, turning an error or a panic into an error
// result.
func runLocal(ctx context.Context, t *Tool, args json.RawMessage) (res Result) {
	defer func() {
		if p := recover(); p != nil {
			res = errorResult(fmt.Sprintf("tool %q panicked: %v", t.Name, p))
		}
	}()
	out, err := t.Handler(ctx, args)
	if err != nil {
		return errorResult(err.Error())
	}
	if out == nil {
		return Result{}
	}
	return Result{Content: out.Content, StructuredContent: out.StructuredContent, IsError: out.IsError}
}

func errorResult(msg string) Result {
	return Result{Content: []mcp.Content{mcp.TextContent(msg)}, IsError: true}
}

// ClashError is a server whose tool names are taken already, by another
// server's tools or local tools, or that lists a name twice. It wraps
// ErrClash. A naming policy (Options.Naming, such as Prefix) gives each
// server's tools names of their own.
type ClashError struct {
	// Server is the server being added.
	Server string
	// Names are its tools' names that are taken, as the model would see
	// them; Owners who has them (`server "a"`, "local tools"), each once.
	Names, Owners []string
	// Twice are the names the server lists more than once.
	Twice []string
}

// Error names a few of the clashing tools, not all: a server whose every
// tool clashes (the same server added twice) may have dozens.
func (e *ClashError) Error() string {
	var parts []string
	switch len(e.Names) {
	case 0:
	case 1:
		parts = append(parts, fmt.Sprintf("the tool name %s is taken by %s", fewNames(e.Names), strings.Join(e.Owners, " and ")))
	default:
		parts = append(parts, fmt.Sprintf("%d tool names are taken by %s (%s)", len(e.Names), strings.Join(e.Owners, " and "), fewNames(e.Names)))
	}
	if len(e.Twice) > 0 {
		parts = append(parts, fmt.Sprintf("it lists %s twice", fewNames(e.Twice)))
	}
	return fmt.Sprintf("%v: server %q: %s (configure a naming policy such as registry.Prefix)", ErrClash, e.Server, strings.Join(parts, "; "))
}

// Unwrap returns ErrClash.
func (e *ClashError) Unwrap() error { return ErrClash }

// fewNames quotes up to four names, then says how many more.
func fewNames(names []string) string {
	const shown = 4
	q := make([]string, 0, shown)
	for _, n := range names[:min(len(names), shown)] {
		q = append(q, strconv.Quote(n))
	}
	list := strings.Join(q, ", ")
	if more := len(names) - len(q); more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	return list
}
