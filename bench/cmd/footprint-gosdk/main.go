// Command footprint-gosdk is bench/internal/footprint for the official Go
// SDK's client over stdio (CommandTransport), and no other client.
package main

import (
	"context"
	"fmt"
	"os/exec"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tako-mcp/tako/bench/internal/footprint"
)

type client struct{ cs *mcp.ClientSession }

func (c client) Big(ctx context.Context, n int) (int, error) {
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "big", Arguments: map[string]any{"bytes": n, "kind": "text"}})
	if err != nil {
		return 0, err
	}
	if len(res.Content) != 1 {
		return 0, fmt.Errorf("%d blocks", len(res.Content))
	}
	t, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return 0, fmt.Errorf("got %T", res.Content[0])
	}
	return len(t.Text), nil
}

func (c client) Close() error { return c.cs.Close() }

func main() {
	footprint.Main(func(ctx context.Context, server string) (footprint.Client, error) {
		c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1.0.0"}, nil)
		cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(server)},
			&mcp.ClientSessionOptions{ProtocolVersion: footprint.ProtocolVersion})
		if err != nil {
			return nil, err
		}
		return client{cs}, nil
	})
}
