package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/orchestrator"
	"github.com/tako-mcp/tako/orchestrator/anthropic"
	"github.com/tako-mcp/tako/orchestrator/openai"
	"github.com/tako-mcp/tako/registry"
	"github.com/tako-mcp/tako/transport"
)

// agentInvocation is a parsed `tako agent` command line.
type agentInvocation struct {
	provider string
	model    string
	baseURL  string
	system   string
	maxTurns int
	timeout  time.Duration
	prefix   bool
	logLevel mcp.LoggingLevel // --log-level: ask every server for its log messages
	verbose  bool
	help     bool
	servers  []options // one per transport flag, with its --env and --header
	// config and names are --config FILE and the --server NAMEs: all the
	// file's servers, or those named, join the servers above.
	config string
	names  []string
	prompt string
}

// agentFlags are the flags only `tako agent` has; everything else is looked
// up in the shared table (flagDefs), so that the transport flags and their
// --env and --header parse exactly as for the other commands.
var agentFlags = map[string]func(a *agentInvocation, v string) error{
	"provider": func(a *agentInvocation, v string) error {
		if v != "openai" && v != "anthropic" {
			return usagef("--provider wants openai or anthropic, not %q", v)
		}
		a.provider = v
		return nil
	},
	"model":    func(a *agentInvocation, v string) error { a.model = v; return nil },
	"base-url": func(a *agentInvocation, v string) error { a.baseURL = v; return nil },
	"system":   func(a *agentInvocation, v string) error { a.system = v; return nil },
	"max-turns": func(a *agentInvocation, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return usagef("--max-turns wants a positive number, not %q", v)
		}
		a.maxTurns = n
		return nil
	},
}

// agentBoolFlags take no value.
var agentBoolFlags = map[string]func(a *agentInvocation, v bool){
	"prefix": func(a *agentInvocation, v bool) { a.prefix = v },
}

// transportKinds are the shared flags that start a new server.
var transportKinds = map[string]bool{"stdio": true, "http": true, "ws": true, "grpc": true}

// parseAgentArgs parses the arguments after "agent". Flags may come before
// or after the prompt; --env and --header apply to the server flag before
// them.
func parseAgentArgs(args []string) (*agentInvocation, error) {
	a := &agentInvocation{}
	var positional []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if len(arg) < 2 || arg[0] != '-' {
			positional = append(positional, arg)
			continue
		}
		name := strings.TrimPrefix(strings.TrimPrefix(arg, "-"), "-")
		name, value, hasValue := strings.Cut(name, "=")
		if set, ok := agentBoolFlags[name]; ok {
			b := true
			if hasValue {
				var err error
				if b, err = strconv.ParseBool(value); err != nil {
					return nil, usagef("--%s is a boolean flag, not %q", name, value)
				}
			}
			set(a, b)
			continue
		}
		set, own := agentFlags[name]
		def := lookupFlag(name)
		if !own && def == nil {
			return nil, usagef("unknown flag %s for tako agent", quoteFlag(arg))
		}
		needsValue := own || def.arg != ""
		switch {
		case !needsValue && !hasValue:
			value = "true"
		case needsValue && !hasValue:
			if i+1 == len(args) {
				return nil, usagef("flag --%s needs a value", name)
			}
			i++
			value = args[i]
		}
		if own {
			if err := set(a, value); err != nil {
				return nil, err
			}
			continue
		}
		canonical := def.names[0]
		switch {
		case transportKinds[canonical]:
			var o options
			if err := def.set(&o, value); err != nil {
				return nil, err
			}
			a.servers = append(a.servers, o)
		case canonical == "env" || canonical == "header":
			if len(a.servers) == 0 {
				return nil, usagef("--%s applies to the server flag before it; give --stdio, --http or --ws first", canonical)
			}
			if err := def.set(&a.servers[len(a.servers)-1], value); err != nil {
				return nil, err
			}
		case canonical == "config":
			a.config = value
		case canonical == "server":
			if value == "" {
				return nil, usagef("--server needs a name from the --config file")
			}
			a.names = append(a.names, value)
		case canonical == "timeout", canonical == "verbose", canonical == "help", canonical == "log-level":
			var o options
			if err := def.set(&o, value); err != nil {
				return nil, err
			}
			a.timeout, a.verbose, a.help = max(a.timeout, o.timeout), a.verbose || o.verbose, a.help || o.help
			if o.logLevel != "" {
				a.logLevel = o.logLevel
			}
		default:
			return nil, usagef("--%s is not a flag of tako agent", canonical)
		}
	}
	if a.help {
		return a, nil
	}
	if len(a.names) > 0 && a.config == "" {
		return nil, usagef("--server NAME picks a server of a --config FILE; give the file too")
	}
	switch {
	case a.provider == "":
		return nil, usagef("tako agent needs --provider openai or --provider anthropic")
	case a.model == "":
		return nil, usagef("tako agent needs --model NAME")
	case len(positional) == 0:
		return nil, usagef(`tako agent needs a prompt: tako agent ... "what to do"`)
	case len(positional) > 1:
		return nil, usagef("tako agent takes one prompt (quote it): got %d arguments %q", len(positional), positional)
	}
	a.prompt = positional[0]
	return a, nil
}

