package registry_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/registry"
	"github.com/tako-mcp/tako/transport"
)

// A Go tool reports its progress with ReportProgress; whoever called it
// with transport.WithProgress (the agent does) sees each step before the
// result.
func ExampleReportProgress() {
	reg := registry.New(registry.Options{})
	defer reg.Close()
	_ = reg.AddTool(registry.Tool{Name: "count", Handler: func(ctx context.Context, _ json.RawMessage) (*mcp.CallToolResult, error) {
		for i := 1; i <= 3; i++ {
			registry.ReportProgress(ctx, float64(i), 3, "counting")
		}
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("done")}}, nil
	}})
	ctx := transport.WithProgress(context.Background(), func(p mcp.ProgressParams) {
		fmt.Printf("%v of %v: %s\n", p.Progress, *p.Total, p.Message)
	})
	res := reg.Dispatch(ctx, registry.Call{Name: "count"})
	fmt.Println(res.Text())
	// Output:
	// 1 of 3: counting
	// 2 of 3: counting
	// 3 of 3: counting
	// done
}
