package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/tako-mcp/tako/dial"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/orchestrator"
	"github.com/tako-mcp/tako/orchestrator/anthropic"
	"github.com/tako-mcp/tako/orchestrator/openai"
	"github.com/tako-mcp/tako/registry"
	"github.com/tako-mcp/tako/transport"
)

// agentInvocation is a parsed `tako agent` command line.
type agentInvocation struct {
	serverSet
	providerFlags
	roots    []mcp.Root // --root DIR, given to every server
	system   string
	maxTurns int
	prefix   bool
	prompt   string
}

// agentFlags are the flags only `tako agent` has, besides the provider
// flags (providerFlagSetters); everything else is looked up in the shared
// table (flagDefs), so that the transport flags and their --env and
// --header parse exactly as for the other commands.
var agentFlags = map[string]func(a *agentInvocation, v string) error{
	"system": func(a *agentInvocation, v string) error { a.system = v; return nil },
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
	for name, set := range providerFlagSetters {
		own[name] = func(v string) error { return set(&a.providerFlags, v) }
	}
	own["root"] = func(v string) error {
		r, err := parseRoot(v)
		a.roots = append(a.roots, r)
		return err
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
		return nil, usagef("agent needs --provider openai or --provider anthropic")
	case a.model == "":
		return nil, usagef("agent needs --model NAME")
	case len(positional) == 0:
		return nil, usagef(`agent needs a prompt: tako agent ... "what to do"`)
	case len(positional) > 1:
		return nil, usagef("agent takes one prompt (quote it): got %d arguments %q", len(positional), positional)
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
	provider, err := newProvider(&a.providerFlags)
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
		Session:             transport.Options{LogLevel: a.logLevel, Roots: a.roots},
	}
	if a.prefix {
		cfg.Naming = registry.Prefix("__")
	}
	agent, err := orchestrator.New(ctx, cfg)
	if err != nil {
		return keepWhole(explainAgent(ctx, a, false, err), a.verbose)
	}
	defer agent.Close()
	res, err := agent.Run(ctx, a.prompt)
	if errors.Is(err, orchestrator.ErrMaxTurns) {
		err = finalTurn(ctx, a, provider, agent, res, out)
	}
	if werr := out.finish(); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return keepWhole(explainAgent(ctx, a, true, err), a.verbose)
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

// finishNote asks the model, at the turn limit, for the answer it has.
const finishNote = "The limit of turns is reached: tools can no longer be called. Answer now with what you have found so far, and say what is left undone."

// finalTurn runs, once the turn limit is reached, one more turn in which
// the model may not call tools, so that the run ends with the answer the
// model has so far rather than with nothing. Its error says that the
// answer is partial.
func finalTurn(ctx context.Context, a *agentInvocation, p orchestrator.Provider, agent *orchestrator.Agent, res *orchestrator.Result, out *agentPrinter) error {
	turns := a.maxTurns
	if turns == 0 {
		turns = 20
	}
	limit := &failure{msg: fmt.Sprintf("agent: the model used its %d turns (--max-turns) before it finished; the answer above is what it had by then", turns),
		err: orchestrator.ErrMaxTurns}
	if res == nil {
		return limit
	}
	var tools []orchestrator.ToolDef
	for _, d := range agent.Registry().Tools() {
		tools = append(tools, orchestrator.ToolDef{Name: d.Name, Description: d.Description, InputSchema: d.InputSchema})
	}
	system := finishNote
	if a.system != "" {
		system = a.system + "\n\n" + finishNote
	}
	out.event(orchestrator.Event{Kind: orchestrator.EventTurnStart})
	resp, err := p.Complete(ctx, &orchestrator.Request{System: system, Messages: res.Messages, Tools: tools,
		ToolChoice: orchestrator.ToolChoiceNone, MaxTokens: 4096}, func(d orchestrator.Delta) { out.text(d.Text) })
	if err != nil {
		return err
	}
	out.event(orchestrator.Event{Kind: orchestrator.EventTurnEnd, Response: resp})
	return limit
}

// newProvider makes the provider the flags name; a missing key is a usage
// error that says where to put it.
func newProvider(a *providerFlags) (orchestrator.Provider, error) {
	key := ""
	if a.apiKeyEnv != "" {
		if key = os.Getenv(a.apiKeyEnv); key == "" {
			return nil, usagef("--api-key-env names $%s, which is not set", a.apiKeyEnv)
		}
	}
	switch a.provider {
	case "anthropic":
		if key == "" && os.Getenv("ANTHROPIC_API_KEY") == "" {
			return nil, usagef("the anthropic provider needs an API key: set ANTHROPIC_API_KEY, or name another variable with --api-key-env VAR")
		}
		p, err := anthropic.New(anthropic.Options{Model: a.model, BaseURL: a.baseURL, APIKey: key})
		if err != nil {
			return nil, usagef("anthropic: %s", strings.TrimPrefix(err.Error(), "anthropic: "))
		}
		return p, nil
	default:
		p, err := openai.New(openai.Options{Model: a.model, BaseURL: a.baseURL, APIKey: key})
		if err != nil {
			return nil, usagef("openai: %s", strings.TrimPrefix(err.Error(), "openai: "))
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
