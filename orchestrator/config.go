package orchestrator

// Design note: servers.
//
// The agent reaches its servers through dial and nothing else: an
// MCPServer is a dial.Server (or a shorthand for one), a Transport the
// program connected, or a Connect of its own. So the agent speaks every
// transport tako does, names servers as the CLI does (dial's default
// names, made unique with -2), and imports no transport package but
// transport itself (DESIGN.md). Of tako's packages it imports dial,
// registry and transport, and mcp: the data model sits under every layer,
// and a Message's content is the mcp.Content a tool result already holds,
// so a result reaches the model without a copy into types of the agent's
// own (transport re-exporting them would give each type two names). New
// checks every server before it starts
// any (Server.Check), then connects them concurrently, so one bad entry
// costs nothing and one failed handshake closes the rest.
//
// Ownership follows who connected. A registry the program hands over
// (Config.Registry) and what it already holds stay the program's; what the
// agent connects it also ends, by removing it from that registry at Close.
// With a registry of its own the agent owns everything in it.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/tako-mcp/tako/dial"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/registry"
	"github.com/tako-mcp/tako/transport"
)

// MCPServer is one server the agent connects to. Exactly one of Server,
// Command, URL, Transport and Connect is set.
type MCPServer struct {
	// Name identifies the server in errors, events and (with a naming
	// policy) tool names. Empty means Server.Name, else one derived as
	// DerivedName says, made unique.
	Name string

	// Server says how to reach the server: a command, or a URL of any
	// kind tako speaks (Streamable HTTP, the 2024-11-05 HTTP+SSE wire,
	// WebSocket, gRPC) with its headers, authorization and TLS. It is what
	// dial.LoadConfig returns for each entry of a configuration file. The
	// agent dials it (dial.Dial) with its session options.
	Server dial.Server

	// Command, Args, Env and Dir are short for Server{Command: Command,
	// Args: Args, Env: Env, Dir: Dir}: a subprocess that speaks MCP over
	// stdio. Env holds KEY=VALUE entries added to the inherited
	// environment.
	Command string
	Args    []string
	Env     []string
	Dir     string

	// URL and Header are short for Server{URL: URL, Header: Header}: the
	// URL's scheme says the transport (http and https: Streamable HTTP,
	// ws and wss: WebSocket, grpc: gRPC). Header is added to every request
	// (for example an Authorization header).
	URL    string
	Header http.Header

	// Transport is an already connected server, such as a Session over a
	// Conn of the program's own. The agent takes ownership and closes it.
	Transport transport.Transport

	// Connect connects to the server in a way of the program's own; the
	// agent calls it once from New (and again to restart it, if Restart
	// is set). opts are the session options the agent would use (with its
	// sampling handler when Config.Sampling is set); pass them to
	// transport.Connect.
	Connect func(ctx context.Context, opts *transport.Options) (transport.Transport, error)

	// Allow and Deny filter the server's tools by name (path.Match
	// patterns); see registry.ServerOptions.
	Allow, Deny []string

	// Restart, for every server but a Transport, connects the server again
	// on the next call after it died, at most MaxRestarts times (zero
	// means 3).
	Restart     bool
	MaxRestarts int
}

// dialed reports whether the agent reaches s through dial, and with what.
func (s *MCPServer) dialed() (dial.Server, bool) {
	switch {
	case s.Command != "":
		return dial.Server{Command: s.Command, Args: s.Args, Env: s.Env, Dir: s.Dir}, true
	case s.URL != "":
		return dial.Server{URL: s.URL, Header: s.Header}, true
	case s.Server.Command != "" || s.Server.URL != "":
		return s.Server, true
	}
	return dial.Server{}, false
}

// check reports a server whose configuration cannot work, before anything
// is started; name is the one New gave it.
func (s *MCPServer) check(name string) error {
	set := 0
	for _, b := range []bool{s.Server.Command != "" || s.Server.URL != "", s.Command != "", s.URL != "", s.Transport != nil, s.Connect != nil} {
		if b {
			set++
		}
	}
	if set != 1 {
		return errors.New("exactly one of Server, Command, URL, Transport and Connect must be set")
	}
	if ds, ok := s.dialed(); ok {
		ds.Name = name
		return ds.Check()
	}
	return nil
}

