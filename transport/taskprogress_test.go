package transport_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
)

// Progress sent after the CreateTaskResult reaches the caller's callback,
// until the task ends. Against mcptest: no peer tako is tested against
// sends progress from a running task (server-everything's research tool
// reports status messages only, and the Go peers' tasks send none).
func TestTaskProgressOutlivesTheCall(t *testing.T) {
	srv, _ := taskServer(t)
	release := make(chan struct{})
	err := srv.AddTool(mcp.Tool{Name: "steps", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
		func(ctx context.Context, req *mcptest.CallRequest) (*mcp.CallToolResult, error) {
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			for i := 1; i <= 2; i++ {
				if err := req.Progress(ctx, float64(i), 2, "step"); err != nil {
					return nil, err
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("stepped")}}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	s := connectTaskServer(t, srv, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := make(chan float64, 8)
	pctx := transport.WithProgress(ctx, func(p mcp.ProgressParams) { got <- p.Progress })

	task, err := s.CallToolTask(pctx, &mcp.CallToolParams{Name: "steps"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if task.ID() == "" {
		t.Fatal("answered at once; want a task")
	}
	// The handler sends nothing before this: every progress below comes
	// after the CreateTaskResult.
	close(release)
	for want := 1.0; want <= 2; want++ {
		select {
		case p := <-got:
			if p != want {
				t.Fatalf("progress %v, want %v", p, want)
			}
		case <-ctx.Done():
			t.Fatalf("progress %v after the task was created never reached the callback", want)
		}
	}
	res, err := task.Wait(ctx, &transport.WaitOptions{MinInterval: time.Millisecond, MaxInterval: 10 * time.Millisecond})
	if err != nil || res.Text() != "stepped" {
		t.Fatalf("wait: %v %v", res, err)
	}
	if n := transport.TaskRoutes(s); n != 0 {
		t.Fatalf("%d progress routes held after the task ended", n)
	}
}

// A tools/call with progress that is answered without a task holds no
// route afterwards.
func TestTaskProgressRouteDroppedForPlainCall(t *testing.T) {
	srv, _ := taskServer(t)
	s := connectTaskServer(t, srv, nil)
	pctx := transport.WithProgress(context.Background(), func(mcp.ProgressParams) {})
	if _, err := s.CallTool(pctx, &mcp.CallToolParams{Name: "plain"}); err != nil {
		t.Fatal(err)
	}
	if n := transport.TaskRoutes(s); n != 0 {
		t.Fatalf("%d progress routes held after a plain call", n)
	}
}
