package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/registry"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/streamablehttp"
	"github.com/tako-mcp/tako/transport"
)

// MCPServer is one server the agent connects to. Exactly one of Command,
// URL, Transport and Connect is set.
type MCPServer struct {
	// Name identifies the server in errors, events and (with a naming
	// policy) tool names. Empty means one derived from the command's base
	// name, the URL's host, or the server's own name, made unique.
	Name string

	// Command, Args, Env and Dir start a server as a subprocess that
	// speaks MCP over stdio. Env holds KEY=VALUE entries added to the
	// inherited environment.
	Command string
	Args    []string
	Env     []string
	Dir     string

	// URL reaches a server over Streamable HTTP; Header is added to every
	// request (for example an Authorization header).
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

	// Restart, for Command and Connect servers, starts the server again
	// on the next call after it died, at most MaxRestarts times (zero
	// means 3).
	Restart     bool
	MaxRestarts int
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

	// Session is the template for the sessions of Command and URL servers
	// (client info, protocol version, timeouts, roots and elicitation
	// handlers). Handlers.Sampling is set by the agent when Sampling is.
	Session transport.Options

	// ConnectTimeout bounds each server's start and handshake in New
	// when the context has no deadline; zero means 60 seconds.
	ConnectTimeout time.Duration

	// Logger receives diagnostics (servers' stderr at Debug, failed
	// refreshes and tool calls at Warn). Nil discards them.
	Logger *slog.Logger
}

// ErrUnsupported is returned for a server configuration tako cannot
// reach, such as a URL whose scheme is not http or https.
var ErrUnsupported = errors.New("orchestrator: not supported")

// connectServers connects every server concurrently. On any failure it
// closes those that connected and returns every failure, each naming its
// server.
func (a *Agent) connectServers(ctx context.Context, servers []MCPServer) ([]string, []transport.Transport, error) {
	names := serverNames(servers)
	ts := make([]transport.Transport, len(servers))
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t, err := a.dial(ctx, &servers[i], names[i])
			if err != nil {
				errs[i] = fmt.Errorf("server %q: %w", names[i], err)
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
	set := 0
	for _, b := range []bool{s.Command != "", s.URL != "", s.Transport != nil, s.Connect != nil} {
		if b {
			set++
		}
	}
	if set != 1 {
		return nil, errors.New("exactly one of Command, URL, Transport and Connect must be set")
	}
	switch {
	case s.Transport != nil:
		return s.Transport, nil
	case s.Connect != nil:
		return s.Connect(ctx, a.sessionOptions(name))
	case s.URL != "":
		return a.dialURL(ctx, s, name)
	default:
		return a.dialStdio(ctx, s, name)
	}
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

func (a *Agent) dialStdio(ctx context.Context, s *MCPServer, name string) (transport.Transport, error) {
	conn, err := stdio.Start(ctx, &stdio.Options{
		Command: s.Command,
		Args:    s.Args,
		Env:     s.Env,
		Dir:     s.Dir,
		Logger:  a.cfg.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", s.Command, err)
	}
	sess, err := transport.Connect(ctx, conn, a.sessionOptions(name))
	if err != nil {
		return nil, fmt.Errorf("handshake with %s: %w", s.Command, err)
	}
	return sess, nil
}

// dialURL reaches a server over Streamable HTTP. It is the one place that
// knows that transport.
func (a *Agent) dialURL(ctx context.Context, s *MCPServer, name string) (transport.Transport, error) {
	u, err := url.Parse(s.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: URL %q is not an http or https URL", ErrUnsupported, s.URL)
	}
	conn, err := streamablehttp.Dial(ctx, s.URL, &streamablehttp.Options{Header: s.Header, Logger: a.cfg.Logger})
	if err != nil {
		return nil, err
	}
	sess, err := transport.Connect(ctx, conn, a.sessionOptions(name))
	if err != nil {
		return nil, fmt.Errorf("handshake with %s: %w", s.URL, err)
	}
	return sess, nil
}

// serverNames returns a unique, tool-name-safe name for every server.
func serverNames(servers []MCPServer) []string {
	names := make([]string, len(servers))
	used := map[string]int{}
	for i := range servers {
		n := servers[i].Name
		if n == "" {
			n = servers[i].DerivedName()
		}
		used[n]++
		if c := used[n]; c > 1 {
			n = fmt.Sprintf("%s%d", n, c)
		}
		names[i] = n
	}
	return names
}

// DerivedName is the name New gives a server whose Name is empty: the
// package or script a launcher such as npx, uvx, node or python runs (less
// a "server-" prefix), else the command's base name; the URL's host; or the
// connected server's own name. Only letters, digits, '_' and '-' are kept,
// since the name may become part of tool names. New makes the names unique
// by appending a number.
func (s *MCPServer) DerivedName() string {
	var n string
	switch {
	case s.Command != "":
		n = commandName(s.Command, s.Args)
	case s.URL != "":
		if u, err := url.Parse(s.URL); err == nil {
			n = u.Hostname()
		}
	case s.Transport != nil:
		n = s.Transport.ServerInfo().Implementation.Name
	}
	n = sanitize(n)
	if n == "" {
		n = "server"
	}
	return n
}

// commandName names a stdio server after what it runs: the package or
// script for launchers such as npx, uvx, node or python, else the command.
func commandName(command string, args []string) string {
	base := filepath.Base(command)
	switch strings.TrimSuffix(base, ".exe") {
	case "npx", "uvx", "node", "python", "python3", "deno", "bun", "go":
		for _, a := range args {
			if a == "" || a[0] == '-' || a == "run" {
				continue
			}
			// A script such as .../server-everything/dist/index.js is
			// named after its package directory.
			dir, name := filepath.Split(a)
			name = strings.TrimSuffix(name, filepath.Ext(name))
			for (name == "index" || name == "main" || name == "dist" || name == "build" || name == "lib" || name == "src") && dir != "" {
				dir, name = filepath.Split(strings.TrimSuffix(dir, string(filepath.Separator)))
			}
			if i := strings.LastIndex(name, "server-"); i >= 0 && len(name) > i+7 {
				name = name[i+7:]
			}
			if name == "" || name == "." || name == "index" || name == "main" {
				continue
			}
			return name
		}
	}
	return base
}

// sanitize keeps the characters every model API accepts in a tool name.
func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return strings.Trim(b.String(), "_")
}
