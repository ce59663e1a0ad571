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

// Connect runs the handshake over any Conn; here an in-process server on a
// Pipe stands in for a subprocess or a URL.
func ExampleConnect() {
	ctx := context.Background()
	srv := mcptest.NewReference(mcptest.Options{})
	conn, wait := srv.Pipe(ctx)
	defer wait()

	s, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	fmt.Println("protocol", s.ServerInfo().ProtocolVersion)
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"message":"hello"}`)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	// Output:
	// protocol 2026-07-28
	// hello
}

// A server may ask the client for things: Handlers answer them, the same
// way whether the server asked with a legacy request or a 2026-07-28
// input_required round.
func ExampleHandlers() {
	ctx := context.Background()
	conn, wait := mcptest.NewReference(mcptest.Options{}).Pipe(ctx)
	defer wait()

	s, err := transport.Connect(ctx, conn, &transport.Options{
		ProtocolVersion: mcp.Version20251125,
		Handlers: transport.Handlers{
			Sampling: func(ctx context.Context, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
				// A real host asks its model; this one answers at once.
				content, _ := json.Marshal(mcp.TextContent("a haiku about Go"))
				return &mcp.CreateMessageResult{Role: "assistant", Model: "example", Content: content}, nil
			},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "sample", Arguments: json.RawMessage(`{"prompt":"write a haiku"}`)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	// Output:
	// a haiku about Go
}

// WithProgress asks for progress on one call.
func ExampleWithProgress() {
	ctx := context.Background()
	conn, wait := mcptest.NewReference(mcptest.Options{}).Pipe(ctx)
	defer wait()
	s, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	ctx = transport.WithProgress(ctx, func(p mcp.ProgressParams) {
		fmt.Printf("%v/%v %s\n", p.Progress, *p.Total, p.Message)
	})
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "progress", Arguments: json.RawMessage(`{"steps":2}`)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	// Output:
	// 1/2 step 1 of 2
	// 2/2 step 2 of 2
	// done
}
