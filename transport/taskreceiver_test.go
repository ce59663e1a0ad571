package transport_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// The receiver's tasks/list, tasks/cancel and its errors, from a scripted
// 2025-11-25 server: server-everything (tested in interop/) only polls a
// task to its end and never lists or cancels one.
func TestTaskReceiverCancelAndList(t *testing.T) {
	f, conn := startFake(t, legacy(mcp.Version20251125, nil))
	elicit := func(ctx context.Context, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		<-ctx.Done() // a user who never answers
		return nil, ctx.Err()
	}
	s := connect(t, conn, &transport.Options{ProtocolVersion: mcp.Version20251125, TaskReceiver: true,
		Handlers: transport.Handlers{Elicitation: elicit}})
	defer s.Close()

	var init struct {
		Capabilities mcp.ClientCapabilities `json:"capabilities"`
	}
	if err := json.Unmarshal(f.messages(mcp.MethodInitialize)[0].Params, &init); err != nil {
		t.Fatal(err)
	}
	tc, err := init.Capabilities.TasksCapability()
	if err != nil || tc == nil || tc.Cancel == nil || tc.List == nil || tc.Requests == nil || tc.Requests.Elicitation == nil || tc.Requests.Sampling != nil {
		t.Fatalf("declared tasks capability %+v (%v), want list, cancel and elicitation.create only", tc, err)
	}

	next := int64(100)
	ask := func(method string, params any) *mcp.Message {
		t.Helper()
		next++
		b, _ := json.Marshal(params)
		id := mcp.Int64ID(next)
		if err := f.conn.Write(context.Background(), &mcp.Message{ID: id, Method: method, Params: b}); err != nil {
			t.Fatal(err)
		}
		return f.waitForResponse(id)
	}
	resp := ask(mcp.MethodElicitationCreate, map[string]any{"message": "name?", "task": map[string]any{"ttl": 60000},
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
	var created mcp.CreateTaskResult
	if resp.Error != nil || json.Unmarshal(resp.Result, &created) != nil || created.Task.TaskID == "" || created.Task.Status != mcp.TaskWorking {
		t.Fatalf("task-augmented elicitation answered %s %v, want a working task", resp.Result, resp.Error)
	}
	id := created.Task.TaskID

	var list mcp.ListTasksResult
	if resp := ask(mcp.MethodTasksList, map[string]any{}); resp.Error != nil || json.Unmarshal(resp.Result, &list) != nil || len(list.Tasks) != 1 || list.Tasks[0].TaskID != id {
		t.Fatalf("tasks/list: %s %v", resp.Result, resp.Error)
	}
	var cancelled mcp.CancelTaskResult
	if resp := ask(mcp.MethodTasksCancel, map[string]any{"taskId": id}); resp.Error != nil || json.Unmarshal(resp.Result, &cancelled) != nil || cancelled.Status != mcp.TaskCancelled {
		t.Fatalf("tasks/cancel: %s %v", resp.Result, resp.Error)
	}
	f.waitFor(mcp.NotificationTasksStatus, 1)
	var got mcp.GetTaskResult
	if resp := ask(mcp.MethodTasksGet, map[string]any{"taskId": id}); resp.Error != nil || json.Unmarshal(resp.Result, &got) != nil || got.Status != mcp.TaskCancelled {
		t.Fatalf("tasks/get after cancel: %s %v", resp.Result, resp.Error)
	}
	for method, params := range map[string]any{
		mcp.MethodTasksCancel: map[string]any{"taskId": id},     // already ended
		mcp.MethodTasksGet:    map[string]any{"taskId": "nope"}, // unknown
		mcp.MethodTasksResult: map[string]any{"taskId": id},     // cancelled: no result
		"tasks/unknown-kind":  map[string]any{"taskId": id},     // not a tasks method
	} {
		resp := ask(method, params)
		if resp.Error == nil {
			t.Errorf("%s answered %s, want an error", method, resp.Result)
		}
	}
}
