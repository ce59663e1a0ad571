package transport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
)

// An elicitation handler only says what the user typed: the engine fills
// in the defaults of the fields left as offered, and checks the answer
// against the requested schema before it is sent.
func ExampleHandlers_elicitation() {
	ctx := context.Background()
	srv := mcptest.New(mcptest.Options{})
	schema := json.RawMessage(`{"type":"object","properties":{
		"name":{"type":"string"},
		"size":{"type":"string","enum":["S","M","L"],"default":"M"}},"required":["name","size"]}`)
	err := srv.AddTool(mcp.Tool{Name: "order", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcptest.CallRequest) (*mcp.CallToolResult, error) {
			res, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "Your order?", RequestedSchema: schema})
			if err != nil {
				return nil, err
			}
			b, _ := json.Marshal(res.Content)
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(string(b))}}, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	conn, wait := srv.Pipe(ctx)
	defer wait()
	s, err := transport.Connect(ctx, conn, &transport.Options{Handlers: transport.Handlers{
		Elicitation: func(ctx context.Context, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			// A real host shows req.Message and a form; this user typed a
			// name and left the size as offered.
			return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"name": "Ada"}}, nil
		},
	}})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "order"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	// Output:
	// {"name":"Ada","size":"M"}
}
