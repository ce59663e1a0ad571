// Command footprint-mcpgo is bench/internal/footprint for mcp-go's client
// over stdio, and no other client.
package main

import (
	"context"
	"fmt"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/tako-mcp/tako/bench/internal/footprint"
)

type client struct{ c *mcpgoclient.Client }

func (c client) Big(ctx context.Context, n int) (int, error) {
	var req mcp.CallToolRequest
	req.Params.Name = "big"
	req.Params.Arguments = map[string]any{"bytes": n, "kind": "text"}
	res, err := c.c.CallTool(ctx, req)
	if err != nil {
		return 0, err
	}
	if len(res.Content) != 1 {
		return 0, fmt.Errorf("%d blocks", len(res.Content))
	}
	t, ok := mcp.AsTextContent(res.Content[0])
	if !ok {
		return 0, fmt.Errorf("got %T", res.Content[0])
	}
	return len(t.Text), nil
}

func (c client) Close() error { return c.c.Close() }

func main() {
	footprint.Main(func(ctx context.Context, server string) (footprint.Client, error) {
		c, err := mcpgoclient.NewStdioMCPClient(server, nil)
		if err != nil {
			return nil, err
		}
		var req mcp.InitializeRequest
		req.Params.ProtocolVersion = footprint.ProtocolVersion
		req.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "1.0.0"}
		if _, err := c.Initialize(ctx, req); err != nil {
			c.Close()
			return nil, err
		}
		return client{c}, nil
	})
}
