package interop

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// Tasks on the 2025-11-25 wire against the reference server, over stdio and
// over Streamable HTTP. Its simulate-research-query tool requires a task
// (execution.taskSupport "required"), steps through four stages a second
// each, and with ambiguous set asks the user to clarify (an elicitation the
// server delivers while tasks/result is open).

const researchTool = "simulate-research-query"

// statusLog records what Wait reports, for the test to read afterwards.
type statusLog struct {
	mu  sync.Mutex
	got []transport.TaskInfo
}

func (l *statusLog) add(ti transport.TaskInfo) {
	l.mu.Lock()
	l.got = append(l.got, ti)
	l.mu.Unlock()
}

func (l *statusLog) statuses() []mcp.TaskStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []mcp.TaskStatus
	for _, ti := range l.got {
		if len(out) == 0 || out[len(out)-1] != ti.Status {
			out = append(out, ti.Status)
		}
	}
	return out
}

// clarify answers the research tool's elicitation by picking the first
// interpretation it offers.
type clarify struct {
	mu     sync.Mutex
	asked  []string
	picked string
}

func (c *clarify) elicit(_ context.Context, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	var schema struct {
		Properties map[string]struct {
			OneOf []struct {
				Const string `json:"const"`
			} `json:"oneOf"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(req.RequestedSchema, &schema); err != nil {
		return nil, err
	}
	opts := schema.Properties["interpretation"].OneOf
	if len(opts) == 0 {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	c.mu.Lock()
	c.asked = append(c.asked, req.Message)
	c.picked = opts[0].Const
	c.mu.Unlock()
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"interpretation": opts[0].Const}}, nil
}

func TestEverythingTasks(t *testing.T) {
	c := &clarify{}
	opts := func() *transport.Options {
		return &transport.Options{Handlers: transport.Handlers{Elicitation: c.elicit}}
	}
	everythingWires(t, opts, func(t *testing.T, ctx context.Context, s *transport.Session) {
		caps, err := func() (*mcp.ServerTasksCapability, error) {
			sc := s.ServerInfo().Capabilities
			return sc.TasksCapability()
		}()
		if err != nil || !caps.ToolCall() {
			t.Fatalf("server tasks capability %v (%v): want tasks.requests.tools.call", caps, err)
		}
		tools, err := s.ListTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(tools, func(tl mcp.Tool) bool { return tl.Name == researchTool })
		if i < 0 || tools[i].Execution == nil || tools[i].Execution.TaskSupport != mcp.TaskSupportRequired {
			t.Fatalf("%s not listed with taskSupport required: %+v", researchTool, tools)
		}

		t.Run("handle", func(t *testing.T) {
			task, err := s.CallToolTask(ctx, &mcp.CallToolParams{Name: researchTool, Arguments: json.RawMessage(`{"topic":"octopus"}`)}, &transport.TaskOptions{TTL: 60e9})
			if err != nil {
				t.Fatal(err)
			}
			if task.ID() == "" {
				t.Fatal("the server answered at once; want a task")
			}
			log := &statusLog{}
			res, err := task.Wait(ctx, &transport.WaitOptions{OnStatus: log.add})
			if err != nil {
				t.Fatalf("wait: %v (statuses %v)", err, log.statuses())
			}
			if !strings.Contains(res.Text(), "Research Report: octopus") {
				t.Errorf("result %q lacks the report", res.Text())
			}
			st := log.statuses()
			if len(st) < 2 || st[0] != mcp.TaskWorking || st[len(st)-1] != mcp.TaskCompleted {
				t.Errorf("statuses %v, want working ... completed", st)
			}
			listed, err := s.ListTasks(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(listed, func(ti transport.TaskInfo) bool { return ti.ID == task.ID() }) {
				t.Errorf("tasks/list lacks %s: %+v", task.ID(), listed)
			}
		})

		t.Run("input_required", func(t *testing.T) {
			task, err := s.CallToolTask(ctx, &mcp.CallToolParams{Name: researchTool, Arguments: json.RawMessage(`{"topic":"python","ambiguous":true}`)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			log := &statusLog{}
			res, err := task.Wait(ctx, &transport.WaitOptions{OnStatus: log.add})
			if err != nil {
				t.Fatalf("wait: %v (statuses %v)", err, log.statuses())
			}
			c.mu.Lock()
			picked, asked := c.picked, len(c.asked)
			c.mu.Unlock()
			if asked == 0 || picked == "" {
				t.Fatal("the elicitation handler was not asked")
			}
			if !strings.Contains(res.Text(), "Clarification**: "+picked) {
				t.Errorf("result %q lacks the clarification %q", res.Text(), picked)
			}
		})

		t.Run("required tool through CallTool", func(t *testing.T) {
			res := call(t, ctx, s, researchTool, `{"topic":"tides"}`)
			if !strings.Contains(res.Text(), "Research Report: tides") {
				t.Errorf("result %q lacks the report", res.Text())
			}
		})

		t.Run("cancel", func(t *testing.T) {
			task, err := s.CallToolTask(ctx, &mcp.CallToolParams{Name: researchTool, Arguments: json.RawMessage(`{"topic":"cancelled"}`)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := task.Cancel(ctx); err != nil {
				t.Fatal(err)
			}
			_, err = task.Wait(ctx, nil)
			var te *transport.TaskError
			if !errors.Is(err, transport.ErrTaskCancelled) || !errors.As(err, &te) || te.TaskID != task.ID() {
				t.Fatalf("wait after cancel: %v, want a TaskError wrapping ErrTaskCancelled", err)
			}
		})
	})
}

// TestEverythingRequiredTaskToolUnlisted: "CallTool of a taskSupport
// required tool fails unless the tools were listed first". A program that
// called simulate-research-query straight after Connect got the server's
// "requires task augmentation": the engine knew taskSupport only from a
// listing, and sent a plain call. It now lists the tools on demand, once,
// and runs the call as a task.
func TestEverythingRequiredTaskToolUnlisted(t *testing.T) {
	c := &clarify{}
	opts := func() *transport.Options {
		return &transport.Options{Handlers: transport.Handlers{Elicitation: c.elicit}}
	}
	everythingWires(t, opts, func(t *testing.T, ctx context.Context, s *transport.Session) {
		res := call(t, ctx, s, researchTool, `{"topic":"kelp"}`)
		if !strings.Contains(res.Text(), "Research Report: kelp") {
			t.Errorf("result %q lacks the report", res.Text())
		}
	})
}
