//go:build !oldapi

package main

import (
	"context"

	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
)

// startStdio starts the stdio server; the options became a pointer after
// the first release, which is the one difference between the two builds.
func startStdio(ctx context.Context, cmd string, args []string) (transport.Conn, error) {
	return stdio.Start(ctx, &stdio.Options{Command: cmd, Args: args})
}
