// The README's fragment that goes on with the stdio program's session:
// s is connected to the reference server as that program connects it.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
)

func main() {
	ctx := context.Background()
	conn, err := stdio.Start(ctx, &stdio.Options{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"}})
	if err != nil {
		log.Fatal(err)
	}
	s, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	//README
}
