// The README's in-process Transport fragment: reg is a registry, session
// the demo server over stdio (built fresh by the test, on PATH), and the
// word_count tool's schema and function are these.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strconv"
	"strings"

	"github.com/tako-mcp/tako/examples/inproc"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/registry"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
)

var schema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)

func countWords(_ context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
	var in struct{ Text string }
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(strconv.Itoa(len(strings.Fields(in.Text))))}}, nil
}

func main() {
	ctx := context.Background()
	conn, err := stdio.Start(ctx, &stdio.Options{Command: "demo-server"})
	if err != nil {
		log.Fatal(err)
	}
	session, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		log.Fatal(err)
	}
	reg := registry.New(registry.Options{})
	defer reg.Close()
	args := json.RawMessage(`{"text":"one two three"}`)

	//README
	fmt.Println(res.Text())
	fmt.Println(reg.Dispatch(ctx, registry.Call{Name: "echo", Arguments: json.RawMessage(`{"message":"hi"}`)}).Text())
}
