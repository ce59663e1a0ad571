package orchestrator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/orchestrator"
	"github.com/tako-mcp/tako/transport"
)

// scripted is a model of the example's own, as any Provider is one small
// type: its first turn asks for the add tool, its second answers with
// what the tool returned.
type scripted struct{}

func (scripted) Complete(_ context.Context, req *orchestrator.Request, _ func(orchestrator.Delta)) (*orchestrator.Response, error) {
	last := req.Messages[len(req.Messages)-1]
	if len(last.ToolResults) == 0 {
		var offered []string
		for _, t := range req.Tools {
			offered = append(offered, t.Name)
		}
		fmt.Println("the model is offered", offered)
		return &orchestrator.Response{
			ToolCalls:  []orchestrator.ToolCall{{ID: "call-1", Name: "add", Arguments: json.RawMessage(`{"a":17,"b":25}`)}},
			StopReason: orchestrator.StopToolUse,
		}, nil
	}
	return &orchestrator.Response{Text: "17 + 25 = " + last.ToolResults[0].Text(), StopReason: orchestrator.StopEndTurn}, nil
}

// An agent run: the model calls a tool of the agent's server, the agent
// runs it and gives the model the result, and the model answers. The
// server is mcptest's reference server in this process, reached through
// MCPServer.Connect; a Command or a URL is dialled the same way.
func Example() {
	ctx := context.Background()
	srv := mcptest.NewReference(mcptest.Options{})
	var waits []func() error
	agent, err := orchestrator.New(ctx, orchestrator.Config{
		Provider: scripted{},
		MCPServers: []orchestrator.MCPServer{{
			Name: "ref",
			// The agent calls Connect with its session options; the
			// pipe is served on ctx, which outlives New's own context.
			Connect: func(connectCtx context.Context, opts *transport.Options) (transport.Transport, error) {
				conn, wait := srv.Pipe(ctx)
				waits = append(waits, wait)
				return transport.Connect(connectCtx, conn, opts)
			},
			Allow: []string{"add", "echo"},
		}},
		OnEvent: func(e orchestrator.Event) {
			if e.Kind == orchestrator.EventToolEnd {
				fmt.Printf("ran %s on %s: %s\n", e.Call.Name, e.Server, e.Result.Text())
			}
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := agent.Run(ctx, "What is 17 + 25?")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s (%d turns)\n", res.Text, res.Turns)

	agent.Close() // ends the session, and so the pipe
	for _, wait := range waits {
		wait()
	}
	// Output:
	// the model is offered [add echo]
	// ran add on ref: 42
	// 17 + 25 = 42 (2 turns)
}
