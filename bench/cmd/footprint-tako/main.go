// Command footprint-tako is bench/internal/footprint for tako over stdio:
// stdio.Start and transport.Connect, and no other client.
package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tako-mcp/tako/bench/internal/footprint"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
)

type client struct{ s *transport.Session }

type bigArgs struct {
	Bytes int    `json:"bytes"`
	Kind  string `json:"kind"`
}

func (c client) Big(ctx context.Context, n int) (int, error) {
	args, err := json.Marshal(bigArgs{Bytes: n, Kind: "text"})
	if err != nil {
		return 0, err
	}
	res, err := c.s.CallTool(ctx, &mcp.CallToolParams{Name: "big", Arguments: args})
	if err != nil {
		return 0, err
	}
	if len(res.Content) != 1 {
		return 0, fmt.Errorf("%d blocks", len(res.Content))
	}
	return len(res.Content[0].Text), nil
}

func (c client) Close() error { return c.s.Close() }

func main() {
	footprint.Main(func(ctx context.Context, server string) (footprint.Client, error) {
		conn, err := stdio.Start(ctx, &stdio.Options{Command: server})
		if err != nil {
			return nil, err
		}
		s, err := transport.Connect(ctx, conn, &transport.Options{ProtocolVersion: footprint.ProtocolVersion})
		if err != nil {
			return nil, err
		}
		return client{s}, nil
	})
}
