package transport_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// TestOtherTasksStatusDoesNotEndWait pins that Task.Wait listens to the
// status notifications of its own task only. A server runs many tasks and
// announces each one's changes; a notification that another task
// completed made Wait take that task's state for its own, report it, and
// fetch and return the other task's result.
//
// The server here (2025-11-25 tasks) says the waited task is working
// until the test lets it complete, two polls later; meanwhile it
// announces that another task completed.
func TestOtherTasksStatusDoesNotEndWait(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), fakeWait)
	defer cancel()
	var (
		mu         sync.Mutex
		done       bool // the waited task may complete
		pollsAfter int  // tasks/get of it since done
	)
	textOf := func(id string) string { return "résultat de " + id + ":\n\"fini\"" }
	base := legacyTasks(t, map[string]string{"job": mcp.TaskSupportOptional})
	f, conn := startFake(t, func(f *fakeServer, m *mcp.Message) *mcp.Message {
		switch m.Method {
		case mcp.MethodTasksGet:
			var p mcp.GetTaskParams
			_ = json.Unmarshal(m.Params, &p)
			status := mcp.TaskCompleted
			if p.TaskID == "t-job" {
				mu.Lock()
				if done {
					pollsAfter++
				}
				if !done || pollsAfter < 2 {
					status = mcp.TaskWorking
				}
				mu.Unlock()
			}
			return result(m.ID, task(p.TaskID, status))
		case mcp.MethodTasksResult:
			var p mcp.GetTaskParams
			_ = json.Unmarshal(m.Params, &p)
			return result(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": textOf(p.TaskID)}}})
		}
		return base(f, m)
	})
	s := connect(t, conn, nil)
	if _, err := s.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	tk, err := s.CallToolTask(ctx, &mcp.CallToolParams{Name: "job", Arguments: json.RawMessage(`{"q":"naïve \"task\"\n"}`)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tk.ID() != "t-job" {
		t.Fatalf("task id %q", tk.ID())
	}

	var (
		smu      sync.Mutex
		reported []transport.TaskInfo
	)
	listening := make(chan struct{}, 1)
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	waited := make(chan outcome, 1)
	go func() {
		res, err := tk.Wait(ctx, &transport.WaitOptions{
			// OnStatus first reports the state the task was created in,
			// once Wait listens for notifications.
			OnStatus: func(ti transport.TaskInfo) {
				smu.Lock()
				reported = append(reported, ti)
				smu.Unlock()
				select {
				case listening <- struct{}{}:
				default:
				}
			},
			MinInterval: 20 * time.Millisecond,
			MaxInterval: 20 * time.Millisecond,
		})
		waited <- outcome{res, err}
	}()
	within(t, listening, "Wait to report the task's first state")

	// Subscribed after Wait: by the time this sees the notification,
	// Wait's own listener has seen it.
	passed := make(chan struct{}, 1)
	unsubscribe := s.Subscribe(func(n mcp.Notification) {
		if n.Method == mcp.NotificationTasksStatus {
			select {
			case passed <- struct{}{}:
			default:
			}
		}
	})
	defer unsubscribe()
	other := task("t-other", mcp.TaskCompleted)
	other["statusMessage"] = "another task — «done»"
	params, err := json.Marshal(other)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.conn.Write(context.Background(), &mcp.Message{Method: mcp.NotificationTasksStatus, Params: params}); err != nil {
		t.Fatal(err)
	}
	within(t, passed, "the other task's status notification to be dispatched")
	mu.Lock()
	done = true
	mu.Unlock()

	o := within(t, waited, "Wait to return")
	if o.err != nil {
		t.Fatalf("Wait: %v", o.err)
	}
	if got, want := o.res.Text(), textOf("t-job"); got != want {
		t.Errorf("Wait returned %q, want the waited task's result %q", got, want)
	}
	if id := tk.ID(); id != "t-job" {
		t.Errorf("after Wait the task's id is %q, want t-job", id)
	}
	smu.Lock()
	defer smu.Unlock()
	for _, ti := range reported {
		if ti.ID != "t-job" {
			t.Errorf("OnStatus reported task %q (%s, %q) as the waited one's", ti.ID, ti.Status, ti.StatusMessage)
		}
	}
}
