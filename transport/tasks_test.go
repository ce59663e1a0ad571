package transport_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
)

// The 2026-07-28 tasks extension against mcptest: no peer tako is tested
// against implements the extension (server-everything, mcp-go and the
// official Go SDK speak only the 2025-11-25 tasks, tested in interop/), so
// the test server does. The 2025-11-25 cases here are faults no real peer
// offers (a forbidden tool, an unasked-for task answer), on a scripted
// server.

// taskServer is an mcptest server that declares the tasks extension, with
// tools that run as tasks:
//
//	job      waits for release (or its context), then answers "done"
//	ask      elicits a name, answers "hello <name>"
//	broken   fails with a JSON-RPC error (-32603)
//	oops     fails as a tool (isError)
//	plain    never a task: answers "plain"
func taskServer(t *testing.T) (*mcptest.Server, chan struct{}) {
	t.Helper()
	srv := mcptest.New(mcptest.Options{Capabilities: &mcp.ServerCapabilities{
		Tools:      &mcp.ListChangedCapability{},
		Extensions: map[string]json.RawMessage{mcp.ExtensionTasks: json.RawMessage(`{}`)},
	}})
	release := make(chan struct{})
	optional := &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}
	add := func(name string, exec *mcp.ToolExecution, h mcptest.ToolHandler) {
		if err := srv.AddTool(mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`), Execution: exec}, h); err != nil {
			t.Fatal(err)
		}
	}
	add("job", optional, func(ctx context.Context, _ *mcptest.CallRequest) (*mcp.CallToolResult, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("done")}}, nil
	})
	add("ask", &mcp.ToolExecution{TaskSupport: mcp.TaskSupportRequired}, func(ctx context.Context, req *mcptest.CallRequest) (*mcp.CallToolResult, error) {
		res, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "name?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		if err != nil {
			return nil, err
		}
		name, _ := res.Content["name"].(string)
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("hello " + name)}}, nil
	})
	add("broken", optional, func(context.Context, *mcptest.CallRequest) (*mcp.CallToolResult, error) {
		return nil, &mcp.Error{Code: mcp.CodeInternalError, Message: "broken on purpose"}
	})
	add("oops", optional, func(context.Context, *mcptest.CallRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("tool failed on purpose")
	})
	add("plain", nil, func(context.Context, *mcptest.CallRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("plain")}}, nil
	})
	return srv, release
}

func connectTaskServer(t *testing.T, srv *mcptest.Server, opts *transport.Options) *transport.Session {
	t.Helper()
	conn, wait := srv.Pipe(context.Background())
	t.Cleanup(func() { wait() })
	if opts == nil {
		opts = &transport.Options{}
	}
	opts.ProtocolVersion = mcp.Version20260728
	return connect(t, conn, opts)
}

// optedIn reports whether the last tools/call the server received declared
// the tasks extension in its per-request capabilities.
func optedIn(t *testing.T, srv *mcptest.Server, method string) bool {
	t.Helper()
	var last mcptest.Record
	for _, r := range srv.Received() {
		if r.Msg.Method == method {
			last = r
		}
	}
	var caps mcp.ClientCapabilities
	if err := json.Unmarshal(last.Meta()[mcp.MetaClientCapabilities], &caps); err != nil {
		t.Fatalf("%s without client capabilities: %v", method, err)
	}
	return caps.HasExtension(mcp.ExtensionTasks)
}

type statuses struct {
	mu  sync.Mutex
	got []mcp.TaskStatus
}

func (s *statuses) add(ti transport.TaskInfo) {
	s.mu.Lock()
	s.got = append(s.got, ti.Status)
	s.mu.Unlock()
}

func (s *statuses) list() []mcp.TaskStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

func TestTasksExtension(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv, release := taskServer(t)
	elicited := make(chan *mcp.ElicitParams, 1)
	s := connectTaskServer(t, srv, &transport.Options{Handlers: transport.Handlers{
		Elicitation: func(_ context.Context, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			elicited <- req
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "tako"}}, nil
		},
	}})

	t.Run("run to its result", func(t *testing.T) {
		task, err := s.CallToolTask(ctx, &mcp.CallToolParams{Name: "job"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !optedIn(t, srv, mcp.MethodToolsCall) {
			t.Error("tools/call did not opt in to the tasks extension")
		}
		info := task.Info()
		if task.ID() == "" || info.Status != mcp.TaskWorking || info.PollInterval != 10*time.Millisecond || info.TTL != time.Hour {
			t.Fatalf("created task %+v", info)
		}
		st := &statuses{}
		done := make(chan struct{})
		var res *mcp.CallToolResult
		go func() {
			defer close(done)
			res, err = task.Wait(ctx, &transport.WaitOptions{OnStatus: st.add, MinInterval: time.Millisecond})
		}()
		// The task stays working until released: Wait polls it meanwhile.
		if _, err := srv.Wait(ctx, func(r mcptest.Record) bool { return r.Msg.Method == mcp.MethodTasksGet }); err != nil {
			t.Fatal(err)
		}
		close(release)
		<-done
		if err != nil || res.Text() != "done" {
			t.Fatalf("Wait: %v, %v", res, err)
		}
		if !optedIn(t, srv, mcp.MethodTasksGet) {
			t.Error("tasks/get did not opt in to the tasks extension")
		}
		if got := st.list(); !slices.Equal(got, []mcp.TaskStatus{mcp.TaskWorking, mcp.TaskCompleted}) {
			t.Errorf("statuses %v", got)
		}
	})

	t.Run("input through tasks/update", func(t *testing.T) {
		task, err := s.CallToolTask(ctx, &mcp.CallToolParams{Name: "ask"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		st := &statuses{}
		res, err := task.Wait(ctx, &transport.WaitOptions{OnStatus: st.add, MinInterval: time.Millisecond})
		if err != nil || res.Text() != "hello tako" {
			t.Fatalf("Wait: %v, %v", res, err)
		}
		if req := <-elicited; req.Message != "name?" {
			t.Errorf("elicitation %+v", req)
		}
		updates := 0
		for _, r := range srv.Received() {
			if r.Msg.Method == mcp.MethodTasksUpdate {
				updates++
			}
		}
		if updates != 1 {
			t.Errorf("%d tasks/update sent, want 1", updates)
		}
		if got := st.list(); !slices.Contains(got, mcp.TaskInputRequired) || got[len(got)-1] != mcp.TaskCompleted {
			t.Errorf("statuses %v", got)
		}
	})

	t.Run("failed", func(t *testing.T) {
		task, err := s.CallToolTask(ctx, &mcp.CallToolParams{Name: "broken"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = task.Wait(ctx, &transport.WaitOptions{MinInterval: time.Millisecond})
		var rpcErr *mcp.Error
		if !errors.Is(err, transport.ErrTaskFailed) || !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeInternalError {
			t.Fatalf("Wait: %v, want ErrTaskFailed with the server's -32603", err)
		}
	})

	t.Run("tool error is a result", func(t *testing.T) {
		task, err := s.CallToolTask(ctx, &mcp.CallToolParams{Name: "oops"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := task.Wait(ctx, &transport.WaitOptions{MinInterval: time.Millisecond})
		if err != nil || !res.IsError {
			t.Fatalf("Wait: %+v, %v; want a result with isError", res, err)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		// job answers at once now that release is closed; ask waits for
		// input that Wait would give, so cancel it before waiting.
		task, err := s.CallToolTask(ctx, &mcp.CallToolParams{Name: "ask"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := task.Cancel(ctx); err != nil {
			t.Fatal(err)
		}
		_, err = task.Wait(ctx, &transport.WaitOptions{MinInterval: time.Millisecond})
		if !errors.Is(err, transport.ErrTaskCancelled) {
			t.Fatalf("Wait after Cancel: %v", err)
		}
		// A persisted id gives a handle that reads the same state.
		info, err := s.Task(task.ID()).Get(ctx)
		if err != nil || info.Status != mcp.TaskCancelled {
			t.Errorf("Get on a handle from the id: %+v, %v", info, err)
		}
	})

	t.Run("plain CallTool does not opt in", func(t *testing.T) {
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "job"})
		if err != nil || res.Text() != "done" {
			t.Fatalf("CallTool: %v, %v", res, err)
		}
		if optedIn(t, srv, mcp.MethodToolsCall) {
			t.Error("a plain tools/call opted in to the tasks extension")
		}
	})

	t.Run("no task for a tool without task support", func(t *testing.T) {
		task, err := s.CallToolTask(ctx, &mcp.CallToolParams{Name: "plain"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := task.Wait(ctx, nil)
		if task.ID() != "" || err != nil || res.Text() != "plain" {
			t.Fatalf("handle %q: %v, %v", task.ID(), res, err)
		}
	})

	if v := srv.Violations(); len(v) > 0 {
		t.Errorf("violations: %v", v)
	}
}

// TestTasksExtensionDeclared: a session that declares the extension in
// Options.Capabilities opts in on every call, and CallTool waits for a
// task's result.
func TestTasksExtensionDeclared(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv, release := taskServer(t)
	close(release)
	s := connectTaskServer(t, srv, &transport.Options{Capabilities: &mcp.ClientCapabilities{
		Extensions: map[string]json.RawMessage{mcp.ExtensionTasks: json.RawMessage(`{}`)},
	}})
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "job"})
	if err != nil || res.Text() != "done" {
		t.Fatalf("CallTool: %v, %v", res, err)
	}
	if len(srv.Received()) == 0 || !optedIn(t, srv, mcp.MethodTasksGet) {
		t.Error("the call did not run as a task")
	}
	// A failed task is CallTool's error.
	if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "broken"}); !errors.Is(err, transport.ErrTaskFailed) {
		t.Errorf("CallTool broken: %v", err)
	}
}

// TestTasksExtensionCallToolCancelsOnContext: a task CallTool waits for is
// cancelled on the server when the caller's context ends.
func TestTasksExtensionCallToolCancelsOnContext(t *testing.T) {
	srv, _ := taskServer(t)
	s := connectTaskServer(t, srv, &transport.Options{Capabilities: &mcp.ClientCapabilities{
		Extensions: map[string]json.RawMessage{mcp.ExtensionTasks: json.RawMessage(`{}`)},
	}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "job"})
		done <- err
	}()
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	if _, err := srv.WaitMethod(wctx, mcp.MethodTasksGet); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("CallTool: %v, want context.Canceled", err)
	}
	if _, err := srv.WaitMethod(wctx, mcp.MethodTasksCancel); err != nil {
		t.Fatalf("no tasks/cancel after the caller gave up: %v", err)
	}
}

// TestTaskResultNotAskedFor: a "task" answer to a call that did not opt in
// is a protocol error (a scripted server: no real one sends it).
func TestTaskResultNotAskedFor(t *testing.T) {
	_, conn := startFake(t, modern(t, func(m *mcp.Message) *mcp.Message {
		return result(m.ID, map[string]any{"resultType": "task", "taskId": "t1", "status": "working",
			"createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttlMs": nil})
	}))
	s := connect(t, conn, nil)
	if _, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "x"}); !errors.Is(err, transport.ErrProtocol) {
		t.Fatalf("CallTool: %v, want ErrProtocol", err)
	}
}

// legacyTasks answers like a 2025-11-25 server with task support whose
// tools are listed with the given taskSupport; tools/call with params.task
// creates a task that is completed at once.
func legacyTasks(t *testing.T, support map[string]string) func(f *fakeServer, m *mcp.Message) *mcp.Message {
	return func(f *fakeServer, m *mcp.Message) *mcp.Message {
		switch m.Method {
		case mcp.MethodDiscover:
			return rpcError(m.ID, mcp.CodeMethodNotFound, "Method not found", "")
		case mcp.MethodInitialize:
			return result(m.ID, map[string]any{
				"protocolVersion": mcp.Version20251125,
				"capabilities": map[string]any{"tools": map[string]any{},
					"tasks": map[string]any{"cancel": map[string]any{}, "requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}},
				"serverInfo": map[string]any{"name": "fake", "version": "1"},
			})
		case mcp.NotificationInitialized, mcp.NotificationCancelled:
			return nil
		case mcp.MethodToolsList:
			var tools []map[string]any
			for name, ts := range support {
				tool := map[string]any{"name": name, "inputSchema": map[string]any{"type": "object"}}
				if ts != "" {
					tool["execution"] = map[string]any{"taskSupport": ts}
				}
				tools = append(tools, tool)
			}
			return result(m.ID, map[string]any{"tools": tools})
		case mcp.MethodToolsCall:
			var p mcp.CallToolParams
			_ = json.Unmarshal(m.Params, &p)
			if p.Task != nil {
				if support[p.Name] == "" || support[p.Name] == mcp.TaskSupportForbidden {
					t.Errorf("tool %q (taskSupport %q) called as a task", p.Name, support[p.Name])
				}
				return result(m.ID, map[string]any{"task": task("t-"+p.Name, mcp.TaskWorking)})
			}
			if support[p.Name] == mcp.TaskSupportRequired {
				return rpcError(m.ID, mcp.CodeMethodNotFound, "task required", "")
			}
			return result(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "direct"}}})
		case mcp.MethodTasksGet:
			var p mcp.GetTaskParams
			_ = json.Unmarshal(m.Params, &p)
			return result(m.ID, task(p.TaskID, mcp.TaskCompleted))
		case mcp.MethodTasksResult:
			return result(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "from task"}}})
		}
		return rpcError(m.ID, mcp.CodeMethodNotFound, "no", "")
	}
}

func task(id string, status mcp.TaskStatus) map[string]any {
	return map[string]any{"taskId": id, "status": status, "createdAt": "2025-11-25T00:00:00Z",
		"lastUpdatedAt": "2025-11-25T00:00:00Z", "ttl": nil, "pollInterval": 0}
}

// TestLegacyTaskSupportHonoured: a forbidden tool is never called as a
// task, a required one always is (CallTool too), an optional one only when
// asked. (pollInterval 0 counts as none suggested: DefaultPollInterval,
// never a busy loop.)
func TestLegacyTaskSupportHonoured(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f, conn := startFake(t, legacyTasks(t, map[string]string{
		"never": mcp.TaskSupportForbidden, "unmarked": "", "maybe": mcp.TaskSupportOptional, "must": mcp.TaskSupportRequired,
	}))
	s := connect(t, conn, nil)
	if _, err := s.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"never", "unmarked"} {
		task, err := s.CallToolTask(ctx, &mcp.CallToolParams{Name: name}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res, err := task.Wait(ctx, nil); task.ID() != "" || err != nil || res.Text() != "direct" {
			t.Errorf("%s: handle %q, %v, %v; want a direct call", name, task.ID(), res, err)
		}
		// CallTool with params.task set leaves the forbidden tool direct too.
		if res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Task: &mcp.TaskParams{}}); err != nil || res.Text() != "direct" {
			t.Errorf("%s through CallTool with params.task: %v, %v", name, res, err)
		}
	}
	if res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "maybe"}); err != nil || res.Text() != "direct" {
		t.Errorf("optional tool through CallTool: %v, %v", res, err)
	}
	task, err := s.CallToolTask(ctx, &mcp.CallToolParams{Name: "maybe"}, &transport.TaskOptions{TTL: 90 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := task.Wait(ctx, &transport.WaitOptions{MinInterval: time.Millisecond}); task.ID() != "t-maybe" || err != nil || res.Text() != "from task" {
		t.Errorf("optional tool as a task: %q, %v, %v", task.ID(), res, err)
	}
	var p mcp.CallToolParams
	calls := f.messages(mcp.MethodToolsCall)
	if err := json.Unmarshal(calls[len(calls)-1].Params, &p); err != nil || p.Task == nil || p.Task.TTL == nil || *p.Task.TTL != 90000 {
		t.Errorf("params.task of the optional call: %+v", p.Task)
	}
	if res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "must"}); err != nil || res.Text() != "from task" {
		t.Errorf("required tool through CallTool: %v, %v", res, err)
	}
	if _, err := s.ListTasks(ctx); !errors.Is(err, transport.ErrCapability) {
		t.Errorf("ListTasks without tasks.list: %v, want ErrCapability", err)
	}
	if err := s.UpdateTask(ctx, "t-maybe", nil); !errors.Is(err, transport.ErrCapability) {
		t.Errorf("UpdateTask on 2025-11-25: %v, want ErrCapability", err)
	}
}
