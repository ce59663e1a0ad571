package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/tako-mcp/tako/mcp"
)

// The client as a task receiver (2025-11-25, checklist §7D). With
// Options.TaskReceiver the client declares the tasks capability for the
// requests it has handlers for, and a server may then send
// sampling/createMessage or elicitation/create with params.task: the
// client answers at once with a CreateTaskResult, runs the handler in the
// background, and answers the server's tasks/get, tasks/result, tasks/list
// and tasks/cancel about it, telling it each end with
// notifications/tasks/status. 2026-07-28 has no such role: its tasks
// extension covers tools/call only.

const (
	// maxReceivedTasks bounds the tasks a client holds for a server,
	// running or finished and not yet expired; past it a task-augmented
	// request is refused (-32603).
	maxReceivedTasks = 64
	// receivedTaskTTL is how long a finished task is kept when the server
	// asks for no ttl, and the most it may ask for.
	receivedTaskTTL    = 10 * time.Minute
	receivedTaskPollMs = 500
)

type receivedTask struct {
	task    mcp.Task
	created time.Time
	ttl     time.Duration
	cancel  context.CancelFunc
	done    chan struct{} // closed when the handler has returned
	result  any
	err     error
}

type receivedTasks struct {
	mu    sync.Mutex
	tasks map[string]*receivedTask
	seq   int
}

// receiverCapability is the client tasks capability Options.TaskReceiver
// declares: the requests the handlers serve, list and cancel.
func receiverCapability(h *Handlers) json.RawMessage {
	tc := &mcp.ClientTasksCapability{List: &struct{}{}, Cancel: &struct{}{}, Requests: &mcp.ClientTaskRequestsCapability{}}
	if h.Sampling != nil {
		tc.Requests.Sampling = &struct {
			CreateMessage *struct{} `json:"createMessage,omitempty"`
		}{CreateMessage: &struct{}{}}
	}
	if h.Elicitation != nil {
		tc.Requests.Elicitation = &struct {
			Create *struct{} `json:"create,omitempty"`
		}{Create: &struct{}{}}
	}
	b, _ := json.Marshal(tc) // plain structs: cannot fail
	return b
}

// serveAsTask reports whether msg is one the receiver handles: a tasks/*
// request, or a task-augmented sampling or elicitation request.
func (s *Session) serveAsTask(msg *mcp.Message) bool {
	if !s.opts.TaskReceiver || s.modern {
		return false
	}
	switch msg.Method {
	case mcp.MethodTasksGet, mcp.MethodTasksResult, mcp.MethodTasksList, mcp.MethodTasksCancel:
		return true
	case mcp.MethodSamplingCreateMessage, mcp.MethodElicitationCreate:
		var p struct {
			Task json.RawMessage `json:"task"`
		}
		return json.Unmarshal(msg.Params, &p) == nil && len(p.Task) > 0 && string(p.Task) != "null"
	}
	return false
}

// serveTaskRequest answers a request serveAsTask took; ctx is the
// request's own (tasks/result waits on it).
func (s *Session) serveTaskRequest(ctx context.Context, msg *mcp.Message) (any, error) {
	if msg.Method == mcp.MethodSamplingCreateMessage || msg.Method == mcp.MethodElicitationCreate {
		return s.createReceivedTask(msg)
	}
	var p struct {
		TaskID string `json:"taskId"`
	}
	if msg.Method != mcp.MethodTasksList {
		if json.Unmarshal(msg.Params, &p) != nil || p.TaskID == "" {
			return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: msg.Method + ": bad or missing taskId"}
		}
	}
	rt := &s.received
	rt.mu.Lock()
	rt.prune(time.Now())
	t := rt.tasks[p.TaskID]
	if t == nil && msg.Method != mcp.MethodTasksList {
		rt.mu.Unlock()
		return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: fmt.Sprintf("%s: unknown task %q", msg.Method, p.TaskID)}
	}
	switch msg.Method {
	case mcp.MethodTasksList:
		out := &mcp.ListTasksResult{}
		for _, t := range rt.tasks {
			out.Tasks = append(out.Tasks, t.task)
		}
		rt.mu.Unlock()
		sort.Slice(out.Tasks, func(i, j int) bool { return out.Tasks[i].CreatedAt < out.Tasks[j].CreatedAt })
		return out, nil
	case mcp.MethodTasksGet:
		defer rt.mu.Unlock()
		return &mcp.GetTaskResult{Task: t.task}, nil
	case mcp.MethodTasksCancel:
		if t.task.Status.IsTerminal() {
			rt.mu.Unlock()
			return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: fmt.Sprintf("tasks/cancel: task %q is already %s", p.TaskID, t.task.Status)}
		}
		t.task.Status, t.task.StatusMessage = mcp.TaskCancelled, "cancelled by the server"
		t.task.LastUpdatedAt = stamp(time.Now())
		t.cancel()
		task := t.task
		rt.mu.Unlock()
		s.notifyTaskStatus(task)
		return &mcp.CancelTaskResult{Task: task}, nil
	}
	// tasks/result: wait for the handler, then what the request itself
	// would have answered.
	rt.mu.Unlock()
	select {
	case <-t.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	rt.mu.Lock()
	status, res, err := t.task.Status, t.result, t.err
	rt.mu.Unlock()
	if status == mcp.TaskCancelled {
		return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: fmt.Sprintf("tasks/result: task %q was cancelled", p.TaskID)}
	}
	if err != nil {
		return nil, err
	}
	return withRelatedTask(res, p.TaskID)
}

