package inproc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/tako-mcp/tako/examples/inproc"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/registry"
	"github.com/tako-mcp/tako/transport"
)

// A Transport of one's own goes into the registry like any MCP server:
// here an in-process Go service beside the reference MCP server, and a
// call to a tool of each.
func Example() {
	ctx := context.Background()
	conn, wait := mcptest.NewReference(mcptest.Options{}).Pipe(ctx)
	defer wait() // after reg.Close, which closes the session and so the pipe
	sess, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		log.Fatal(err)
	}
	reg := registry.New(registry.Options{})
	defer reg.Close()

	upper := inproc.Tool{
		Tool: mcp.Tool{Name: "shout", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		Run: func(_ context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
			var a struct{ Text string }
			if err := json.Unmarshal(args, &a); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(a.Text + "!")}}, nil
		},
	}
	if err := reg.AddServer(ctx, "go", inproc.New("go", upper), nil); err != nil {
		log.Fatal(err)
	}
	if err := reg.AddServer(ctx, "mcp", sess, nil); err != nil { // the registry owns sess now
		log.Fatal(err)
	}

	for _, call := range []registry.Call{
		{Name: "shout", Arguments: json.RawMessage(`{"text":"hello"}`)},
		{Name: "add", Arguments: json.RawMessage(`{"a":2,"b":3}`)},
	} {
		res := reg.Dispatch(ctx, call)
		fmt.Printf("%s (server %s): %s\n", call.Name, server(reg, call.Name), res.Text())
	}
	// Output:
	// shout (server go): hello!
	// add (server mcp): 5
}

// server names the server that owns a tool.
func server(reg *registry.Registry, tool string) string {
	for _, d := range reg.Tools() {
		if d.Name == tool {
			return d.Server
		}
	}
	return ""
}
