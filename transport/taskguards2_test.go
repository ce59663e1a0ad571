package transport_test

// Guards of task handling (tasks.go, taskwait.go) that a mutation audit
// found untested: the bound on a 2026-07-28 task's input rounds, and the
// refusal of a tasks/get answered for another task.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// modernTaskServer answers like a 2026-07-28 server that declares the
// tasks extension; tasks/get is answered by get, tasks/update and
// tasks/cancel are acknowledged.
func modernTaskServer(get func(m *mcp.Message, id string) *mcp.Message) func(f *fakeServer, m *mcp.Message) *mcp.Message {
	return func(f *fakeServer, m *mcp.Message) *mcp.Message {
		if m.IsNotification() || m.IsResponse() {
			return nil
		}
		switch m.Method {
		case mcp.MethodDiscover:
			return result(m.ID, map[string]any{
				"resultType": "complete", "supportedVersions": []string{mcp.Version20260728},
				"capabilities": map[string]any{"tools": map[string]any{},
					"extensions": map[string]any{mcp.ExtensionTasks: map[string]any{}}},
				"_meta": map[string]any{mcp.MetaServerInfo: map[string]any{"name": "interviewer", "version": "2"}},
			})
		case mcp.MethodTasksGet:
			var p mcp.GetTaskParams
			_ = json.Unmarshal(m.Params, &p)
			return get(m, p.TaskID)
		case mcp.MethodTasksUpdate, mcp.MethodTasksCancel:
			return result(m.ID, map[string]any{"resultType": "complete"})
		}
		return rpcError(m.ID, mcp.CodeMethodNotFound, "Method not found", "")
	}
}

// TestModernTaskAskingForeverIsBounded pins the MaxInputRounds bound of
// Task.Wait on 2026-07-28. A task whose every tasks/get lists a new
// inputRequests key made Wait call the elicitation handler (a person, a
// model) again and again, without limit. Wait must give up with
// ErrProtocol after MaxInputRounds rounds.
func TestModernTaskAskingForeverIsBounded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), fakeWait)
	defer cancel()
	var (
		mu    sync.Mutex
		polls int
	)
	_, conn := startFake(t, modernTaskServer(func(m *mcp.Message, id string) *mcp.Message {
		mu.Lock()
		polls++
		n := polls
		mu.Unlock()
		return result(m.ID, map[string]any{
			"resultType": "complete", "taskId": id, "status": mcp.TaskInputRequired,
			"statusMessage": "need one more detail",
			"createdAt":     "2026-07-28T09:00:00Z", "lastUpdatedAt": "2026-07-28T09:00:01Z", "ttlMs": nil,
			"inputRequests": map[string]any{fmt.Sprintf("detail-%d", n): map[string]any{
				"method": mcp.MethodElicitationCreate,
				"params": map[string]any{
					"message":         fmt.Sprintf("Question %d: which «région» did you mean?", n),
					"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"region": map[string]any{"type": "string"}}},
				},
			}},
		})
	}))
	var asked int
	s := connect(t, conn, &transport.Options{ProtocolVersion: mcp.Version20260728, Handlers: transport.Handlers{
		Elicitation: func(_ context.Context, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked++
			n := asked
			mu.Unlock()
			if n > transport.MaxInputRounds {
				return nil, fmt.Errorf("test: elicitation handler called %d times, past MaxInputRounds (%d)", n, transport.MaxInputRounds)
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"region": "Île-de-France"}}, nil
		},
	}})
	_, err := s.Task("t-interview").Wait(ctx, &transport.WaitOptions{MinInterval: time.Millisecond, MaxInterval: time.Millisecond})
	mu.Lock()
	defer mu.Unlock()
	if !errors.Is(err, transport.ErrProtocol) {
		t.Fatalf("Wait = %v after %d handler calls, want ErrProtocol after %d", err, asked, transport.MaxInputRounds)
	}
	if asked != transport.MaxInputRounds {
		t.Fatalf("the elicitation handler was called %d times, want MaxInputRounds (%d)", asked, transport.MaxInputRounds)
	}
}

// TestTaskGetAnsweredForAnotherTaskIsRefused pins the id check of
// tasks/get. A server (or a proxy mixing up its sessions) that answers
// tasks/get for one task with another task's state must not have that
// state taken for the asked task's: a Wait would then report, and fetch the
// result of, somebody else's task.
func TestTaskGetAnsweredForAnotherTaskIsRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), fakeWait)
	defer cancel()
	base := legacyTasks(t, map[string]string{"report": mcp.TaskSupportOptional})
	_, conn := startFake(t, func(f *fakeServer, m *mcp.Message) *mcp.Message {
		if m.Method == mcp.MethodTasksGet {
			other := task("t-someone-else", mcp.TaskCompleted)
			other["statusMessage"] = "quarterly report for «ACME» is ready"
			return result(m.ID, other)
		}
		return base(f, m)
	})
	s := connect(t, conn, &transport.Options{ProtocolVersion: mcp.Version20251125})
	ti, err := s.GetTask(ctx, &mcp.GetTaskParams{TaskID: "t-report"})
	if !errors.Is(err, transport.ErrProtocol) {
		t.Fatalf("GetTask(t-report) = %+v, %v; want ErrProtocol for an answer about task t-someone-else", ti, err)
	}
	if _, err := s.Task("t-report").Get(ctx); !errors.Is(err, transport.ErrProtocol) {
		t.Fatalf("Task.Get = %v, want ErrProtocol", err)
	}
}