// runAgent is `tako agent`: a model with the tools of every server given,
// run to its final answer. The model's text streams to stdout; tool calls,
// their progress and results, the servers' log messages and sampling
// requests are printed on stderr as they happen (agentPrinter).
func runAgent(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	a, err := parseAgentArgs(args)
	if err != nil {
		return err
	}
	if a.help {
		_, err := io.WriteString(stdout, commandHelp("agent"))
		return err
	}
	var logger *slog.Logger
	if a.verbose {
		logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	names := make([]string, len(a.servers))
	for i := range a.servers {
		names[i] = serverName(&a.servers[i])
	}
	if a.config != "" {
		cfg, err := configServers(a.config, a.names)
		if err != nil {
			return err
		}
		for _, s := range cfg {
			var o options
			if err := s.apply(a.config, &o); err != nil {
				return err
			}
			a.servers = append(a.servers, o)
			names = append(names, s.name)
		}
	}
	if len(a.servers) == 0 {
		return usagef(`tako agent needs a server: --stdio "CMD ARGS...", --http URL or --config FILE`)
	}
	servers := make([]orchestrator.MCPServer, 0, len(a.servers))
	for i := range a.servers {
		o := &a.servers[i]
		if a.logLevel != "" {
			o.logLevel = a.logLevel
		}
		// The agent's session options carry its sampling handler; the
		// dialer reads them when it connects.
		o.session = &transport.Options{}
		dial, err := chooseServer(o, logger)
		if err != nil {
			return err
		}
		servers = append(servers, orchestrator.MCPServer{
			Name: names[i],
			Connect: func(ctx context.Context, opts *transport.Options) (transport.Transport, error) {
				o.session.Handlers = opts.Handlers
				s, err := dial(ctx)
				if err != nil {
					return nil, err // not a typed nil in an interface
				}
				return s, nil
			},
		})
	}
	provider, err := newProvider(a)
	if err != nil {
		return err
	}
	if a.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.timeout)
		defer cancel()
	}
	out := &agentPrinter{stdout: stdout, stderr: stderr}
	cfg := orchestrator.Config{
		Provider:            provider,
		SystemPrompt:        a.system,
		MCPServers:          servers,
		MaxTurns:            a.maxTurns,
		IncludeInstructions: true,
		Sampling:            true,
		Logger:              logger,
		OnEvent:             out.event,
	}
	if a.prefix {
		cfg.Naming = registry.Prefix("__")
	}
	agent, err := orchestrator.New(ctx, cfg)
	if err != nil {
		return explainAgent(ctx, err)
	}
	defer agent.Close()
	_, err = agent.Run(ctx, a.prompt)
	if werr := out.finish(); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return explainAgent(ctx, err)
	}
	return nil
}

// explainAgent words an agent failure for a person.
func explainAgent(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &failure{msg: "agent: timed out (see --timeout)", err: err}
	case ctx.Err() != nil:
		return &failure{msg: "agent: interrupted", err: err}
	}
	return &failure{msg: "agent: " + err.Error(), err: err}
}

// serverName names a server after its flag's value, as New would.
func serverName(o *options) string {
	s := orchestrator.MCPServer{}
	switch o.server.kind {
	case "stdio":
		argv, err := splitCommand(o.server.value)
		if err != nil || len(argv) == 0 {
			return ""
		}
		s.Command, s.Args = argv[0], argv[1:]
	default:
		s.URL = strings.Replace(o.server.value, "ws", "http", 1)
	}
	return s.DerivedName()
}

func newProvider(a *agentInvocation) (orchestrator.Provider, error) {
	switch a.provider {
	case "anthropic":
		p, err := anthropic.New(anthropic.Options{Model: a.model, BaseURL: a.baseURL})
		if err != nil {
			return nil, usagef("%v", err)
		}
		return p, nil
	default:
		p, err := openai.New(openai.Options{Model: a.model, BaseURL: a.baseURL})
		if err != nil {
			return nil, usagef("%v", err)
		}
		return p, nil
	}
}

func compactJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}
