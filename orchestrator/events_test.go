package orchestrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/orchestrator"
	"github.com/tako-mcp/tako/registry"
	"github.com/tako-mcp/tako/transport"
)

// eventLog records an agent's events.
type eventLog struct {
	mu     sync.Mutex
	events []orchestrator.Event
}

func (l *eventLog) add(e orchestrator.Event) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

func (l *eventLog) all() []orchestrator.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]orchestrator.Event(nil), l.events...)
}

// TestToolProgressAndLogEvents runs a tool that logs and reports progress:
// the agent's events must show both while the call runs, before its end,
// in both eras.
func TestToolProgressAndLogEvents(t *testing.T) {
	for _, version := range []string{mcp.Version20251125, ""} {
		name := version
		if name == "" {
			name = "latest"
		}
		t.Run(name, func(t *testing.T) {
			srv := mcptest.New(mcptest.Options{ServerInfo: mcp.Implementation{Name: "slow", Version: "1"}})
			srv.AddTool(mcp.Tool{Name: "work"}, func(ctx context.Context, req *mcptest.CallRequest) (*mcp.CallToolResult, error) {
				if err := req.Log(ctx, mcp.LevelInfo, "starting"); err != nil {
					return nil, err
				}
				for i := 1; i <= 3; i++ {
					if err := req.Progress(ctx, float64(i), 3, "step"); err != nil {
						return nil, err
					}
				}
				return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("worked")}}, nil
			})
			model := &script{turns: []func(*orchestrator.Request) (*orchestrator.Response, error){
				callTools(orchestrator.ToolCall{ID: "w", Name: "work"}),
				answer("done"),
			}}
			var log eventLog
			agent, err := orchestrator.New(testContext(t), orchestrator.Config{
				Provider:   model,
				MCPServers: []orchestrator.MCPServer{pipeServer(t, "slow", srv)},
				Session:    transport.Options{ProtocolVersion: version, LogLevel: mcp.LevelDebug},
				OnEvent:    log.add,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer agent.Close()
			if _, err := agent.Run(testContext(t), "work"); err != nil {
				t.Fatal(err)
			}
			var kinds []orchestrator.EventKind
			var progress []float64
			sawLog := false
			for _, e := range log.all() {
				switch e.Kind {
				case orchestrator.EventToolProgress:
					if e.Call == nil || e.Call.ID != "w" || e.Server != "slow" || e.Progress.Total == nil || *e.Progress.Total != 3 || e.Progress.Message != "step" {
						t.Errorf("progress event: %+v", e)
					}
					progress = append(progress, e.Progress.Progress)
				case orchestrator.EventToolLog:
					var text string
					json.Unmarshal(e.Log.Data, &text)
					if e.Server != "slow" || e.Log.Level != mcp.LevelInfo || text != "starting" || e.Call == nil || e.Call.ID != "w" || e.Turn != 1 {
						t.Errorf("log event: %+v (call %+v)", e, e.Call)
					}
					sawLog = true
				}
				kinds = append(kinds, e.Kind)
			}
			if len(progress) != 3 || progress[0] != 1 || progress[2] != 3 {
				t.Errorf("progress %v, want 1, 2, 3", progress)
			}
			if !sawLog {
				t.Error("no log event")
			}
			// Everything the call reported comes between its start and end.
			start, end := -1, -1
			for i, k := range kinds {
				switch k {
				case orchestrator.EventToolStart:
					start = i
				case orchestrator.EventToolEnd:
					end = i
				case orchestrator.EventToolProgress, orchestrator.EventToolLog:
					if start < 0 || end >= 0 {
						t.Errorf("event %d (kind %d) outside the call: %v", i, k, kinds)
					}
				}
			}
		})
	}
}

// TestGoToolProgressEvents: a Go tool reports progress with
// registry.ReportProgress, and the agent's events show it before the
// call's end, with no server named.
func TestGoToolProgressEvents(t *testing.T) {
	tool := registry.Tool{Name: "crunch", Handler: func(ctx context.Context, _ json.RawMessage) (*mcp.CallToolResult, error) {
		for i := 1; i <= 2; i++ {
			if !registry.ReportProgress(ctx, float64(i), 2, "crunching") {
				return nil, errors.New("no one asked for progress")
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("crunched")}}, nil
	}}
	model := &script{turns: []func(*orchestrator.Request) (*orchestrator.Response, error){
		callTools(orchestrator.ToolCall{ID: "c", Name: "crunch"}),
		answer("done"),
	}}
	var log eventLog
	agent, err := orchestrator.New(testContext(t), orchestrator.Config{Provider: model, Tools: []registry.Tool{tool}, OnEvent: log.add})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	if _, err := agent.Run(testContext(t), "crunch"); err != nil {
		t.Fatal(err)
	}
	var seq []string
	for _, e := range log.all() {
		switch e.Kind {
		case orchestrator.EventToolProgress:
			if e.Server != "" || e.Call == nil || e.Call.ID != "c" || e.Progress.Total == nil || *e.Progress.Total != 2 {
				t.Errorf("progress event: %+v", e)
			}
			seq = append(seq, fmt.Sprintf("progress %v", e.Progress.Progress))
		case orchestrator.EventToolEnd:
			seq = append(seq, "end")
		}
	}
	if got := strings.Join(seq, ", "); got != "progress 1, progress 2, end" {
		t.Errorf("events %s, want progress 1, progress 2, end", got)
	}
}
