package mcp

import "encoding/json"

// Tasks come in two incompatible shapes:
//
//   - 2025-11-25 made them an experimental core feature: the client asks for
//     a task with params.task, the server answers {task:{…ttl, pollInterval}},
//     and tasks/get, tasks/result, tasks/list and tasks/cancel follow. The
//     types for that era are Task, CreateTaskResult, GetTaskResult,
//     ListTasksResult, CancelTaskResult and TaskStatusParams.
//   - 2026-07-28 moved them to the extension io.modelcontextprotocol/tasks:
//     the server decides, answers {resultType:"task", taskId, …ttlMs,
//     pollIntervalMs} flat, and tasks/get, tasks/update and tasks/cancel
//     follow. Those types carry the prefix Ext: ExtTask, ExtCreateTaskResult,
//     ExtGetTaskResult.
//
// GetTaskParams and CancelTaskParams have the same shape in both eras.

// TaskStatus is the state of a task. The same five values serve both eras.
type TaskStatus string

// Task statuses.
const (
	// TaskWorking: the request is being processed.
	TaskWorking TaskStatus = "working"
	// TaskInputRequired: the receiver waits for input (an elicitation or a
	// sampling request, surfaced through tasks/result in 2025-11-25 and
	// through inputRequests in 2026-07-28).
	TaskInputRequired TaskStatus = "input_required"
	// TaskCompleted: the result is available.
	TaskCompleted TaskStatus = "completed"
	// TaskFailed: the request ended in an error.
	TaskFailed TaskStatus = "failed"
	// TaskCancelled: the request was cancelled before it finished.
	TaskCancelled TaskStatus = "cancelled"
)

// IsValid reports whether s is one of the five statuses the spec defines.
func (s TaskStatus) IsValid() bool {
	switch s {
	case TaskWorking, TaskInputRequired, TaskCompleted, TaskFailed, TaskCancelled:
		return true
	}
	return false
}

// IsTerminal reports whether s is final (completed, failed or cancelled): a
// poller stops there, since the task's state no longer changes.
func (s TaskStatus) IsTerminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// Values of ToolExecution.TaskSupport (2025-11-25).
const (
	// TaskSupportForbidden (the default): the tool must not run as a task.
	TaskSupportForbidden = "forbidden"
	// TaskSupportOptional: the client may ask for a task.
	TaskSupportOptional = "optional"
	// TaskSupportRequired: the client must ask for a task; without one the
	// server answers -32601.
	TaskSupportRequired = "required"
)

// Task-related method names. tasks/result and tasks/list exist in
// 2025-11-25 only, tasks/update in the 2026-07-28 extension only.
const (
	MethodTasksGet    = "tasks/get"
	MethodTasksResult = "tasks/result"
	MethodTasksList   = "tasks/list"
	MethodTasksCancel = "tasks/cancel"
	MethodTasksUpdate = "tasks/update"

	// NotificationTasks is the 2026-07-28 extension's task push, delivered
	// on a subscriptions/listen stream that asked for the task's id. The
	// 2025-11-25 equivalent is NotificationTasksStatus.
	NotificationTasks = "notifications/tasks"
)

// ExtensionTasks is the key of the 2026-07-28 tasks extension in
// ClientCapabilities.Extensions and ServerCapabilities.Extensions.
const ExtensionTasks = "io.modelcontextprotocol/tasks"

// Task is the state of a 2025-11-25 task. TTL is the retention time from
// creation in milliseconds; nil means unlimited and is sent as null, since
// the member is required.
type Task struct {
	TaskID        string     `json:"taskId"`
	Status        TaskStatus `json:"status"`
	StatusMessage string     `json:"statusMessage,omitempty"`
	// CreatedAt and LastUpdatedAt are ISO 8601 timestamps, kept as sent.
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           *int64 `json:"ttl"`
	// PollInterval is the suggested polling interval in milliseconds.
	PollInterval *int64 `json:"pollInterval,omitempty"`
}

// CreateTaskResult is a 2025-11-25 server's immediate answer to a
// task-augmented request (CallToolParams.Task set). The real result comes
// later from tasks/result.
type CreateTaskResult struct {
	Task Task `json:"task"`
	// Meta may carry MetaModelImmediate, an interim text for the model.
	Meta Meta `json:"_meta,omitempty"`
}

