package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strconv"

	"github.com/tako-mcp/tako/dial"
	"github.com/tako-mcp/tako/orchestrator"
	"github.com/tako-mcp/tako/orchestrator/anthropic"
	"github.com/tako-mcp/tako/orchestrator/openai"
	"github.com/tako-mcp/tako/registry"
	"github.com/tako-mcp/tako/transport"
)

// agentInvocation is a parsed `tako agent` command line.
type agentInvocation struct {
	serverSet
	provider string
	model    string
	baseURL  string
	system   string
	maxTurns int
	prefix   bool
	prompt   string
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

// parseAgentArgs parses the arguments after "agent". Flags may come before
// or after the prompt; --env and --header apply to the server flag before
// them.
func parseAgentArgs(args []string) (*agentInvocation, error) {
	a := &agentInvocation{}
	own := map[string]func(string) error{}
	for name, set := range agentFlags {
		own[name] = func(v string) error { return set(a, v) }
	}
	bools := map[string]func(bool){}
	for name, set := range agentBoolFlags {
		bools[name] = func(v bool) { set(a, v) }
	}
	// The TLS flags of --grpc apply to the server flag before them, as
	// --env and --header do.
	var tlsErr error
	lastServer := func(flag string) *options {
		if len(a.servers) == 0 {
			tlsErr = cmp.Or(tlsErr, usagef("--%s applies to the --grpc flag before it; give --grpc HOST:PORT first", flag))
			return nil
		}
		return &a.servers[len(a.servers)-1]
	}
	for _, name := range []string{"cert", "key", "ca", "server-name"} {
		own[name] = func(v string) error {
			if o := lastServer(name); o != nil {
				return setGRPC(name)(o, v)
			}
			return tlsErr
		}
	}
	bools["plaintext"] = func(v bool) {
		if o := lastServer("plaintext"); o != nil {
			o.grpc.plaintext = v
		}
	}
	positional, err := a.parse("agent", args, own, bools)
	if err == nil {
		err = tlsErr
	}
	if err != nil || a.help {
		return a, err
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
	given := len(a.servers) // the flags' servers; the --config file's come after
	names, err := a.resolve("agent")
	if err != nil {
		return err
	}
	servers := make([]orchestrator.MCPServer, 0, len(a.servers))
	for i := range a.servers {
		s, err := dialServer(&a.servers[i], logger)
		if err != nil {
			return err
		}
		if i >= given {
			s.Name = names[i] // the file's own names; the flags' are dial's
		}
		servers = append(servers, orchestrator.MCPServer{Server: s})
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
		Session:             transport.Options{LogLevel: a.logLevel},
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

// dialServer is the dial.Server of one transport flag (or --config entry)
// with its --env, --header and TLS flags, checked as for every other
// command (chooseServer), so that a bad flag is a usage error before any
// server starts; the orchestrator then reaches the server through dial
// (any kind: stdio, --http, --ws, --grpc) with its own session options.
func dialServer(o *options, logger *slog.Logger) (dial.Server, error) {
	if _, err := chooseServer(o, logger); err != nil {
		return dial.Server{}, err
	}
	return serverOf(o)
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
