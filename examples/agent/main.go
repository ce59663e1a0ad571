// Command agent is a small agent built on tako: a model with the tools of
// two MCP servers and one local Go tool, run on a prompt until it answers.
//
// It needs a model endpoint. By default it speaks the OpenAI Chat
// Completions API at $OPENAI_BASE_URL (for a local server such as
// llama.cpp's `llama-server --jinja`, vLLM or Ollama, something like
// http://127.0.0.1:8080/v1), with $OPENAI_API_KEY if set; -provider
// anthropic uses the Anthropic Messages API with $ANTHROPIC_API_KEY.
//
//	OPENAI_BASE_URL=http://127.0.0.1:8080/v1 go run ./examples/agent -model qwen3 \
//	    "What is 17+25? Then count the words of your answer."
//
// The two servers default to tako's demo server and a second copy of it
// under another name (both built with `go run`, so the first start takes a
// moment); -server replaces them with any stdio servers, for example
// -server "npx -y @modelcontextprotocol/server-everything". Their tools are
// offered as SERVER__TOOL, so servers with tools of the same name can sit
// side by side.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/tako-mcp/tako/orchestrator"
	"github.com/tako-mcp/tako/orchestrator/anthropic"
	"github.com/tako-mcp/tako/orchestrator/openai"
	"github.com/tako-mcp/tako/registry"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
}

// serverList is a repeatable -server flag.
type serverList []string

func (s *serverList) String() string     { return strings.Join(*s, "; ") }
func (s *serverList) Set(v string) error { *s = append(*s, v); return nil }

// wordCountArgs are the arguments of the local tool; the JSON Schema the
// model sees is derived from this struct.
type wordCountArgs struct {
	Text string `json:"text" description:"the text whose words to count"`
}

// run is the whole program with its streams passed in, so that a test can
// run it against a fake model.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	provider := fs.String("provider", "openai", "openai (Chat Completions, also local servers) or anthropic")
	model := fs.String("model", os.Getenv("TAKO_MODEL"), "the model's name (default $TAKO_MODEL)")
	baseURL := fs.String("base-url", "", "the API root (default $OPENAI_BASE_URL or $ANTHROPIC_BASE_URL)")
	maxTurns := fs.Int("max-turns", 10, "stop after this many model turns")
	var servers serverList
	fs.Var(&servers, "server", "a stdio server command (repeatable; default: two demo servers)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New(`give one prompt, quoted: agent -model M "what to do"`)
	}
	if *model == "" {
		return errors.New("no model: give -model or set TAKO_MODEL")
	}

	var p orchestrator.Provider
	var err error
	switch *provider {
	case "openai":
		p, err = openai.New(openai.Options{Model: *model, BaseURL: *baseURL})
	case "anthropic":
		p, err = anthropic.New(anthropic.Options{Model: *model, BaseURL: *baseURL})
	default:
		err = fmt.Errorf("unknown provider %q", *provider)
	}
	if err != nil {
		return err
	}

	if len(servers) == 0 {
		servers = serverList{"go run ./examples/demo-server", "go run ./examples/demo-server -name second-demo"}
	}
	var mcpServers []orchestrator.MCPServer
	for i, s := range servers {
		argv := strings.Fields(s)
		mcpServers = append(mcpServers, orchestrator.MCPServer{
			Name:    fmt.Sprintf("s%d", i+1),
			Command: argv[0],
			Args:    argv[1:],
			Restart: true, // a server that crashes comes back on the next call
		})
	}

	wordCount, err := registry.Func("word_count", "Counts the words of a text.",
		func(ctx context.Context, in wordCountArgs) (string, error) {
			return fmt.Sprint(len(strings.Fields(in.Text))), nil
		})
	if err != nil {
		return err
	}

	agent, err := orchestrator.New(ctx, orchestrator.Config{
		Provider:            p,
		SystemPrompt:        "You are a helpful assistant. Use the tools when they help.",
		MCPServers:          mcpServers,
		Tools:               []registry.Tool{wordCount},
		Naming:              registry.Prefix("__"),
		MaxTurns:            *maxTurns,
		IncludeInstructions: true,
		Sampling:            true, // a server may ask our model for a completion
		ConnectTimeout:      2 * time.Minute,
		OnEvent: func(e orchestrator.Event) {
			switch e.Kind {
			case orchestrator.EventToolStart:
				fmt.Fprintf(stderr, "→ %s %s\n", e.Call.Name, e.Call.Arguments)
			case orchestrator.EventToolEnd:
				fmt.Fprintf(stderr, "← %s (%s, error=%v): %s\n", e.Call.Name, e.Duration.Round(time.Millisecond), e.Result.IsError, orchestrator.ResultText(e.Result))
			}
		},
	})
	if err != nil {
		return err
	}
	defer agent.Close()

	res, err := agent.Run(ctx, fs.Arg(0))
	if res != nil && res.Text != "" {
		fmt.Fprintln(stdout, res.Text)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "(%d turns, %d input and %d output tokens)\n", res.Turns, res.Usage.InputTokens, res.Usage.OutputTokens)
	return nil
}
