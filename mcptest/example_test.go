package mcptest_test

import (
	"context"
	"fmt"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
)

// A reference server in the same process, reached through tako's Session.
func ExampleNewReference() {
	ctx := context.Background()
	srv := mcptest.NewReference(mcptest.Options{})
	conn, wait := srv.Pipe(ctx)
	sess, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer wait()
	defer sess.Close()

	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.ToolEcho, Arguments: []byte(`{"message":"hello"}`)})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sess.ServerInfo().ProtocolVersion, res.Text())
	// Output: 2026-07-28 hello
}

// A tool that asks the client's model for a completion. The same handler
// works in both eras: a sampling/createMessage request in 2025-11-25, an
// input_required round (and a second run of the handler) in 2026-07-28.
func ExampleCallRequest_Sample() {
	ctx := context.Background()
	srv := mcptest.New(mcptest.Options{})
	srv.AddTool(mcp.Tool{Name: "haiku"}, func(ctx context.Context, req *mcptest.CallRequest) (*mcp.CallToolResult, error) {
		res, err := req.Sample(ctx, &mcp.CreateMessageParams{
			Messages:  []mcp.SamplingMessage{{Role: "user", Content: []byte(`{"type":"text","text":"a haiku, please"}`)}},
			MaxTokens: 50,
		})
		if err != nil {
			return nil, err // ErrInputRequired in 2026-07-28: the server takes it from here
		}
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("model " + res.Model)}}, nil
	})
	for _, version := range []string{mcp.Version20251125, mcp.Version20260728} {
		conn, wait := srv.Pipe(ctx)
		sess, err := transport.Connect(ctx, conn, &transport.Options{
			ProtocolVersion: version,
			Handlers: transport.Handlers{
				Sampling: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
					return &mcp.CreateMessageResult{Role: "assistant", Content: []byte(`{"type":"text","text":"..."}`), Model: "m-" + version}, nil
				},
			},
		})
		if err != nil {
			fmt.Println(err)
			return
		}
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "haiku"})
		if err != nil {
			fmt.Println(err)
		} else {
			fmt.Println(res.Text())
		}
		sess.Close()
		wait()
	}
	// Output:
	// model m-2025-11-25
	// model m-2026-07-28
}
