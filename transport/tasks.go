package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/tako-mcp/tako/mcp"
)

// Tasks (checklist §7D): a tools/call the server runs in the background,
// answered at once with a task that the client polls until it ends. The two
// eras disagree on almost everything but the idea:
//
//   - 2025-11-25 (core, experimental): the client asks per call with
//     params.task, and only for a tool whose execution.taskSupport allows it
//     on a server that declares tasks.requests.tools.call. The answer is
//     {task:{…}}; tasks/get polls it; tasks/result blocks and returns the
//     call's result, and while it is open the server sends the requests it
//     needs (elicitation, sampling), which Handlers answer as any server
//     request.
//   - 2026-07-28 (extension io.modelcontextprotocol/tasks): the client opts
//     in by declaring the extension in its per-request capabilities, and the
//     server decides. The answer is resultType "task"; tasks/get returns the
//     task with its result, its error or the inputRequests it waits for,
//     which Handlers answer and tasks/update delivers.
//
// Task is the one handle over both, and Wait the one loop: it polls at the
// server's interval (bounded), reports status changes, answers input, and
// returns the call's result. A "task" answer the client did not opt in to
// stays a protocol error (call.go).

// Errors a task ends in. A *TaskError carries them; errors.Is works on it.
var (
	// ErrTaskFailed: the task ended with status failed; the server's
	// JSON-RPC error, when it gave one, is TaskError.Err.
	ErrTaskFailed = errors.New("mcp: task failed")
	// ErrTaskCancelled: the task ended with status cancelled.
	ErrTaskCancelled = errors.New("mcp: task cancelled")
)

// TaskError reports a task that ended without a result: failed or
// cancelled. errors.Is matches ErrTaskFailed or ErrTaskCancelled by Status,
// and errors.As reaches the server's *mcp.Error through it.
type TaskError struct {
	// TaskID is the task's id.
	TaskID string
	// Status is failed or cancelled.
	Status mcp.TaskStatus
	// Message is the task's statusMessage, if any.
	Message string
	// Err is the JSON-RPC error the request ended in, when the server said.
	Err *mcp.Error
}

