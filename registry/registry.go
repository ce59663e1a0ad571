// Package registry keeps the program's own Go tools and the tools of every
// connected MCP server in one table, and dispatches a model's tool calls to
// whichever owns the name.
//
// A tool call never ends the caller's loop: an unknown name, arguments that
// break the tool's input schema, a tool that fails or panics, and a server
// that died all come back as a Result with IsError set, whose text tells the
// model what went wrong so that it can correct itself.
//
// A Registry is safe for concurrent use.
package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// DefaultCacheTTL is how long a server's tool list is trusted when its
// transport cannot deliver notifications/tools/list_changed.
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
	// cannot deliver notifications is trusted before Refresh lists it
	// again. Zero means DefaultCacheTTL.
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

// errClosed is what a closed registry returns.
var errClosed = fmt.Errorf("registry: %w", transport.ErrClosed)

// Errors returned by AddTool and AddServer. After Close, every method
// returns an error wrapping transport.ErrClosed, the one sentinel for a
// closed thing everywhere in tako.
var (
	// ErrClash: the name is already taken by another tool.
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
}

// entry is one tool under the name the model sees.
type entry struct {
	def    Definition
	local  *Tool
	srv    *server
	schema *jsonschema.Schema // nil: no validation (none given or it did not compile)
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
	schema, err := compileSchema(t.Name, t.InputSchema)
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
		def:    Definition{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, Original: t.Name},
		local:  &tc,
		schema: schema,
	}
	return nil
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
func (r *Registry) Tools() []Definition {
	r.mu.RLock()
	defs := make([]Definition, 0, len(r.entries))
	for _, e := range r.entries {
		defs = append(defs, e.def)
	}
	r.mu.RUnlock()
	sort.Slice(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name })
	return defs
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

// Refresh lists again the tools of every server whose transport has no
// notifications and whose cache time has run out. Servers that fail are
// logged and keep their old list; the error joins their failures.
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
	var clashes []error
	seen := map[string]bool{}
	next := make(map[string]*entry, len(cands))
	for _, c := range cands {
		if e, ok := r.entries[c.name]; ok && e.srv != s {
			clashes = append(clashes, fmt.Errorf("%w: tool %q of server %q: the name is already %s (configure a naming policy such as registry.Prefix)", ErrClash, c.tool.Name, s.name, e.owner()))
			continue
		}
		if seen[c.name] {
			clashes = append(clashes, fmt.Errorf("%w: server %q lists the tool %q twice", ErrClash, s.name, c.name))
			continue
		}
		seen[c.name] = true
		schema, err := compileSchema(c.tool.Name, c.tool.InputSchema)
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
			def:    Definition{Name: c.name, Description: desc, InputSchema: in, Server: s.name, Original: c.tool.Name},
			srv:    s,
			schema: schema,
		}
	}
	if len(clashes) > 0 && first {
		return errors.Join(clashes...)
	}
	for _, err := range clashes {
		r.logger().Warn("tool left out", "err", err)
	}
	for k, e := range r.entries {
		if e.srv == s {
			delete(r.entries, k)
		}
	}
	for k, e := range next {
		r.entries[k] = e
	}
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

// server is one registered MCP server.
type server struct {
	reg  *Registry
	name string
	opts ServerOptions

	mu       sync.Mutex
	t        transport.Transport
	unsub    func()
	fetched  time.Time
	restarts int
	dead     error     // why the server is known to be dead
	lastTry  time.Time // of the last restart attempt

	restartMu sync.Mutex // one restart at a time

	wake     chan struct{} // a list_changed arrived
	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
}

func (s *server) transport() transport.Transport {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.t
}

func (s *server) keep(name string) bool {
	if len(s.opts.Allow) > 0 && !matchAny(s.opts.Allow, name) {
		return false
	}
	return !matchAny(s.opts.Deny, name)
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, err := path.Match(p, name); ok || (err != nil && p == name) {
			return true
		}
	}
	return false
}

// subscribe (re)subscribes to t's notifications. Called with s.mu not held.
func (s *server) subscribe(t transport.Transport) {
	unsub := t.Subscribe(func(n mcp.Notification) {
		if fn := s.reg.opts.OnNotification; fn != nil {
			fn(s.name, n)
		}
		if n.Method != mcp.NotificationToolsListChanged {
			return
		}
		// The transport's goroutine must not block: coalesce.
		select {
		case s.wake <- struct{}{}:
		default:
		}
	})
	s.mu.Lock()
	old := s.unsub
	s.unsub = unsub
	s.mu.Unlock()
	if old != nil {
		old()
	}
}

