package bench

import (
	"context"

	"github.com/tako-mcp/tako/bench/internal/floor"
)

// floorClient is the floor over stdio and WebSocket (internal/floor, the
// least work a client can do) with the benchmark's calls.
type floorClient struct{ *floor.Client }

func startFloor(ctx context.Context, ep *Endpoint) (client, error) {
	c, err := floor.Start(ctx, protocolVersion, ep.Command, ep.Args...)
	if err != nil {
		return nil, err
	}
	return floorClient{c}, nil
}

func (c floorClient) echo(ctx context.Context) error {
	b, err := floor.CallTool(ctx, c.Client, "echo", echoArgs{Message: echoMessage})
	if err != nil {
		return err
	}
	return checkEcho(b.Text)
}

func (c floorClient) big(ctx context.Context, kind string, n int) (received, error) {
	b, err := floor.CallTool(ctx, c.Client, "big", bigArgs{Bytes: n, Kind: kind})
	return blockData(kind, b.Text, b.Data), err
}

func (c floorClient) listTools(ctx context.Context) (int, error) { return c.ListTools(ctx) }
