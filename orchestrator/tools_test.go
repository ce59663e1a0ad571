package orchestrator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/orchestrator"
	"github.com/tako-mcp/tako/registry"
)

// BenchmarkTurnTools is one agent turn that ends the conversation, with
// n local tools offered to a model that answers at once: what the agent
// itself does with the tool list each turn.
func BenchmarkTurnTools(b *testing.B) {
	ok := &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("ok")}}
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"A file's path"},"limit":{"type":"integer","minimum":1}},"required":["path"]}`)
	for _, n := range []int{100, 1000, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			tools := make([]registry.Tool, n)
			for i := range tools {
				tools[i] = registry.Tool{
					Name:        fmt.Sprintf("tool%05d", (i*7919)%n), // not added in name order
					Description: fmt.Sprintf("Tool number %d of a large catalogue; it answers ok.", i),
					InputSchema: schema,
					Handler:     func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) { return ok, nil },
				}
			}
			answer := &orchestrator.Response{Text: "done", StopReason: orchestrator.StopEndTurn}
			quiet := orchestrator.ProviderFunc(func(ctx context.Context, req *orchestrator.Request, _ func(orchestrator.Delta)) (*orchestrator.Response, error) {
				if len(req.Tools) != n {
					return nil, fmt.Errorf("the turn offered %d tools, want %d", len(req.Tools), n)
				}
				return answer, nil
			})
			ctx := context.Background()
			a, err := orchestrator.New(ctx, orchestrator.Config{Provider: quiet, Tools: tools})
			if err != nil {
				b.Fatal(err)
			}
			defer a.Close()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Run(ctx, "hello"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestTurnOffersToolsAddedMidRun pins the agent's tool list to the
// registry's: it is converted once per change, and a tool added while a
// conversation runs (as a server's list_changed adds one) is offered,
// and callable, from the next turn.
func TestTurnOffersToolsAddedMidRun(t *testing.T) {
	ctx := testContext(t)
	reg := registry.New(registry.Options{})
	defer reg.Close()
	later, err := registry.Func("later", "added during the run", func(context.Context, struct{}) (string, error) { return "here", nil })
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := registry.Func("unlock", "adds the tool later", func(context.Context, struct{}) (string, error) {
		return "unlocked", reg.AddTool(later)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.AddTool(unlock); err != nil {
		t.Fatal(err)
	}
	model := &script{turns: []func(*orchestrator.Request) (*orchestrator.Response, error){
		callTools(orchestrator.ToolCall{ID: "1", Name: "unlock"}),
		callTools(orchestrator.ToolCall{ID: "2", Name: "later"}),
		answer("done"),
	}}
	a, err := orchestrator.New(ctx, orchestrator.Config{Provider: model, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	res, err := a.Run(ctx, "go")
	if err != nil {
		t.Fatal(err)
	}
	names := func(req *orchestrator.Request) (out []string) {
		for _, d := range req.Tools {
			out = append(out, d.Name)
		}
		return out
	}
	reqs := model.requests()
	if got := names(reqs[0]); !slices.Equal(got, []string{"unlock"}) {
		t.Errorf("turn 1 offered %q, want [unlock]", got)
	}
	for i, req := range reqs[1:] {
		if got := names(req); !slices.Equal(got, []string{"later", "unlock"}) {
			t.Errorf("turn %d offered %q, want [later unlock]", i+2, got)
		}
	}
	if got := res.Messages[4].ToolResults[0]; got.IsError || got.Text() != "here" {
		t.Errorf("later: %+v", got)
	}
}