func (e *TaskError) Error() string {
	msg := fmt.Sprintf("mcp: task %q %s", e.TaskID, e.Status)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Is matches ErrTaskFailed and ErrTaskCancelled by the task's status.
func (e *TaskError) Is(target error) bool {
	switch target {
	case ErrTaskFailed:
		return e.Status == mcp.TaskFailed
	case ErrTaskCancelled:
		return e.Status == mcp.TaskCancelled
	}
	return false
}

// Unwrap returns the server's JSON-RPC error, if any.
func (e *TaskError) Unwrap() error {
	if e.Err == nil {
		return nil
	}
	return e.Err
}

// TaskInfo is what the server last said about a task, in either era.
type TaskInfo struct {
	ID            string
	Status        mcp.TaskStatus
	StatusMessage string
	// CreatedAt and LastUpdatedAt are ISO 8601 timestamps, as sent.
	CreatedAt     string
	LastUpdatedAt string
	// TTL is how long the server keeps the task after its creation; zero
	// means no limit.
	TTL time.Duration
	// PollInterval is the server's suggested polling interval; zero means
	// it suggested none.
	PollInterval time.Duration

	// The 2026-07-28 extension inlines these in tasks/get: the requests an
	// input_required task waits for, a completed task's result (a raw
	// CallToolResult), a failed task's error.
	InputRequests map[string]mcp.InputRequest
	Result        json.RawMessage
	Error         *mcp.Error
}

func msDuration(p *int64) time.Duration {
	if p == nil || *p <= 0 {
		return 0
	}
	return time.Duration(*p) * time.Millisecond
}

func legacyTaskInfo(t *mcp.Task) TaskInfo {
	return TaskInfo{
		ID: t.TaskID, Status: t.Status, StatusMessage: t.StatusMessage,
		CreatedAt: t.CreatedAt, LastUpdatedAt: t.LastUpdatedAt,
		TTL: msDuration(t.TTL), PollInterval: msDuration(t.PollInterval),
	}
}

func extTaskInfo(t *mcp.ExtTask) TaskInfo {
	return TaskInfo{
		ID: t.TaskID, Status: t.Status, StatusMessage: t.StatusMessage,
		CreatedAt: t.CreatedAt, LastUpdatedAt: t.LastUpdatedAt,
		TTL: msDuration(t.TTLMs), PollInterval: msDuration(t.PollIntervalMs),
		InputRequests: t.InputRequests, Result: t.Result, Error: t.Error,
	}
}

// check rejects a task a server described badly: without an id or with a
// status the spec does not define, nothing can be done with it.
func (ti *TaskInfo) check(method string) error {
	if ti.ID == "" {
		return fmt.Errorf("%w: %s: task without a taskId", ErrProtocol, method)
	}
	if !ti.Status.IsValid() {
		return fmt.Errorf("%w: %s: task %q has unknown status %q", ErrProtocol, method, ti.ID, ti.Status)
	}
	return nil
}

// TaskOptions configure a task-augmented call. Nil means defaults.
type TaskOptions struct {
	// TTL asks a 2025-11-25 server to keep the task and its result this
	// long after creation; zero leaves it to the server. (The 2026-07-28
	// extension has no such request: its server decides.)
	TTL time.Duration
}

// Task is a task a server runs for one tools/call, or the result it gave
// at once instead. Get it from Session.CallToolTask, or from Session.Task
// for a task id kept from earlier. Its methods are safe for concurrent
// use.
type Task struct {
	s      *Session
	tool   string // for output validation; "" when the handle came from an id
	modern bool

	mu       sync.Mutex
	info     TaskInfo
	now      *mcp.CallToolResult // the server answered without a task
	nowErr   error
	answered map[string]bool // 2026-07-28 inputRequests keys already answered
	rounds   int             // input rounds answered, bounded by MaxInputRounds
}

// ID returns the task's id, or "" when the server answered the call at once
// without creating a task.
func (t *Task) ID() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.info.ID
}

// Info returns what the server last said about the task. For a call the
// server answered at once it is a completed TaskInfo without an id.
func (t *Task) Info() TaskInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.info
}

func (t *Task) setInfo(ti TaskInfo) {
	t.mu.Lock()
	t.info = ti
	t.mu.Unlock()
	t.s.taskEnded(ti)
}

// Get asks the server for the task's state (tasks/get) and returns it.
func (t *Task) Get(ctx context.Context) (TaskInfo, error) {
	if id := t.ID(); id != "" {
		ti, err := t.s.getTask(ctx, id)
		if err == nil {
			t.setInfo(ti)
		}
		return ti, err
	}
	return t.Info(), nil
}

// Cancel asks the server to cancel the task (tasks/cancel; never
// notifications/cancelled, which the spec forbids for tasks). Cancellation
// is cooperative: Wait reports the outcome. A call answered at once has
// nothing to cancel.
func (t *Task) Cancel(ctx context.Context) error {
	if id := t.ID(); id != "" {
		return t.s.cancelTask(ctx, id)
	}
	return nil
}

// Task returns a handle on the task id created earlier on this server, for
// example an id a program kept across a restart (the spec asks clients to
// persist task ids). Wait on it returns the raw result, not validated
// against an output schema, since the handle does not know the tool.
func (s *Session) Task(id string) *Task {
	return &Task{s: s, modern: s.modern, info: TaskInfo{ID: id, Status: mcp.TaskWorking}}
}

