package stdio_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
)

// The main use: start a server as a subprocess, run the MCP handshake over
// its standard input and output, list its tools and call one. The server
// here is this example's own binary run again as a small MCP server with
// the demo server's tools (mcptest's reference server; see TestMain in
// main_test.go); a program names its server's command instead, such as
// npx with -y @modelcontextprotocol/server-everything.
func Example() {
	ctx := context.Background()
	conn, err := stdio.Start(ctx, &stdio.Options{
		Command: os.Args[0], // with Args, if the server takes any
		Env:     []string{serverEnv + "=reference"},
	})
	if err != nil {
		log.Fatal(err)
	}
	s, err := transport.Connect(ctx, conn, nil) // s owns conn from here
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close() // ends the server: stdin closed, then SIGTERM, then SIGKILL

	tools, err := s.ListTools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	fmt.Println("tools:", strings.Join(names, " "))

	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: json.RawMessage(`{"a":2,"b":3}`)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("2 + 3 =", res.Text(), string(res.StructuredContent))
	// Output:
	// tools: echo add progress sample elicit roots big notify sleep fail
	// 2 + 3 = 5 {"sum":5}
}
