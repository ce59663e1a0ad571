// Command conformance-client is tako's client under test for the official
// MCP conformance suite (@modelcontextprotocol/conformance). It follows the
// suite's client contract: the server URL is the last argument, the scenario
// comes in MCP_CONFORMANCE_SCENARIO, the protocol revision to speak in
// MCP_CONFORMANCE_PROTOCOL_VERSION, scenario data in MCP_CONFORMANCE_CONTEXT;
// it exits 0 when the scenario's work is done. Diagnostics go to stderr.
//
//	conformance-client [-protocol negotiate|REVISION] URL
//
// It is built on tako alone: streamablehttp.Dial and transport.Connect, and
// the auth package for every authorization scenario (authConfig maps the
// suite's context onto an auth.Config, as any program would map its own
// settings). The protocol revision is pinned to the one the suite asks for,
// or to -protocol's. When the suite names none (the 0.1.x suites) or with
// -protocol negotiate, nothing is pinned and the SDK negotiates as it does
// for any program with default options: server/discover, then initialize
// for a legacy server. run.sh runs every scenario both ways.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/tako-mcp/tako/auth"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/streamablehttp"
	"github.com/tako-mcp/tako/transport"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "conformance-client:", err)
		os.Exit(1)
	}
}

func run() error {
	flags := flag.NewFlagSet("conformance-client", flag.ContinueOnError)
	protocol := flags.String("protocol", "", `"negotiate" to pin no revision whatever the suite asks for, or the revision to pin`)
	if err := flags.Parse(os.Args[1:]); err != nil {
		return err
	}
	if flags.NArg() != 1 {
		return errors.New("usage: conformance-client [-protocol negotiate|REVISION] URL (with MCP_CONFORMANCE_SCENARIO set)")
	}
	url := flags.Arg(0)
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	version := os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION")
	switch *protocol {
	case "":
	case "negotiate":
		version = ""
	default:
		version = *protocol
	}
	// The suite kills a client after 30 s; end first, with a message.
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()

	level := slog.LevelInfo
	if os.Getenv("TAKO_DEBUG") != "" {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	cfg, err := authConfig(scenario, os.Getenv("MCP_CONFORMANCE_CONTEXT"), logger)
	if err != nil {
		return err
	}
	ac, err := auth.New(url, cfg)
	if err != nil {
		return err
	}
	conn, err := streamablehttp.Dial(ctx, url, &streamablehttp.Options{Logger: logger, Auth: ac})
	if err != nil {
		return err
	}
	s, err := transport.Connect(ctx, conn, &transport.Options{
		ProtocolVersion: version,
		ClientInfo:      mcp.Implementation{Name: "tako-conformance-client", Version: transport.Version},
		Logger:          logger,
		Handlers:        transport.Handlers{Elicitation: acceptEmpty},
	})
	if err != nil {
		return err
	}
	defer s.Close()
	logger.Info("connected", "scenario", scenario, "protocol", s.ServerInfo().ProtocolVersion)

	switch scenario {
	case "tools_call":
		if _, err := s.ListTools(ctx); err != nil {
			return err
		}
		return callTool(ctx, s, "add_numbers", `{"a":5,"b":3}`)
	case "sse-retry":
		if _, err := s.ListTools(ctx); err != nil {
			return err
		}
		return callTool(ctx, s, "test_reconnection", `{}`)
	case "elicitation-sep1034-client-defaults":
		if _, err := s.ListTools(ctx); err != nil {
			return err
		}
		return callTool(ctx, s, "test_client_elicitation_defaults", `{}`)
	case "http-standard-headers":
		return exerciseAll(ctx, s)
	case "http-custom-headers":
		return contextCalls(ctx, s)
	case "http-invalid-tool-headers", "sep-2322-client-request-state":
		// Call every tool listed. http-invalid-tool-headers checks that the
		// valid tool is called and no tool that failed the x-mcp-header
		// validation; sep-2322 that each multi round-trip tool completes
		// with requestState echoed, new ids, and no carry-over.
		return callEveryTool(ctx, s)
	case "json-schema-2020-12-preservation":
		tools, err := s.ListTools(ctx)
		if err != nil {
			return err
		}
		for _, t := range tools {
			if t.Name == "json_schema_2020_12_tool" {
				args, _ := json.Marshal(map[string]json.RawMessage{"schema": t.InputSchema})
				return callTool(ctx, s, "json_schema_echo", string(args))
			}
		}
		return errors.New("json_schema_2020_12_tool is not among the listed tools")
	case "json-schema-ref-no-deref", "request-metadata", "initialize":
		_, err := s.ListTools(ctx)
		return err
	default:
		if strings.HasPrefix(scenario, "auth/") {
			// Every authorization scenario: list the tools and call
			// them, so that a per-operation scope (step-up) is asked for.
			return callEveryTool(ctx, s)
		}
		// request-metadata, json-schema-ref-no-deref and
		// anything new: the handshake and a tools/list are the work.
		_, err := s.ListTools(ctx)
		return err
	}
}

func callTool(ctx context.Context, s *transport.Session, name, args string) error {
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		return fmt.Errorf("call %s: %w", name, err)
	}
	fmt.Fprintf(os.Stderr, "call %s: isError=%v %s\n", name, res.IsError, res.Text())
	return nil
}

