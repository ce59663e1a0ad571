package interop

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// Tasks on the 2025-11-25 wire against mcp-go's server (servers/mcpgo: slow
// runs as a task when asked, fail_job must and fails), over stdio and over
// Streamable HTTP. mcp-go sets no pollInterval and sends
// notifications/tasks/status when a task ends.

func TestMCPGoTasks(t *testing.T) {
	opts := &transport.Options{ProtocolVersion: mcp.Version20251125}
	wires := []struct {
		name    string
		connect func(t *testing.T, ctx context.Context) *transport.Session
	}{
		{"stdio", func(t *testing.T, ctx context.Context) *transport.Session {
			return connect(t, ctx, filepath.Join(peerBin, "mcpgo"), nil, opts)
		}},
		{"streamableHttp", func(t *testing.T, ctx context.Context) *transport.Session {
			return connectHTTP(t, ctx, goPeerHTTP(t, "mcpgo"), opts)
		}},
	}
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			ctx := testContext(t)
			testMCPGoTasks(t, ctx, w.connect(t, ctx))
		})
	}
}

func testMCPGoTasks(t *testing.T, ctx context.Context, s *transport.Session) {
	tools, err := s.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	support := map[string]string{}
	for _, tl := range tools {
		if tl.Execution != nil {
			support[tl.Name] = tl.Execution.TaskSupport
		}
	}
	if support["slow"] != mcp.TaskSupportOptional || support["fail_job"] != mcp.TaskSupportRequired {
		t.Fatalf("taskSupport by tool %v, want slow optional and fail_job required", support)
	}

	t.Run("status notification wakes Wait", func(t *testing.T) {
		task, err := s.CallToolTask(ctx, &mcp.CallToolParams{Name: "slow", Arguments: json.RawMessage(`{"ms":300}`)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if task.ID() == "" {
			t.Fatal("the server answered at once; want a task")
		}
		// Polls 30 s apart: only the server's notifications/tasks/status
		// can end this Wait well within the test's minute.
		start := time.Now()
		log := &statusLog{}
		res, err := task.Wait(ctx, &transport.WaitOptions{OnStatus: log.add, MinInterval: 30 * time.Second})
		if err != nil {
			t.Fatalf("wait: %v (statuses %v)", err, log.statuses())
		}
		if res.Text() != "slept 300 ms" {
			t.Errorf("result %q", res.Text())
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("Wait took %v: the status notification did not wake it", d)
		}
		if st := log.statuses(); len(st) < 2 || st[len(st)-1] != mcp.TaskCompleted {
			t.Errorf("statuses %v, want working ... completed", st)
		}
		listed, err := s.ListTasks(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(listed, func(ti transport.TaskInfo) bool {
			return ti.ID == task.ID() && ti.Status == mcp.TaskCompleted
		}) {
			t.Errorf("tasks/list lacks completed %s: %+v", task.ID(), listed)
		}
	})

	t.Run("optional tool called directly", func(t *testing.T) {
		res := call(t, ctx, s, "slow", `{"ms":1}`)
		if res.Text() != "slept 1 ms" {
			t.Errorf("result %q", res.Text())
		}
	})

	t.Run("CallTool with params.task", func(t *testing.T) {
		ttl := int64(60000)
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: json.RawMessage(`{"ms":50}`), Task: &mcp.TaskParams{TTL: &ttl}})
		if err != nil || res.Text() != "slept 50 ms" {
			t.Fatalf("CallTool as a task: %v, %v", res, err)
		}
	})

	t.Run("failed task", func(t *testing.T) {
		// fail_job requires a task: CallTool runs it as one.
		_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "fail_job"})
		var te *transport.TaskError
		var rpcErr *mcp.Error
		if !errors.Is(err, transport.ErrTaskFailed) || !errors.As(err, &te) || !errors.As(err, &rpcErr) {
			t.Fatalf("CallTool fail_job: %v, want a TaskError wrapping ErrTaskFailed and the server's *mcp.Error", err)
		}
		if te.TaskID == "" || te.Status != mcp.TaskFailed {
			t.Errorf("TaskError %+v", te)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		task, err := s.CallToolTask(ctx, &mcp.CallToolParams{Name: "slow", Arguments: json.RawMessage(`{"ms":5000}`)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := task.Cancel(ctx); err != nil {
			t.Fatal(err)
		}
		_, err = task.Wait(ctx, nil)
		if !errors.Is(err, transport.ErrTaskCancelled) {
			t.Fatalf("wait after cancel: %v, want ErrTaskCancelled", err)
		}
		ti, err := s.GetTask(ctx, &mcp.GetTaskParams{TaskID: task.ID()})
		if err != nil || ti.Status != mcp.TaskCancelled {
			t.Errorf("tasks/get after cancel: %+v, %v", ti, err)
		}
	})
}

// TestMCPGoTasksModern: on 2026-07-28 mcp-go does not declare the tasks
// extension, so CallToolTask makes a plain call and the handle holds the
// answer.
func TestMCPGoTasksModern(t *testing.T) {
	ctx := testContext(t)
	s := connect(t, ctx, filepath.Join(peerBin, "mcpgo"), nil, &transport.Options{ProtocolVersion: mcp.Version20260728})
	task, err := s.CallToolTask(ctx, &mcp.CallToolParams{Name: "slow", Arguments: json.RawMessage(`{"ms":1}`)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if task.ID() != "" {
		t.Fatalf("task %q created without the extension", task.ID())
	}
	res, err := task.Wait(ctx, nil)
	if err != nil || res.Text() != "slept 1 ms" {
		t.Fatalf("wait: %v, %v", res, err)
	}
	if _, err := s.GetTask(ctx, &mcp.GetTaskParams{TaskID: "nope"}); !errors.Is(err, transport.ErrCapability) {
		t.Errorf("GetTask without the extension: %v, want ErrCapability", err)
	}
}

// TestMCPGoRequiredTaskToolUnlisted: the same against mcp-go, whose
// fail_job requires a task: called straight after Connect it got "requires
// task augmentation" from the server, not the task's failure.
func TestMCPGoRequiredTaskToolUnlisted(t *testing.T) {
	opts := &transport.Options{ProtocolVersion: mcp.Version20251125}
	for name, connectTo := range map[string]func(t *testing.T, ctx context.Context) *transport.Session{
		"stdio": func(t *testing.T, ctx context.Context) *transport.Session {
			return connect(t, ctx, filepath.Join(peerBin, "mcpgo"), nil, opts)
		},
		"streamableHttp": func(t *testing.T, ctx context.Context) *transport.Session {
			return connectHTTP(t, ctx, goPeerHTTP(t, "mcpgo"), opts)
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			s := connectTo(t, ctx)
			_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "fail_job"})
			var te *transport.TaskError
			if !errors.Is(err, transport.ErrTaskFailed) || !errors.As(err, &te) || te.TaskID == "" {
				t.Fatalf("CallTool fail_job: %v, want the task's failure (a TaskError wrapping ErrTaskFailed)", err)
			}
		})
	}
}
