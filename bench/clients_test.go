package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
)

// protocolVersion is pinned on every client: the perf anchors were measured
// with it, and it keeps every client on the same (initialize) handshake.
const protocolVersion = "2025-11-25"

// echoMessage and echoWant are the echo call of every benchmark: the size of
// the perf anchors' echo call.
const (
	echoMessage = "hello, world"
	echoWant    = "Echo: " + echoMessage
)

// echoArgs and bigArgs are the tools' arguments as a Go program holds them.
// Every client marshals them from these values on each call (tako's
// CallToolParams takes json.RawMessage, so its adapter calls json.Marshal),
// so no client is spared the work a real caller does.
type echoArgs struct {
	Message string `json:"message"`
}

type bigArgs struct {
	Bytes int `json:"bytes"`
}

// client is what the benchmarks need of each MCP client: one tool call of
// each kind and Close. echo checks the text it got back; big returns the
// length of the text block.
type client interface {
	echo(ctx context.Context) error
	big(ctx context.Context, n int) (int, error)
	Close() error
}

// kind names one of the clients compared and starts it against the server
// binary.
type kind struct {
	name  string
	start func(ctx context.Context, server string) (client, error)
}

// kinds are the clients, in the order of the perf anchors' table.
var kinds = []kind{
	{"floor", startFloor},
	{"tako", startTako},
	{"gosdk", startGoSDK},
	{"mcpgo", startMCPGo},
}

func checkEcho(text string) error {
	if text != echoWant {
		return fmt.Errorf("echo returned %q, want %q", text, echoWant)
	}
	return nil
}

// --- tako ---

type takoClient struct{ s *transport.Session }

func startTako(ctx context.Context, server string) (client, error) {
	conn, err := stdio.Start(ctx, &stdio.Options{Command: server})
	if err != nil {
		return nil, err
	}
	s, err := transport.Connect(ctx, conn, &transport.Options{ProtocolVersion: protocolVersion})
	if err != nil {
		return nil, err // Connect closed conn
	}
	return &takoClient{s: s}, nil
}

func (c *takoClient) call(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	res, err := c.s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: raw})
	if err != nil {
		return nil, err
	}
	if res.IsError || len(res.Content) != 1 {
		return nil, fmt.Errorf("%s: unexpected result: isError=%v, %d blocks", name, res.IsError, len(res.Content))
	}
	return res, nil
}

func (c *takoClient) echo(ctx context.Context) error {
	res, err := c.call(ctx, "echo", echoArgs{Message: echoMessage})
	if err != nil {
		return err
	}
	return checkEcho(res.Content[0].Text)
}

func (c *takoClient) big(ctx context.Context, n int) (int, error) {
	res, err := c.call(ctx, "big", bigArgs{Bytes: n})
	if err != nil {
		return 0, err
	}
	return len(res.Content[0].Text), nil
}

func (c *takoClient) Close() error { return c.s.Close() }

// --- the official Go SDK ---

type goSDKClient struct{ cs *gosdk.ClientSession }

func startGoSDK(ctx context.Context, server string) (client, error) {
	c := gosdk.NewClient(&gosdk.Implementation{Name: "bench", Version: "1.0.0"}, nil)
	cs, err := c.Connect(ctx, &gosdk.CommandTransport{Command: exec.Command(server)},
		&gosdk.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		return nil, err
	}
	return &goSDKClient{cs: cs}, nil
}

func (c *goSDKClient) call(ctx context.Context, name string, args any) (string, error) {
	res, err := c.cs.CallTool(ctx, &gosdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) != 1 {
		return "", fmt.Errorf("%s: unexpected result: isError=%v, %d blocks", name, res.IsError, len(res.Content))
	}
	t, ok := res.Content[0].(*gosdk.TextContent)
	if !ok {
		return "", fmt.Errorf("%s: got %T, want text", name, res.Content[0])
	}
	return t.Text, nil
}

func (c *goSDKClient) echo(ctx context.Context) error {
	text, err := c.call(ctx, "echo", echoArgs{Message: echoMessage})
	if err != nil {
		return err
	}
	return checkEcho(text)
}

func (c *goSDKClient) big(ctx context.Context, n int) (int, error) {
	text, err := c.call(ctx, "big", bigArgs{Bytes: n})
	return len(text), err
}

func (c *goSDKClient) Close() error { return c.cs.Close() }

// --- mcp-go ---

type mcpGoClient struct{ c *mcpgoclient.Client }

func startMCPGo(ctx context.Context, server string) (client, error) {
	// NewStdioMCPClient starts the process; Initialize then runs the
	// handshake. A legacy revision in the request keeps mcp-go off its
	// server/discover probe.
	c, err := mcpgoclient.NewStdioMCPClient(server, nil)
	if err != nil {
		return nil, err
	}
	var req mcpgo.InitializeRequest
	req.Params.ProtocolVersion = protocolVersion
	req.Params.ClientInfo = mcpgo.Implementation{Name: "bench", Version: "1.0.0"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		c.Close()
		return nil, err
	}
	if res.ProtocolVersion != protocolVersion {
		c.Close()
		return nil, fmt.Errorf("mcp-go negotiated %q, want %q", res.ProtocolVersion, protocolVersion)
	}
	return &mcpGoClient{c: c}, nil
}

func (c *mcpGoClient) call(ctx context.Context, name string, args any) (string, error) {
	var req mcpgo.CallToolRequest
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.c.CallTool(ctx, req)
	if err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) != 1 {
		return "", fmt.Errorf("%s: unexpected result: isError=%v, %d blocks", name, res.IsError, len(res.Content))
	}
	t, ok := mcpgo.AsTextContent(res.Content[0])
	if !ok {
		return "", fmt.Errorf("%s: got %T, want text", name, res.Content[0])
	}
	return t.Text, nil
}

func (c *mcpGoClient) echo(ctx context.Context) error {
	text, err := c.call(ctx, "echo", echoArgs{Message: echoMessage})
	if err != nil {
		return err
	}
	return checkEcho(text)
}

func (c *mcpGoClient) big(ctx context.Context, n int) (int, error) {
	text, err := c.call(ctx, "big", bigArgs{Bytes: n})
	return len(text), err
}

func (c *mcpGoClient) Close() error { return c.c.Close() }