// Config configures an Agent. Provider is required; the zero value of
// everything else works.
type Config struct {
	Provider     Provider
	SystemPrompt string
	MCPServers   []MCPServer
	// Tools are local Go tools offered next to the servers' tools.
	Tools []registry.Tool

	// Naming renames the servers' tools, for example registry.Prefix("__")
	// to tell apart two servers that both have a "search" tool. Nil keeps
	// the servers' names, and a clash makes New fail.
	Naming registry.NamingPolicy

	// Registry, when set, is a registry the program built: the agent
	// offers the model its tools (local ones and every server's) instead
	// of building a registry of its own. Who owns what:
	//
	//   - the servers and tools already in Registry are the program's: the
	//     agent neither connected them nor closes them, and Close leaves
	//     Registry open;
	//   - the MCPServers are the agent's: New connects them and adds them
	//     to Registry, and Close removes them from it, which ends them;
	//   - Naming and Tools must be empty, since the registry's naming
	//     policy was fixed when it was built and it cannot remove a local
	//     tool again: add tools to Registry yourself.
	//
	// The program's servers were connected with its own session options,
	// so Sampling answers only the MCPServers' sampling requests, and
	// EventToolLog events come for Registry's servers only if the
	// program passes its registry.Options.OnNotification on to
	// Agent.HandleNotification.
	Registry *registry.Registry

	// MaxTurns bounds the model turns of one Run; zero means 20.
	MaxTurns int
	// MaxTokens bounds each answer; zero means 4096.
	MaxTokens int
	// Temperature, if set, is passed to the provider.
	Temperature *float64

	// IncludeInstructions adds each server's instructions to the system
	// prompt.
	IncludeInstructions bool
	// Sampling answers the servers' sampling/createMessage requests with
	// the agent's own Provider, and declares sampling with tools: a
	// request's tools are offered to the model and its calls returned as
	// tool_use blocks for the server to run (see EventSampling).
	Sampling bool

	// OnEvent receives progress events. Calls are serialised; a slow
	// callback slows the agent.
	OnEvent func(Event)

	// Session is the template for the sessions of the servers the agent
	// dials and of those it Connects (client info, protocol version,
	// timeouts, roots and elicitation handlers); a gRPC server takes its
	// Handlers and CallTimeout. Handlers.Sampling is set by the agent when
	// Sampling is.
	Session transport.Options

	// ConnectTimeout bounds each server's start and handshake in New
	// when the context has no deadline; zero means 60 seconds.
	ConnectTimeout time.Duration

	// Logger receives diagnostics (servers' stderr at Debug, failed
	// refreshes and tool calls at Warn). Nil discards them.
	Logger *slog.Logger
}

// ErrUnsupported is dial.ErrUnsupported, which a server configuration
// tako cannot reach (a URL of another scheme, an unknown kind) wraps.
var ErrUnsupported = dial.ErrUnsupported

// connectServers connects every server concurrently, after checking them
// all. On any failure it closes those that connected and returns every
// failure, each naming its server. taken are the names already in the
// registry, which the servers' derived names avoid.
func (a *Agent) connectServers(ctx context.Context, servers []MCPServer, taken []string) ([]string, []transport.Transport, error) {
	names := serverNames(servers, taken)
	errs := make([]error, len(servers))
	for i := range servers {
		if err := servers[i].check(names[i]); err != nil {
			errs[i] = nameError(names[i], err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	ts := make([]transport.Transport, len(servers))
	var wg sync.WaitGroup
	for i := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t, err := a.dial(ctx, &servers[i], names[i])
			if err != nil {
				errs[i] = nameError(names[i], err)
				return
			}
			ts[i] = t
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		closeAll(ts)
		return nil, nil, err
	}
	return names, ts, nil
}

// nameError names the server in err, unless dial did.
func nameError(name string, err error) error {
	var de *dial.Error
	if errors.As(err, &de) {
		return err
	}
	return fmt.Errorf("server %q: %w", name, err)
}

func closeAll(ts []transport.Transport) {
	var wg sync.WaitGroup
	for _, t := range ts {
		if t != nil {
			wg.Add(1)
			go func() { defer wg.Done(); t.Close() }()
		}
	}
	wg.Wait()
}

// dial connects one server as its configuration says; name is the one New
// gave it.
func (a *Agent) dial(ctx context.Context, s *MCPServer, name string) (transport.Transport, error) {
	switch {
	case s.Transport != nil:
		return s.Transport, nil
	case s.Connect != nil:
		t, err := s.Connect(ctx, a.sessionOptions(name))
		if err != nil {
			return nil, err // not a typed nil in an interface
		}
		return t, nil
	}
	ds, _ := s.dialed()
	ds.Name = name
	return dial.Dial(ctx, ds, a.sessionOptions(name))
}

// sessionOptions are the session options of the server New named name.
func (a *Agent) sessionOptions(name string) *transport.Options {
	o := a.cfg.Session
	if o.Logger == nil {
		o.Logger = a.cfg.Logger
	}
	if a.cfg.Sampling {
		o.Handlers.Sampling = func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return a.sample(ctx, name, p)
		}
		o.Handlers.SamplingTools = true
	}
	return &o
}

// serverNames returns a unique, tool-name-safe name for every server,
// none of them in taken.
func serverNames(servers []MCPServer, taken []string) []string {
	names := append([]string(nil), taken...)
	for i := range servers {
		n := servers[i].Name
		if n == "" {
			n = servers[i].DerivedName()
		}
		names = append(names, n)
	}
	return dial.UniqueNames(names)[len(taken):]
}

// DerivedName is the name New gives a server whose Name is empty: its
// Server's Name, else the server's default name (dial.Server.DefaultName:
// what the command runs, such as server-everything for npx -y
// @modelcontextprotocol/server-everything, or the URL's host, such as news
// for https://news.example.com/mcp), or a Transport's own name for itself,
// cleaned (dial.CleanName). New makes the names unique by appending -2, -3,
// and so on.
func (s *MCPServer) DerivedName() string {
	if ds, ok := s.dialed(); ok {
		if ds.Name != "" {
			return ds.Name
		}
		return ds.DefaultName()
	}
	var n string
	if s.Transport != nil {
		n = dial.CleanName(s.Transport.ServerInfo().Implementation.Name)
	}
	if n == "" {
		n = "server"
	}
	return n
}
