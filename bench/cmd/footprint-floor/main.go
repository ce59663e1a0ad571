// Command footprint-floor is bench/internal/footprint for the floor over
// stdio: a binary with the hand-written client and nothing else.
package main

import (
	"context"

	"github.com/tako-mcp/tako/bench/internal/floor"
	"github.com/tako-mcp/tako/bench/internal/footprint"
)

type client struct{ *floor.Client }

type bigArgs struct {
	Bytes int    `json:"bytes"`
	Kind  string `json:"kind"`
}

func (c client) Big(ctx context.Context, n int) (int, error) {
	b, err := floor.CallTool(ctx, c.Client, "big", bigArgs{Bytes: n, Kind: "text"})
	return len(b.Text), err
}

func main() {
	footprint.Main(func(ctx context.Context, server string) (footprint.Client, error) {
		c, err := floor.Start(ctx, footprint.ProtocolVersion, server)
		if err != nil {
			return nil, err
		}
		return client{c}, nil
	})
}
