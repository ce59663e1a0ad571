package streamablehttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/streamablehttp"
	"github.com/tako-mcp/tako/transport"
)

// TestModernTasks: the 2026-07-28 tasks extension over Streamable HTTP,
// against mcptest behind the bridge (no peer implements the extension):
// a task that asks for input runs to its result, and every tasks/* request
// is named by its task id in Mcp-Name.
func TestModernTasks(t *testing.T) {
	srv := mcptest.New(mcptest.Options{Capabilities: &mcp.ServerCapabilities{
		Tools:      &mcp.ListChangedCapability{},
		Extensions: map[string]json.RawMessage{mcp.ExtensionTasks: json.RawMessage(`{}`)},
	}})
	err := srv.AddTool(mcp.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportRequired}},
		func(ctx context.Context, req *mcptest.CallRequest) (*mcp.CallToolResult, error) {
			res, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "name?", RequestedSchema: json.RawMessage(`{"type":"object"}`)})
			if err != nil {
				return nil, err
			}
			name, _ := res.Content["name"].(string)
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("hello " + name)}}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b := &bridge{srv: srv, ctx: ctx, sessions: map[string]*bridgeSession{}}
	var mu sync.Mutex
	names := map[string][]string{} // Mcp-Method -> Mcp-Name values
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m := r.Header.Get("Mcp-Method"); m != "" {
			mu.Lock()
			names[m] = append(names[m], r.Header.Get("Mcp-Name"))
			mu.Unlock()
		}
		b.ServeHTTP(w, r)
	}))
	defer func() {
		hs.CloseClientConnections()
		cancel()
		hs.Close()
		b.wg.Wait()
	}()
	tctx := testContext(t)
	c, err := streamablehttp.Dial(tctx, hs.URL+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := transport.Connect(tctx, c, &transport.Options{Handlers: transport.Handlers{
		Elicitation: func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "http"}}, nil
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	task, err := s.CallToolTask(tctx, &mcp.CallToolParams{Name: "ask"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := task.Wait(tctx, &transport.WaitOptions{MinInterval: 1})
	if err != nil || res.Text() != "hello http" {
		t.Fatalf("Wait: %v, %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, m := range []string{mcp.MethodTasksGet, mcp.MethodTasksUpdate} {
		if len(names[m]) == 0 {
			t.Errorf("no %s sent", m)
		}
		for _, n := range names[m] {
			if n != task.ID() {
				t.Errorf("%s with Mcp-Name %q, want %q", m, n, task.ID())
			}
		}
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Errorf("violations: %v", v)
	}
}
