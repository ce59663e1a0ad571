package mcp

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestTaskStatus(t *testing.T) {
	for s, terminal := range map[TaskStatus]bool{
		TaskWorking: false, TaskInputRequired: false, TaskCompleted: true, TaskFailed: true, TaskCancelled: true,
	} {
		if !s.IsValid() || s.IsTerminal() != terminal {
			t.Errorf("%s: valid %v terminal %v", s, s.IsValid(), s.IsTerminal())
		}
	}
	for _, s := range []TaskStatus{"", "done", "Working"} {
		if s.IsValid() || s.IsTerminal() {
			t.Errorf("%q accepted", s)
		}
	}
}

func TestTasks20251125(t *testing.T) {
	t.Run("task-augmented call", func(t *testing.T) {
		m := mustDecode(t, legacyToolsCallTaskRequest)
		var p CallToolParams
		mustUnmarshal(t, m.Params, &p)
		if p.Task == nil || p.Task.TTL == nil || *p.Task.TTL != 90000 {
			t.Errorf("task = %+v", p.Task)
		}
		if tok, ok := p.Meta.ProgressToken(); !ok || string(tok) != `"dredge-14"` {
			t.Errorf("progress token %s, %v", tok, ok)
		}
		sp := payloadAs[CreateMessageParams](t, legacySamplingToolsRequest)
		if sp.Task == nil || sp.Task.TTL == nil || *sp.Task.TTL != 45000 {
			t.Errorf("sampling task = %+v", sp.Task)
		}
	})
	t.Run("CreateTaskResult", func(t *testing.T) {
		m := mustDecode(t, legacyCreateTaskResult)
		var r CreateTaskResult
		mustUnmarshal(t, m.Result, &r)
		task := r.Task
		if task.TaskID != "tsk-0c1f-4d2e" || task.Status != TaskWorking ||
			task.StatusMessage != "Survey queued behind two others" || task.CreatedAt != "2026-03-02T08:15:00Z" ||
			task.LastUpdatedAt != "2026-03-02T08:15:04Z" || task.TTL == nil || *task.TTL != 90000 ||
			task.PollInterval == nil || *task.PollInterval != 2500 {
			t.Errorf("task = %+v", task)
		}
		if got := string(r.Meta[MetaModelImmediate]); got != `"The dredging survey has started; results follow in a few minutes."` {
			t.Errorf("model-immediate-response = %s", got)
		}
		// A legacy result has no resultType: complete, not "task".
		if rt, err := ParseResultType(m.Result); err != nil || rt != ResultTypeComplete {
			t.Errorf("ParseResultType = %q, %v", rt, err)
		}
	})
	t.Run("unlimited ttl is sent as null", func(t *testing.T) {
		m := mustDecode(t, legacyTasksGetFailed)
		var r GetTaskResult
		mustUnmarshal(t, m.Result, &r)
		if r.TTL != nil || r.Status != TaskFailed || !r.Status.IsTerminal() {
			t.Errorf("got %+v", r)
		}
		b, _ := json.Marshal(Task{TaskID: "t", Status: TaskWorking})
		if !strings.Contains(string(b), `"ttl":null`) {
			t.Errorf("nil TTL encoded as %s", b)
		}
	})
	t.Run("tasks/list", func(t *testing.T) {
		req := mustDecode(t, legacyTasksListRequest)
		var lp ListTasksParams
		mustUnmarshal(t, req.Params, &lp)
		if req.Method != MethodTasksList || lp.Cursor == nil || *lp.Cursor != "dGFza3MtMQ==" {
			t.Errorf("got %s %+v", req.Method, lp)
		}
		m := mustDecode(t, legacyTasksListResult)
		var r ListTasksResult
		mustUnmarshal(t, m.Result, &r)
		if len(r.Tasks) != 2 || r.Tasks[1].PollInterval != nil || r.NextCursor == nil || *r.NextCursor != "dGFza3MtMg==" {
			t.Errorf("got %+v", r)
		}
		if r.Tasks[0].Status != TaskInputRequired || r.Tasks[0].Status.IsTerminal() || !r.Tasks[1].Status.IsTerminal() {
			t.Errorf("statuses %s, %s", r.Tasks[0].Status, r.Tasks[1].Status)
		}
		b, _ := json.Marshal(ListTasksResult{})
		if string(b) != `{"tasks":[]}` {
			t.Errorf("empty list encoded as %s", b)
		}
	})
	t.Run("tasks/result carries related-task", func(t *testing.T) {
		req := mustDecode(t, legacyTasksResultRequest)
		var pp GetTaskPayloadParams
		mustUnmarshal(t, req.Params, &pp)
		if req.Method != MethodTasksResult || pp.TaskID != "tsk-1d20" {
			t.Errorf("got %s %+v", req.Method, pp)
		}
		m := mustDecode(t, legacyTasksResultResponse)
		var r CallToolResult
		mustUnmarshal(t, m.Result, &r)
		if id, ok := r.Meta.RelatedTask(); !ok || id != pp.TaskID {
			t.Errorf("RelatedTask = %q, %v", id, ok)
		}
	})
	t.Run("status notification", func(t *testing.T) {
		m := mustDecode(t, legacyTaskStatusNotification)
		if m.Method != NotificationTasksStatus {
			t.Fatalf("method %s", m.Method)
		}
		var p TaskStatusParams
		mustUnmarshal(t, m.Params, &p)
		if p.Status != TaskCompleted || p.TaskID == "" {
			t.Errorf("got %+v", p)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		req := mustDecode(t, legacyTasksCancelRequest)
		var p CancelTaskParams
		mustUnmarshal(t, req.Params, &p)
		if req.Method != MethodTasksCancel || p.TaskID != "tsk-0c1f-4d2e" {
			t.Errorf("got %s %+v", req.Method, p)
		}
		resp := mustDecode(t, legacyTasksCancelResult)
		var r CancelTaskResult
		mustUnmarshal(t, resp.Result, &r)
		if r.Status != TaskCancelled || r.TaskID != p.TaskID {
			t.Errorf("got %+v", r)
		}
		get := mustDecode(t, legacyTasksGetRequest)
		var gp GetTaskParams
		mustUnmarshal(t, get.Params, &gp)
		if get.Method != MethodTasksGet || gp.TaskID != p.TaskID {
			t.Errorf("got %s %+v", get.Method, gp)
		}
	})
	t.Run("tool taskSupport", func(t *testing.T) {
		m := mustDecode(t, legacyToolsListResult)
		var r ListToolsResult
		mustUnmarshal(t, m.Result, &r)
		if r.Tools[0].Execution == nil || r.Tools[0].Execution.TaskSupport != TaskSupportOptional {
			t.Errorf("execution = %+v", r.Tools[0].Execution)
		}
		if r.Tools[1].Execution == nil || r.Tools[1].Execution.TaskSupport != TaskSupportForbidden {
			t.Errorf("execution = %+v", r.Tools[1].Execution)
		}
	})
}

func TestTasksCapabilities(t *testing.T) {
	client := payloadAs[ClientCapabilities](t, legacyClientTasksCapabilities)
	ct, err := client.TasksCapability()
	if err != nil {
		t.Fatal(err)
	}
	if ct == nil || ct.List == nil || ct.Cancel == nil || ct.Requests == nil ||
		ct.Requests.Sampling == nil || ct.Requests.Sampling.CreateMessage == nil ||
		ct.Requests.Elicitation == nil || ct.Requests.Elicitation.Create == nil {
		t.Errorf("client tasks = %+v", ct)
	}

	server := payloadAs[ServerCapabilities](t, legacyServerTasksCapabilities)
	st, err := server.TasksCapability()
	if err != nil || !st.ToolCall() || st.List == nil || st.Cancel == nil {
		t.Errorf("server tasks = %+v, %v", st, err)
	}

	// The initialize example declares only requests.
	m := mustDecode(t, legacyInitializeRequest)
	var ip InitializeParams
	mustUnmarshal(t, m.Params, &ip)
	if ct, err := ip.Capabilities.TasksCapability(); err != nil || ct.List != nil || ct.Requests.Sampling.CreateMessage == nil {
		t.Errorf("initialize tasks = %+v, %v", ct, err)
	}

	ir := payloadAs[InitializeResult](t, legacyInitializeResult)
	if st, err := ir.Capabilities.TasksCapability(); err != nil || !st.ToolCall() || st.List == nil || st.Cancel == nil {
		t.Errorf("initialize result tasks = %+v, %v", st, err)
	}

	var none ServerCapabilities
	if st, err := none.TasksCapability(); st != nil || err != nil || st.ToolCall() {
		t.Errorf("absent tasks = %+v, %v", st, err)
	}
	bad := ServerCapabilities{Tasks: json.RawMessage(`[1]`)}
	if _, err := bad.TasksCapability(); err == nil {
		t.Error("a non-object tasks capability decoded")
	}

	var set ClientCapabilities
	tc := &ClientTasksCapability{Cancel: &struct{}{}}
	if err := set.SetTasksCapability(tc); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(set)
	if string(b) != `{"tasks":{"cancel":{}}}` {
		t.Errorf("SetTasksCapability gave %s", b)
	}
	if err := set.SetTasksCapability(nil); err != nil || set.Tasks != nil {
		t.Errorf("SetTasksCapability(nil) left %s", set.Tasks)
	}
	var sset ServerCapabilities
	_ = sset.SetTasksCapability(&ServerTasksCapability{Requests: &ServerTaskRequestsCapability{}})
	if got, _ := sset.TasksCapability(); got.ToolCall() {
		t.Error("ToolCall without tools.call")
	}

	ext := payloadAs[DiscoverResult](t, modernDiscoverResult).Capabilities
	if !ext.HasExtension(ExtensionTasks) || ext.HasExtension("io.modelcontextprotocol/skills") {
		t.Error("HasExtension")
	}
	cext := ClientCapabilities{Extensions: map[string]json.RawMessage{ExtensionTasks: json.RawMessage(`{}`)}}
	if !cext.HasExtension(ExtensionTasks) {
		t.Error("client HasExtension")
	}
}

func TestTasksExtension20260728(t *testing.T) {
	// Each example round-trips through its type.
	for name, tc := range map[string]struct {
		wire string
		c    codec
	}{
		"create":              {extCreateTaskResponse, message[ExtCreateTaskResult]()},
		"get":                 {extTasksGetRequest, message[GetTaskParams]()},
		"get input_required":  {extGetTaskInputRequired, message[ExtGetTaskResult]()},
		"update":              {extTaskUpdateRequest, message[UpdateTaskParams]()},
		"update ack":          {extUpdateAck, message[metaOnly]()},
		"get completed":       {extGetTaskCompleted, message[ExtGetTaskResult]()},
		"get failed":          {extGetTaskFailed, message[ExtGetTaskResult]()},
		"notification":        {extTasksNotification, message[ExtGetTaskResult]()},
		"listen for task ids": {extListenForTasks, message[SubscriptionsListenParams]()},
		"missing capability":  {extMissingCapability, message[MissingCapabilityData]()},
		"cancel":              {extTasksCancelRequest, message[CancelTaskParams]()},
		"cancel ack":          {extCancelAck, message[metaOnly]()},
	} {
		t.Run(name, func(t *testing.T) {
			checkRoundTrip(t, tc.wire, tc.c)
		})
	}

	t.Run("a tools/call answered with a task", func(t *testing.T) {
		m := mustDecode(t, extCreateTaskResponse)
		rt, err := ParseResultType(m.Result)
		if err != nil || rt != ResultTypeTask {
			t.Fatalf("ParseResultType = %q, %v", rt, err)
		}
		var r ExtCreateTaskResult
		mustUnmarshal(t, m.Result, &r)
		if r.ResultType != ResultTypeTask || r.TaskID != extTaskID || r.Status != TaskWorking ||
			r.TTLMs == nil || *r.TTLMs != 1800000 || r.PollIntervalMs == nil || *r.PollIntervalMs != 4000 {
			t.Errorf("got %+v", r)
		}
	})
	t.Run("input_required carries input requests", func(t *testing.T) {
		var r ExtGetTaskResult
		mustUnmarshal(t, mustDecode(t, extGetTaskInputRequired).Result, &r)
		ir, ok := r.InputRequests["confirm"]
		if r.Status != TaskInputRequired || !ok || ir.Method != MethodElicitationCreate {
			t.Fatalf("got %+v", r)
		}
		var ep ElicitParams
		mustUnmarshal(t, ir.Params, &ep)
		if ep.Mode != ElicitModeForm || ep.IsURL() || ep.Message != "Approve overtime for the night crew?" {
			t.Errorf("elicitation %+v", ep)
		}
	})
	t.Run("completed carries the result", func(t *testing.T) {
		var r ExtGetTaskResult
		mustUnmarshal(t, mustDecode(t, extGetTaskCompleted).Result, &r)
		var ctr CallToolResult
		mustUnmarshal(t, r.Result, &ctr)
		if !r.Status.IsTerminal() || ctr.Text() != "Overtime approved: 4 hours." || ctr.IsError {
			t.Errorf("got %+v / %+v", r, ctr)
		}
	})
	t.Run("failed carries the error", func(t *testing.T) {
		var r ExtGetTaskResult
		mustUnmarshal(t, mustDecode(t, extGetTaskFailed).Result, &r)
		if r.Status != TaskFailed || r.Error == nil || r.Error.Code != CodeInternalError || r.TTLMs != nil ||
			r.Error.Message != "roster backend timed out" || !jsonEqual(t, r.Error.Data, []byte(`{"afterMs":30000}`)) {
			t.Errorf("got %+v", r)
		}
		b, _ := json.Marshal(ExtTask{TaskID: "x", Status: TaskWorking})
		if !strings.Contains(string(b), `"ttlMs":null`) {
			t.Errorf("nil TTLMs encoded as %s", b)
		}
	})
	t.Run("update params", func(t *testing.T) {
		var p UpdateTaskParams
		mustUnmarshal(t, mustDecode(t, extTaskUpdateRequest).Params, &p)
		var er ElicitResult
		mustUnmarshal(t, p.InputResponses["confirm"], &er)
		if p.TaskID != extTaskID || er.Action != ElicitAccept || er.Content["approved"] != true || er.Content["hours"] != 4.0 {
			t.Errorf("got %+v / %+v", p, er)
		}
		b, _ := json.Marshal(UpdateTaskParams{TaskID: "t"})
		if string(b) != `{"taskId":"t","inputResponses":{}}` {
			t.Errorf("nil InputResponses encoded as %s", b)
		}
	})
	t.Run("listen for task ids needs the extension", func(t *testing.T) {
		m := mustDecode(t, extListenForTasks)
		var p SubscriptionsListenParams
		mustUnmarshal(t, m.Params, &p)
		if !reflect.DeepEqual(p.Notifications.TaskIDs, []string{extTaskID}) {
			t.Errorf("taskIds = %v", p.Notifications.TaskIDs)
		}
		rm, err := ParseRequestMeta(p.Meta)
		if err != nil || rm.ClientCapabilities == nil || !rm.ClientCapabilities.HasExtension(ExtensionTasks) {
			t.Errorf("request meta = %+v, %v", rm, err)
		}
		e := mustDecode(t, extMissingCapability).Error
		caps, ok := e.MissingCapabilities()
		if !ok || !caps.HasExtension(ExtensionTasks) {
			t.Errorf("MissingCapabilities = %+v, %v", caps, ok)
		}
	})
	t.Run("the task pushed on a listen stream, then cancelled", func(t *testing.T) {
		listen := mustDecode(t, extListenForTasks)
		n := mustDecode(t, extTasksNotification)
		var p ExtGetTaskResult
		mustUnmarshal(t, n.Params, &p)
		if n.Method != NotificationTasks || p.TaskID != extTaskID || p.Status != TaskCompleted || p.ResultType != "" {
			t.Errorf("got %s %+v", n.Method, p)
		}
		if id, ok := p.Meta.SubscriptionID(); !ok || id != listen.ID {
			t.Errorf("subscription id %v, %v; want %v", id, ok, listen.ID)
		}
		req := mustDecode(t, extTasksCancelRequest)
		var cp CancelTaskParams
		mustUnmarshal(t, req.Params, &cp)
		if req.Method != MethodTasksCancel || cp.TaskID != extTaskID {
			t.Errorf("got %s %+v", req.Method, cp)
		}
		for _, wire := range []string{extCancelAck, extUpdateAck} {
			if rt, err := ParseResultType(mustDecode(t, wire).Result); err != nil || rt != ResultTypeComplete {
				t.Errorf("ack resultType %q, %v", rt, err)
			}
		}
		get := mustDecode(t, extTasksGetRequest)
		var gp GetTaskParams
		mustUnmarshal(t, get.Params, &gp)
		if get.Method != MethodTasksGet || gp.TaskID != extTaskID {
			t.Errorf("got %s %+v", get.Method, gp)
		}
	})
}
