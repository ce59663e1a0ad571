package transport_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
)

// -32021 against mcptest. The official Go SDK's conformance server has one
// tool that answers it (tested in interop/), but no real peer asks for a
// capability on demand on every kind of request, or for the tasks
// extension the client names only when it opts in; the test server does.

func TestMissingCapabilityNamed(t *testing.T) {
	srv := mcptest.New(mcptest.Options{})
	add := func(name string, h mcptest.ToolHandler) {
		if err := srv.AddTool(mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, h); err != nil {
			t.Fatal(err)
		}
	}
	add("sample", func(ctx context.Context, req *mcptest.CallRequest) (*mcp.CallToolResult, error) {
		_, err := req.Sample(ctx, &mcp.CreateMessageParams{MaxTokens: 1})
		return &mcp.CallToolResult{}, err
	})
	add("url", func(ctx context.Context, req *mcptest.CallRequest) (*mcp.CallToolResult, error) {
		_, err := req.Elicit(ctx, &mcp.ElicitParams{Mode: "url", Message: "log in", URL: "https://example.com/login"})
		return &mcp.CallToolResult{}, err
	})
	// declared asks for what every request of the session declares: a
	// server that insists gets no second round.
	add("declared", func(context.Context, *mcptest.CallRequest) (*mcp.CallToolResult, error) {
		return nil, mcp.NewMissingCapabilityError(mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}})
	})
	elicit := func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	conn, wait := srv.Pipe(context.Background())
	t.Cleanup(func() { wait() })
	s := connect(t, conn, &transport.Options{ProtocolVersion: mcp.Version20260728,
		Handlers: transport.Handlers{Elicitation: elicit}})
	ctx := context.Background()

	for tool, want := range map[string][]string{"sample": {"sampling"}, "url": {"elicitation.url"}, "declared": nil} {
		before := calls(srv, tool)
		_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool})
		var mc *transport.MissingCapabilityError
		if !errors.As(err, &mc) || !slices.Equal(mc.Missing, want) || mc.Method != mcp.MethodToolsCall {
			t.Fatalf("%s: %v (%#v), want a MissingCapabilityError naming %v", tool, err, mc, want)
		}
		var rpcErr *mcp.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeMissingRequiredClientCapability {
			t.Fatalf("%s: the server's -32021 is not reachable: %v", tool, err)
		}
		if n := calls(srv, tool) - before; n != 1 {
			t.Fatalf("%s: sent %d times; a capability the client lacks is not worth a re-send", tool, n)
		}
	}
}

// calls counts the tools/call requests for tool the server received.
func calls(srv *mcptest.Server, tool string) int {
	n := 0
	for _, r := range srv.Received() {
		var p struct {
			Name string `json:"name"`
		}
		if r.Msg.Method == mcp.MethodToolsCall && json.Unmarshal(r.Msg.Params, &p) == nil && p.Name == tool {
			n++
		}
	}
	return n
}

// A tool that runs only as a task, on a server that refuses a tools/call
// without the tasks extension: CallTool re-sends it opted in, once, and
// waits for the task's result.
func TestMissingCapabilityTasksExtensionResent(t *testing.T) {
	srv, release := taskServer(t)
	err := srv.AddTool(mcp.Tool{Name: "taskonly", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportRequired}},
		func(ctx context.Context, req *mcptest.CallRequest) (*mcp.CallToolResult, error) {
			caps := req.ClientCapabilities()
			if !caps.HasExtension(mcp.ExtensionTasks) {
				return nil, mcp.NewMissingCapabilityError(mcp.ClientCapabilities{
					Extensions: map[string]json.RawMessage{mcp.ExtensionTasks: json.RawMessage(`{}`)}})
			}
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("ran as a task")}}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	close(release)
	s := connectTaskServer(t, srv, nil)
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "taskonly"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text() != "ran as a task" {
		t.Fatalf("result %q", res.Text())
	}
	if n := calls(srv, "taskonly"); n != 2 {
		t.Fatalf("tools/call sent %d times, want 2 (refused, then opted in)", n)
	}
	if !optedIn(t, srv, mcp.MethodToolsCall) {
		t.Fatal("the re-sent tools/call did not declare the tasks extension")
	}
	got := 0
	for _, r := range srv.Received() {
		if r.Msg.Method == mcp.MethodTasksGet {
			got++
		}
	}
	if got == 0 {
		t.Fatal("CallTool returned without polling the task it created")
	}
}