// createReceivedTask starts the handler of a task-augmented request and
// returns the CreateTaskResult.
func (s *Session) createReceivedTask(msg *mcp.Message) (any, error) {
	var p struct {
		Task struct {
			TTL *int64 `json:"ttl"`
		} `json:"task"`
	}
	if err := json.Unmarshal(msg.Params, &p); err != nil {
		return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: msg.Method + ": bad task params: " + err.Error()}
	}
	ttl := receivedTaskTTL
	if p.Task.TTL != nil && *p.Task.TTL > 0 {
		ttl = min(time.Duration(*p.Task.TTL)*time.Millisecond, receivedTaskTTL)
	}
	now := time.Now()
	rt := &s.received
	rt.mu.Lock()
	rt.prune(now)
	if len(rt.tasks) >= maxReceivedTasks {
		rt.mu.Unlock()
		return nil, &mcp.Error{Code: mcp.CodeInternalError, Message: fmt.Sprintf("client busy: more than %d tasks", maxReceivedTasks)}
	}
	if rt.tasks == nil {
		rt.tasks = make(map[string]*receivedTask)
	}
	rt.seq++
	ttlMs, poll := ttl.Milliseconds(), int64(receivedTaskPollMs)
	ctx, cancel := context.WithCancel(s.readerCtx)
	t := &receivedTask{created: now, ttl: ttl, cancel: cancel, done: make(chan struct{}),
		task: mcp.Task{TaskID: "client-task-" + strconv.Itoa(rt.seq), Status: mcp.TaskWorking,
			CreatedAt: stamp(now), LastUpdatedAt: stamp(now), TTL: &ttlMs, PollInterval: &poll}}
	rt.tasks[t.task.TaskID] = t
	created := t.task
	s.wg.Add(1)
	rt.mu.Unlock()
	go func() {
		defer s.wg.Done()
		defer cancel()
		res, err := s.opts.Handlers.Serve(ctx, msg.Method, msg.Params)
		rt.mu.Lock()
		close(t.done)
		if t.task.Status.IsTerminal() { // cancelled meanwhile
			rt.mu.Unlock()
			return
		}
		t.result, t.err = res, err
		t.task.Status, t.task.LastUpdatedAt = mcp.TaskCompleted, stamp(time.Now())
		if err != nil {
			t.task.Status, t.task.StatusMessage = mcp.TaskFailed, err.Error()
		}
		task := t.task
		rt.mu.Unlock()
		s.notifyTaskStatus(task)
	}()
	return &mcp.CreateTaskResult{Task: created}, nil
}

// prune forgets finished tasks past their ttl. Called with rt.mu held.
func (rt *receivedTasks) prune(now time.Time) {
	for id, t := range rt.tasks {
		if t.task.Status.IsTerminal() && now.Sub(t.created) > t.ttl {
			delete(rt.tasks, id)
		}
	}
}

// notifyTaskStatus tells the server a task's new state (optional for it
// to read: it polls as well).
func (s *Session) notifyTaskStatus(task mcp.Task) {
	ctx, cancel := context.WithTimeout(s.readerCtx, 5*time.Second)
	defer cancel()
	if err := s.Notify(ctx, mcp.NotificationTasksStatus, &mcp.TaskStatusParams{Task: task}); err != nil && !errors.Is(err, context.Canceled) {
		s.log.Debug("mcp: could not send a task status", "task", task.TaskID, "err", err)
	}
}

// withRelatedTask returns res as JSON with _meta naming the task, as
// tasks/result answers carry.
func withRelatedTask(res any, id string) (json.RawMessage, error) {
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	rel, _ := json.Marshal(mcp.RelatedTask{TaskID: id})
	return addMeta(b, append([]byte(`"`+mcp.MetaRelatedTask+`":`), rel...))
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
