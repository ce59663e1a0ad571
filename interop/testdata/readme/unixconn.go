// The README's Unix socket fragment: built, not run (the socket is the
// reader's; examples/unixconn's Example runs the same against a server).
package main

import (
	"context"
	"log"

	"github.com/tako-mcp/tako/examples/unixconn"
	"github.com/tako-mcp/tako/transport"
)

func main() {
	ctx := context.Background()
	//README
	_, _ = s, err
}