// CallToolTask calls a tool as a task where the server and the tool allow
// it, and returns the handle; Wait on it gives the result.
//
//	t, err := sess.CallToolTask(ctx, &mcp.CallToolParams{Name: "research", Arguments: args}, nil)
//	...
//	res, err := t.Wait(ctx, nil)
//
// On 2025-11-25 the call carries params.task when the server declares
// tasks.requests.tools.call and the tool's execution.taskSupport is
// optional or required (a tool not seen listed is learnt by listing the
// tools first, once, and one the listing lacks is asked as a task); a tool
// that forbids tasks, or a server without task support, is called
// directly. On 2026-07-28 the call opts in to the tasks extension, for
// this call only, when the server declares it, and the server decides.
// Either way, when the server answers at once, the handle holds that
// result (ID is "") and Wait returns it. p.Task is ignored: opts decides.
func (s *Session) CallToolTask(ctx context.Context, p *mcp.CallToolParams, opts *TaskOptions) (*Task, error) {
	if p == nil {
		return nil, errors.New("mcp: CallToolTask: nil params")
	}
	s.learnTaskSupport(ctx, p.Name)
	q := *p
	q.Task = nil
	if s.modern {
		if caps := s.ServerInfo().Capabilities; caps.HasExtension(mcp.ExtensionTasks) {
			ctx = withTaskOptIn(ctx)
		}
	} else if s.taskAugment(p.Name) {
		q.Task = &mcp.TaskParams{}
		if opts != nil && opts.TTL > 0 {
			ttl := opts.TTL.Milliseconds()
			q.Task.TTL = &ttl
		}
	}
	raw, err := marshalObject(&q)
	if err != nil {
		return nil, err
	}
	info := &RequestInfo{Modern: s.modern, Name: p.Name, HasName: true, Arguments: p.Arguments}
	res, err := s.call(ctx, mcp.MethodToolsCall, raw, info)
	if err != nil {
		return nil, err
	}
	return s.toolTask(ctx, p.Name, res)
}

// toolTask turns a tools/call result into a handle: a created task, or the
// result the server gave at once.
func (s *Session) toolTask(ctx context.Context, tool string, res json.RawMessage) (*Task, error) {
	ti, ok, err := s.createdTask(res)
	if err != nil {
		return nil, err
	}
	t := &Task{s: s, tool: tool, modern: s.modern}
	if ok {
		t.info = ti
		return t, nil
	}
	r, rerr := s.decodeToolResult(ctx, tool, res)
	if r == nil {
		return nil, rerr
	}
	t.info = TaskInfo{Status: mcp.TaskCompleted}
	t.now, t.nowErr = r, rerr
	return t, nil
}

