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

// A long-running tool runs as a task: CallToolTask starts it and Wait
// returns its result, polling at the server's interval and reporting each
// status change. The same code serves a 2025-11-25 server (params.task,
// tasks/result) and a 2026-07-28 one (the tasks extension); here an
// in-process server speaks the extension.
func ExampleSession_CallToolTask() {
	ctx := context.Background()
	srv := mcptest.New(mcptest.Options{Capabilities: &mcp.ServerCapabilities{
		Tools:      &mcp.ListChangedCapability{},
		Extensions: map[string]json.RawMessage{mcp.ExtensionTasks: json.RawMessage(`{}`)},
	}})
	err := srv.AddTool(mcp.Tool{
		Name:        "report",
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Execution:   &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional},
	}, func(context.Context, *mcptest.CallRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("all done")}}, nil
	})
	if err != nil {
		log.Fatal(err)
	}
	conn, wait := srv.Pipe(ctx)
	defer wait()
	s, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	task, err := s.CallToolTask(ctx, &mcp.CallToolParams{Name: "report"}, nil)
	if err != nil {
		log.Fatal(err)
	}
	res, err := task.Wait(ctx, &transport.WaitOptions{
		OnStatus: func(ti transport.TaskInfo) { fmt.Println("status", ti.Status) },
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	// Output:
	// status working
	// status completed
	// all done
}