// callEveryTool lists the tools and calls each with arguments that satisfy
// its schema's required properties.
func callEveryTool(ctx context.Context, s *transport.Session) error {
	tools, err := s.ListTools(ctx)
	if err != nil {
		return err
	}
	for _, t := range tools {
		if err := callTool(ctx, s, t.Name, string(sampleArgs(t.InputSchema))); err != nil {
			return err
		}
	}
	return nil
}

// exerciseAll sends every kind of request that carries Mcp-Name: each tool
// called, each resource read, each prompt got.
func exerciseAll(ctx context.Context, s *transport.Session) error {
	if err := callEveryTool(ctx, s); err != nil {
		return err
	}
	resources, err := s.ListResources(ctx)
	if err != nil {
		return err
	}
	for _, r := range resources {
		if _, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI}); err != nil {
			return fmt.Errorf("read %s: %w", r.URI, err)
		}
	}
	prompts, err := s.ListPrompts(ctx)
	if err != nil {
		return err
	}
	for _, p := range prompts {
		if _, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.Name}); err != nil {
			return fmt.Errorf("get prompt %s: %w", p.Name, err)
		}
	}
	return nil
}

// contextCalls makes exactly the tool calls MCP_CONFORMANCE_CONTEXT lists,
// after tools/list (which teaches the transport the x-mcp-header
// annotations).
func contextCalls(ctx context.Context, s *transport.Session) error {
	var c struct {
		ToolCalls []struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"toolCalls"`
	}
	if err := json.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &c); err != nil {
		return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
	}
	if _, err := s.ListTools(ctx); err != nil {
		return err
	}
	for _, tc := range c.ToolCalls {
		args := tc.Arguments
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		if err := callTool(ctx, s, tc.Name, string(args)); err != nil {
			return err
		}
	}
	return nil
}

// sampleArgs makes arguments that satisfy the required properties of a
// simple object schema, by type.
func sampleArgs(schema json.RawMessage) json.RawMessage {
	var sc struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(schema, &sc) != nil {
		return json.RawMessage(`{}`)
	}
	args := map[string]any{}
	for _, name := range sc.Required {
		typ, _ := sc.Properties[name].Type.(string)
		switch typ {
		case "integer", "number":
			args[name] = 1
		case "boolean":
			args[name] = true
		case "object":
			args[name] = map[string]any{}
		case "array":
			args[name] = []any{}
		case "null":
			args[name] = nil
		default:
			args[name] = "test"
		}
	}
	b, _ := json.Marshal(args)
	return b
}

// acceptEmpty accepts a form elicitation without touching a field, as a
// person who leaves every field as offered would: the SDK fills in the
// requested schema's defaults (elicitation-sep1034-client-defaults checks
// they arrive), so none of that logic lives here.
func acceptEmpty(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: mcp.ElicitAccept}, nil
}