// createdTask reports whether a tools/call result is a task the server
// created, and decodes it: resultType "task" on 2026-07-28, a task member
// on 2025-11-25.
func (s *Session) createdTask(res json.RawMessage) (TaskInfo, bool, error) {
	if s.modern {
		rt, err := mcp.ParseResultType(res)
		if err != nil || rt != mcp.ResultTypeTask {
			return TaskInfo{}, false, nil
		}
		var r mcp.ExtCreateTaskResult
		if err := json.Unmarshal(res, &r); err != nil {
			return TaskInfo{}, false, fmt.Errorf("%w: tools/call task result: %v", ErrProtocol, err)
		}
		ti := extTaskInfo(&r.ExtTask)
		return ti, true, ti.check(mcp.MethodToolsCall)
	}
	if !bytes.Contains(res, []byte(`"task"`)) {
		return TaskInfo{}, false, nil
	}
	var r struct {
		Task *mcp.Task `json:"task"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return TaskInfo{}, false, fmt.Errorf("%w: tools/call task result: %v", ErrProtocol, err)
	}
	if r.Task == nil {
		return TaskInfo{}, false, nil
	}
	ti := legacyTaskInfo(r.Task)
	return ti, true, ti.check(mcp.MethodToolsCall)
}

// taskAugment reports whether a 2025-11-25 tools/call of tool may carry
// params.task: the server takes task-augmented calls and the tool, if it
// was listed, does not forbid them.
func (s *Session) taskAugment(tool string) bool {
	sc := s.ServerInfo().Capabilities
	caps, err := sc.TasksCapability()
	if err != nil || !caps.ToolCall() {
		return false
	}
	support, known := s.schemas.taskSupport(tool)
	return !known || support != mcp.TaskSupportForbidden
}

// mustTask reports whether CallTool has to run a 2025-11-25 call as a task:
// the caller asked (p.Task), or the tool requires it (taskSupport
// "required", which without a task gets -32601).
func (s *Session) mustTask(p *mcp.CallToolParams) bool {
	if s.modern || !s.taskAugment(p.Name) {
		return false
	}
	if p.Task != nil {
		return true
	}
	support, _ := s.schemas.taskSupport(p.Name)
	return support == mcp.TaskSupportRequired
}

// taskSupportOf is a tool's execution.taskSupport, "forbidden" when absent.
func taskSupportOf(t *mcp.Tool) string {
	if t.Execution == nil || t.Execution.TaskSupport == "" {
		return mcp.TaskSupportForbidden
	}
	return t.Execution.TaskSupport
}

// taskSupport returns the taskSupport of a listed tool; known is false for
// a tool not seen listed.
func (ts *toolSchemas) taskSupport(tool string) (support string, known bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	support, known = ts.support[tool]
	return support, known
}

// callToolAsTask is CallTool for a call that runs as a task: start it and
// wait for its result. The caller holds no handle, so if ctx ends first
// the task is cancelled, in the background and bounded.
func (s *Session) callToolAsTask(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	var opts *TaskOptions
	if p.Task != nil && p.Task.TTL != nil {
		opts = &TaskOptions{TTL: time.Duration(*p.Task.TTL) * time.Millisecond}
	}
	t, err := s.CallToolTask(ctx, p, opts)
	if err != nil {
		return nil, err
	}
	return t.waitOwned(ctx)
}

// waitOwned waits for a task no caller holds a handle on, cancelling it
// when ctx ends first.
func (t *Task) waitOwned(ctx context.Context) (*mcp.CallToolResult, error) {
	res, err := t.Wait(ctx, nil)
	if err != nil && ctx.Err() != nil {
		if id := t.ID(); id != "" {
			t.s.cancelInBackground(id)
		}
	}
	return res, err
}

// cancelInBackground sends tasks/cancel for a task whose caller gave up,
// bounded, on a goroutine the session's Close waits for.
func (s *Session) cancelInBackground(id string) {
	s.mu.Lock()
	select {
	case <-s.done:
		s.mu.Unlock()
		return
	default:
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		ctx, cancel := context.WithTimeout(s.readerCtx, 5*time.Second)
		defer cancel()
		if err := s.cancelTask(ctx, id); err != nil {
			s.log.Debug("mcp: could not cancel an abandoned task", "task", id, "err", err)
		}
	}()
}

// GetTask asks the server for the state of the task p names (tasks/get).
func (s *Session) GetTask(ctx context.Context, p *mcp.GetTaskParams) (TaskInfo, error) {
	return s.getTask(ctx, taskID(p))
}

func (s *Session) getTask(ctx context.Context, id string) (TaskInfo, error) {
	res, err := s.taskCall(ctx, mcp.MethodTasksGet, id, &mcp.GetTaskParams{TaskID: id})
	if err != nil {
		return TaskInfo{}, err
	}
	var ti TaskInfo
	if s.modern {
		var r mcp.ExtGetTaskResult
		if err := json.Unmarshal(res, &r); err != nil {
			return TaskInfo{}, fmt.Errorf("%w: tasks/get result: %v", ErrProtocol, err)
		}
		ti = extTaskInfo(&r.ExtTask)
	} else {
		var r mcp.GetTaskResult
		if err := json.Unmarshal(res, &r); err != nil {
			return TaskInfo{}, fmt.Errorf("%w: tasks/get result: %v", ErrProtocol, err)
		}
		ti = legacyTaskInfo(&r.Task)
	}
	if err := ti.check(mcp.MethodTasksGet); err != nil {
		return TaskInfo{}, err
	}
	if ti.ID != id {
		return TaskInfo{}, fmt.Errorf("%w: tasks/get for %q answered for task %q", ErrProtocol, id, ti.ID)
	}
	s.taskEnded(ti)
	return ti, nil
}

// CancelTask asks the server to cancel the task p names (tasks/cancel). A
// 2025-11-25 server needs to declare tasks.cancel. A terminal task cannot
// be cancelled: a 2025-11-25 server answers -32602, the 2026-07-28
// extension an empty acknowledgement.
func (s *Session) CancelTask(ctx context.Context, p *mcp.CancelTaskParams) error {
	id := ""
	if p != nil {
		id = p.TaskID
	}
	return s.cancelTask(ctx, id)
}

func (s *Session) cancelTask(ctx context.Context, id string) error {
	if !s.modern {
		sc := s.ServerInfo().Capabilities
		if caps, _ := sc.TasksCapability(); caps == nil || caps.Cancel == nil {
			return fmt.Errorf("%w: tasks.cancel", ErrCapability)
		}
	}
	_, err := s.taskCall(ctx, mcp.MethodTasksCancel, id, &mcp.CancelTaskParams{TaskID: id})
	return err
}

// ListTasks returns every task the server lists (tasks/list, all pages
// merged). Only 2025-11-25 has it, and only from a server that declares
// tasks.list; the 2026-07-28 extension has no listing, and asks clients to
// keep their task ids.
func (s *Session) ListTasks(ctx context.Context) ([]TaskInfo, error) {
	if s.modern {
		return nil, fmt.Errorf("%w: tasks/list does not exist on %s", ErrCapability, s.ServerInfo().ProtocolVersion)
	}
	sc := s.ServerInfo().Capabilities
	if caps, _ := sc.TasksCapability(); caps == nil || caps.List == nil {
		return nil, fmt.Errorf("%w: tasks.list", ErrCapability)
	}
	return listAll(ctx, s, mcp.MethodTasksList, func(res json.RawMessage) ([]TaskInfo, *string, *int64, error) {
		var r mcp.ListTasksResult
		if err := json.Unmarshal(res, &r); err != nil {
			return nil, nil, nil, err
		}
		out := make([]TaskInfo, 0, len(r.Tasks))
		for i := range r.Tasks {
			ti := legacyTaskInfo(&r.Tasks[i])
			if err := ti.check(mcp.MethodTasksList); err != nil {
				return nil, nil, nil, err
			}
			out = append(out, ti)
		}
		return out, r.NextCursor, nil, nil
	})
}

// TaskResult asks a 2025-11-25 server for what the call that created the
// task p names returned (tasks/result). The server holds the request open until the
// task ends, and meanwhile sends the requests it needs (elicitation,
// sampling), which Options.Handlers answer; a JSON-RPC error the call
// ended in is returned as an *mcp.Error. The result is not validated
// against an output schema (Wait does that). The 2026-07-28 extension has
// no tasks/result: tasks/get carries the result.
func (s *Session) TaskResult(ctx context.Context, p *mcp.GetTaskPayloadParams) (*mcp.CallToolResult, error) {
	id := ""
	if p != nil {
		id = p.TaskID
	}
	return s.taskResult(ctx, id)
}

func (s *Session) taskResult(ctx context.Context, id string) (*mcp.CallToolResult, error) {
	if s.modern {
		return nil, fmt.Errorf("%w: tasks/result does not exist on %s", ErrCapability, s.ServerInfo().ProtocolVersion)
	}
	res, err := s.taskCall(ctx, mcp.MethodTasksResult, id, &mcp.GetTaskPayloadParams{TaskID: id})
	if err != nil {
		return nil, err
	}
	var r mcp.CallToolResult
	if err := mcp.DecodeCallToolResult(res, &r); err != nil {
		return nil, fmt.Errorf("%w: tasks/result result: %v", ErrProtocol, err)
	}
	if r.Content == nil {
		r.Content = []mcp.Content{}
	}
	return &r, nil
}

// UpdateTask delivers answers to a 2026-07-28 task's inputRequests
// (tasks/update), keyed as they were asked; each value is an
// *mcp.ElicitResult, *mcp.CreateMessageResult or *mcp.ListRootsResult (or
// its raw JSON). Wait does this itself with Options.Handlers; UpdateTask is
// for a program that answers on its own.
func (s *Session) UpdateTask(ctx context.Context, id string, responses map[string]any) error {
	if !s.modern {
		return fmt.Errorf("%w: tasks/update does not exist on %s", ErrCapability, s.ServerInfo().ProtocolVersion)
	}
	p := &mcp.UpdateTaskParams{TaskID: id, InputResponses: make(map[string]json.RawMessage, len(responses))}
	for k, v := range responses {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("mcp: tasks/update: input response %q: %w", k, err)
		}
		p.InputResponses[k] = b
	}
	_, err := s.taskCall(ctx, mcp.MethodTasksUpdate, id, p)
	return err
}

// taskCall sends one tasks/* request about task id: on 2026-07-28 opted in
// to the extension (a server answers -32021 otherwise) and named by the
// task id for the wire (Mcp-Name); on 2025-11-25 only to a server that
// declares tasks.
func (s *Session) taskCall(ctx context.Context, method, id string, params any) (json.RawMessage, error) {
	if id == "" {
		return nil, fmt.Errorf("mcp: %s: empty task id", method)
	}
	caps := s.ServerInfo().Capabilities
	if s.modern {
		if !caps.HasExtension(mcp.ExtensionTasks) {
			return nil, fmt.Errorf("%w: the server does not declare the %s extension", ErrCapability, mcp.ExtensionTasks)
		}
		ctx = withTaskOptIn(ctx)
	} else if len(caps.Tasks) == 0 {
		return nil, fmt.Errorf("%w: tasks", ErrCapability)
	}
	raw, err := marshalObject(params)
	if err != nil {
		return nil, err
	}
	return s.call(ctx, method, raw, &RequestInfo{Modern: s.modern, Name: id, HasName: true})
}

// The 2026-07-28 opt-in for one request: its per-request capabilities name
// the tasks extension even when Options.Capabilities does not.

type taskOptInKey struct{}

func withTaskOptIn(ctx context.Context) context.Context {
	return context.WithValue(ctx, taskOptInKey{}, true)
}

// tasksAccepted reports whether a "task" result is one the request asked
// for: the session declared the extension, or this request opted in.
func (s *Session) tasksAccepted(ctx context.Context) bool {
	if s.caps.HasExtension(mcp.ExtensionTasks) {
		return true
	}
	v, _ := ctx.Value(taskOptInKey{}).(bool)
	return v
}

// requestMeta is the reserved _meta body a 2026-07-28 request carries:
// the session's, or for a request that opts in to tasks, the same with
// the extension declared.
func (s *Session) requestMeta(ctx context.Context) []byte {
	if v, _ := ctx.Value(taskOptInKey{}).(bool); v {
		if b := s.metaTasks.Load(); b != nil {
			return *b
		}
	}
	if b := s.metaBody.Load(); b != nil {
		return *b
	}
	return nil
}

// buildTaskMeta stores the opt-in variant of the _meta body that
// buildMeta made from meta and caps (nil when the session declares the
// extension anyway).
func (s *Session) buildTaskMeta(meta map[string]any, caps mcp.ClientCapabilities) {
	if caps.HasExtension(mcp.ExtensionTasks) {
		s.metaTasks.Store(nil)
		return
	}
	caps.Extensions = maps.Clone(caps.Extensions)
	if caps.Extensions == nil {
		caps.Extensions = map[string]json.RawMessage{}
	}
	caps.Extensions[mcp.ExtensionTasks] = json.RawMessage(`{}`)
	m := maps.Clone(meta)
	m[mcp.MetaClientCapabilities] = caps
	b, _ := json.Marshal(m) // plain structs and strings: cannot fail
	body := b[1 : len(b)-1]
	s.metaTasks.Store(&body)
}

// taskID is the task a tasks/get's params name ("" for none: the server
// refuses it).
func taskID(p *mcp.GetTaskParams) string {
	if p == nil {
		return ""
	}
	return p.TaskID
}