// loop refreshes the tool list whenever a list_changed arrives.
func (s *server) loop() {
	defer s.wg.Done()
	for {
		select {
		case <-s.stop:
			return
		case <-s.wake:
		}
		ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
		go func() {
			select {
			case <-s.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		err := s.refresh(ctx, false)
		cancel()
		if err != nil {
			s.reg.logger().Warn("refreshing tools after list_changed", "server", s.name, "err", err)
		}
		if f := s.reg.opts.OnRefresh; f != nil {
			f(s.name, err)
		}
	}
}

func (s *server) refresh(ctx context.Context, first bool) error {
	t := s.transport()
	tools, err := t.ListTools(ctx)
	if err != nil {
		return fmt.Errorf("server %q: tools/list: %w", s.name, err)
	}
	if err := s.reg.install(s, tools, first); err != nil {
		return err
	}
	s.mu.Lock()
	s.fetched = time.Now()
	s.mu.Unlock()
	return nil
}

// stale reports whether the server's tools should be listed again: it has
// no notifications and its list is older than the time the server gave for
// it (transport.ListTTL), or than ttl when it gave none.
func (s *server) stale(ttl time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead != nil || s.t.ServerInfo().Notifications {
		return false
	}
	if lt, ok := s.t.(transport.ListTTL); ok {
		if d, ok := lt.TTL(mcp.MethodToolsList); ok {
			ttl = d
		}
	}
	return time.Since(s.fetched) >= ttl
}

// shutdown stops the refresh loop and closes the transport.
func (s *server) shutdown() error {
	var err error
	s.stopOnce.Do(func() {
		close(s.stop)
		s.wg.Wait()
		s.mu.Lock()
		t, unsub := s.t, s.unsub
		s.dead = errClosed
		s.mu.Unlock()
		if unsub != nil {
			unsub()
		}
		err = t.Close()
	})
	return err
}

// doner is the optional part of a Transport that says when it has ended;
// Session has it.
type doner interface {
	Done() <-chan struct{}
	Err() error
}

// deadReason reports why t is known to be unusable, or nil.
func (s *server) deadReason() (transport.Transport, error) {
	s.mu.Lock()
	t, dead := s.t, s.dead
	s.mu.Unlock()
	if dead != nil {
		return t, dead
	}
	if d, ok := t.(doner); ok {
		select {
		case <-d.Done():
			err := d.Err()
			if err == nil {
				err = transport.ErrClosed
			}
			s.markDead(t, err)
			return t, err
		default:
		}
	}
	return t, nil
}

func (s *server) markDead(t transport.Transport, err error) {
	s.mu.Lock()
	if s.t == t && s.dead == nil {
		s.dead = err
	}
	s.mu.Unlock()
}

func (s *server) call(ctx context.Context, tool string, args json.RawMessage) Result {
	t, dead := s.deadReason()
	if dead != nil {
		var err error
		if t, err = s.restart(ctx, t, dead); err != nil {
			return errorResult(fmt.Sprintf("tool %q is unavailable: %v", tool, err))
		}
	}
	res, err := t.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		if errors.Is(err, transport.ErrClosed) || errors.Is(err, transport.ErrConnectionLost) {
			s.markDead(t, err)
		}
		s.reg.logger().Warn("tool call failed", "server", s.name, "tool", tool, "err", err)
		var rpc *mcp.Error
		if errors.As(err, &rpc) {
			return errorResult(fmt.Sprintf("server %q refused the call to %q: %s (code %d)", s.name, tool, rpc.Message, rpc.Code))
		}
		return errorResult(fmt.Sprintf("calling %q on server %q failed: %v", tool, s.name, err))
	}
	return Result{Content: res.Content, StructuredContent: res.StructuredContent, IsError: res.IsError}
}

// restart brings a dead server back under its RestartPolicy, or explains
// why it cannot.
func (s *server) restart(ctx context.Context, old transport.Transport, why error) (transport.Transport, error) {
	p := s.opts.Restart
	if p == nil || p.Connect == nil || errors.Is(why, errClosed) {
		return nil, fmt.Errorf("server %q is not running (%v)", s.name, why)
	}
	s.restartMu.Lock()
	defer s.restartMu.Unlock()
	s.mu.Lock()
	if s.t != old && s.dead == nil {
		t := s.t // another call restarted it meanwhile
		s.mu.Unlock()
		return t, nil
	}
	attempts, last := s.restarts, s.lastTry
	s.mu.Unlock()
	max, backoff := p.MaxAttempts, p.Backoff
	if max <= 0 {
		max = 3
	}
	if backoff <= 0 {
		backoff = 500 * time.Millisecond
	}
	if attempts >= max {
		return nil, fmt.Errorf("server %q is not running (%v) and was restarted %d times already", s.name, why, attempts)
	}
	// The first restart after a death is immediate; each restart that
	// follows a failed one waits twice as long as the one before.
	if !last.IsZero() {
		wait := backoff << min(attempts-1, 16)
		if d := time.Until(last.Add(wait)); d > 0 {
			timer := time.NewTimer(d)
			select {
			case <-ctx.Done():
				timer.Stop()
				return nil, ctx.Err()
			case <-timer.C:
			}
		}
	}
	s.mu.Lock()
	s.restarts++
	s.lastTry = time.Now()
	s.mu.Unlock()
	old.Close()
	t, err := p.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("server %q died (%v) and restarting it failed: %w", s.name, why, err)
	}
	s.mu.Lock()
	select {
	case <-s.stop:
		// Closed while restarting: the new transport has no owner.
		s.mu.Unlock()
		t.Close()
		return nil, fmt.Errorf("server %q: %w", s.name, errClosed)
	default:
	}
	s.t, s.dead, s.lastTry = t, nil, time.Time{}
	s.mu.Unlock()
	s.subscribe(t)
	if err := s.refresh(ctx, false); err != nil {
		s.reg.logger().Warn("listing tools after restart", "server", s.name, "err", err)
	}
	s.reg.logger().Info("server restarted", "server", s.name, "attempt", attempts+1)
	return t, nil
}
