//go:build oldapi

package main

import (
	"context"

	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
)

// startStdio starts the stdio server with the first release's API (build
// with -tags oldapi against such a checkout).
func startStdio(ctx context.Context, cmd string, args []string) (transport.Conn, error) {
	return stdio.Start(ctx, stdio.Options{Command: cmd, Args: args})
}