// GetTaskParams are the params of tasks/get, in both eras.
type GetTaskParams struct {
	TaskID string `json:"taskId"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// GetTaskResult is the 2025-11-25 answer to tasks/get: the task itself.
type GetTaskResult struct {
	Task
	Meta Meta `json:"_meta,omitempty"`
}

// GetTaskPayloadParams are the params of the 2025-11-25 tasks/result, which
// blocks until the task ends and returns what the original request would
// have returned (its _meta carries MetaRelatedTask).
type GetTaskPayloadParams struct {
	TaskID string `json:"taskId"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// ListTasksParams are the params of the 2025-11-25 tasks/list.
type ListTasksParams struct {
	Cursor *string `json:"cursor,omitempty"`
	Meta   Meta    `json:"_meta,omitempty"`
}

// ListTasksResult is one page of the 2025-11-25 tasks/list.
type ListTasksResult struct {
	Tasks      []Task  `json:"tasks"`
	NextCursor *string `json:"nextCursor,omitempty"`
	Meta       Meta    `json:"_meta,omitempty"`
}

// MarshalJSON implements json.Marshaler, sending a nil Tasks as [] since the
// member is required.
func (r ListTasksResult) MarshalJSON() ([]byte, error) {
	type wire ListTasksResult
	if r.Tasks == nil {
		r.Tasks = []Task{}
	}
	return marshalPlain(wire(r))
}

// CancelTaskParams are the params of tasks/cancel, in both eras. Cancel a
// task this way, never with notifications/cancelled.
type CancelTaskParams struct {
	TaskID string `json:"taskId"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// CancelTaskResult is the 2025-11-25 answer to tasks/cancel: the task, now
// cancelled. (The 2026-07-28 extension answers with an empty result.)
type CancelTaskResult struct {
	Task
	Meta Meta `json:"_meta,omitempty"`
}

// TaskStatusParams are the params of the 2025-11-25
// notifications/tasks/status: the full task.
type TaskStatusParams struct {
	Task
	Meta Meta `json:"_meta,omitempty"`
}

// RelatedTask is the value of _meta[MetaRelatedTask] (2025-11-25): it ties
// a message to a task.
type RelatedTask struct {
	TaskID string `json:"taskId"`
}

// ClientTasksCapability is the typed form of the 2025-11-25 client tasks
// capability (ClientCapabilities.Tasks): what the client can do as a task
// receiver. Read it with ClientCapabilities.TasksCapability.
type ClientTasksCapability struct {
	List     *struct{}                     `json:"list,omitempty"`
	Cancel   *struct{}                     `json:"cancel,omitempty"`
	Requests *ClientTaskRequestsCapability `json:"requests,omitempty"`
}

// ClientTaskRequestsCapability lists the server-to-client requests a client
// accepts as tasks.
type ClientTaskRequestsCapability struct {
	Sampling *struct {
		CreateMessage *struct{} `json:"createMessage,omitempty"`
	} `json:"sampling,omitempty"`
	Elicitation *struct {
		Create *struct{} `json:"create,omitempty"`
	} `json:"elicitation,omitempty"`
}

// ServerTasksCapability is the typed form of the 2025-11-25 server tasks
// capability (ServerCapabilities.Tasks). Read it with
// ServerCapabilities.TasksCapability.
type ServerTasksCapability struct {
	List     *struct{}                     `json:"list,omitempty"`
	Cancel   *struct{}                     `json:"cancel,omitempty"`
	Requests *ServerTaskRequestsCapability `json:"requests,omitempty"`
}

// ServerTaskRequestsCapability lists the client requests a server accepts as
// tasks.
type ServerTaskRequestsCapability struct {
	Tools *struct {
		Call *struct{} `json:"call,omitempty"`
	} `json:"tools,omitempty"`
}

// ToolCall reports whether the server accepts task-augmented tools/call, the
// precondition for honouring a tool's execution.taskSupport. It is safe on a
// nil receiver.
func (c *ServerTasksCapability) ToolCall() bool {
	return c != nil && c.Requests != nil && c.Requests.Tools != nil && c.Requests.Tools.Call != nil
}

// TasksCapability decodes the raw 2025-11-25 tasks capability. It returns
// nil and no error when the client declared none. The raw field stays the
// source of truth so that members added by later drafts pass through.
func (c *ClientCapabilities) TasksCapability() (*ClientTasksCapability, error) {
	return parseCapability[ClientTasksCapability](c.Tasks)
}

// SetTasksCapability stores tc as the raw tasks capability; nil removes it.
func (c *ClientCapabilities) SetTasksCapability(tc *ClientTasksCapability) error {
	raw, err := marshalCapability(tc)
	if err != nil {
		return err
	}
	c.Tasks = raw
	return nil
}

// TasksCapability decodes the raw 2025-11-25 tasks capability. It returns
// nil and no error when the server declared none.
func (c *ServerCapabilities) TasksCapability() (*ServerTasksCapability, error) {
	return parseCapability[ServerTasksCapability](c.Tasks)
}

// SetTasksCapability stores tc as the raw tasks capability; nil removes it.
func (c *ServerCapabilities) SetTasksCapability(tc *ServerTasksCapability) error {
	raw, err := marshalCapability(tc)
	if err != nil {
		return err
	}
	c.Tasks = raw
	return nil
}

// HasExtension reports whether the server declared the extension named key
// (for example ExtensionTasks) in its capabilities.
func (c *ServerCapabilities) HasExtension(key string) bool {
	_, ok := c.Extensions[key]
	return ok
}

// HasExtension reports whether the client declared the extension named key.
func (c *ClientCapabilities) HasExtension(key string) bool {
	_, ok := c.Extensions[key]
	return ok
}

func parseCapability[T any](raw json.RawMessage) (*T, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	v := new(T)
	if err := json.Unmarshal(raw, v); err != nil {
		return nil, err
	}
	return v, nil
}

func marshalCapability[T any](v *T) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	return json.Marshal(v)
}

// ExtTask is a task of the 2026-07-28 tasks extension. Its base members are
// those of CreateTaskResult; InputRequests, Result and Error are the
// status-specific members that tasks/get and notifications/tasks inline
// (the spec's DetailedTask):
//
//	input_required  InputRequests: fulfil them, answer with tasks/update
//	completed       Result: what the original request would have returned
//	failed          Error: the JSON-RPC error the request ended in
//
// TTLMs is the retention time in milliseconds; nil means unlimited and is
// sent as null, since the member is required.
type ExtTask struct {
	TaskID         string     `json:"taskId"`
	Status         TaskStatus `json:"status"`
	StatusMessage  string     `json:"statusMessage,omitempty"`
	CreatedAt      string     `json:"createdAt"`
	LastUpdatedAt  string     `json:"lastUpdatedAt"`
	TTLMs          *int64     `json:"ttlMs"`
	PollIntervalMs *int64     `json:"pollIntervalMs,omitempty"`

	InputRequests map[string]InputRequest `json:"inputRequests,omitempty"`
	Result        json.RawMessage         `json:"result,omitempty"`
	Error         *Error                  `json:"error,omitempty"`
}

// ExtCreateTaskResult is what a 2026-07-28 server that speaks the tasks
// extension may answer to tools/call instead of a CallToolResult. Its
// ResultType is ResultTypeTask; check it with ParseResultType before
// decoding the result as one or the other.
type ExtCreateTaskResult struct {
	ResultType string `json:"resultType"`
	ExtTask
	Meta Meta `json:"_meta,omitempty"`
}

// ExtGetTaskResult is the 2026-07-28 answer to tasks/get (ResultType
// "complete"); the same shape is the params of notifications/tasks.
type ExtGetTaskResult struct {
	ResultType string `json:"resultType,omitempty"`
	ExtTask
	Meta Meta `json:"_meta,omitempty"`
}

// UpdateTaskParams are the params of the 2026-07-28 tasks/update: answers to
// the task's outstanding InputRequests, keyed as they were. Each value is an
// ElicitResult, CreateMessageResult or ListRootsResult, kept raw.
type UpdateTaskParams struct {
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
	Meta           Meta                       `json:"_meta,omitempty"`
}
