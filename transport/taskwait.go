package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tako-mcp/tako/mcp"
)

// Polling bounds for Task.Wait. The server suggests an interval
// (pollInterval, pollIntervalMs); the client keeps it within bounds, so that
// a server asking for 0 ms cannot make it spin and one asking for an hour
// cannot make it look hung.
const (
	// DefaultPollInterval is used when the server suggests none.
	DefaultPollInterval = time.Second
	// MinPollInterval is the shortest wait between two polls by default.
	MinPollInterval = 50 * time.Millisecond
	// MaxPollInterval is the longest wait between two polls by default.
	MaxPollInterval = 30 * time.Second
)

// WaitOptions configure Task.Wait. Nil means defaults.
type WaitOptions struct {
	// OnStatus, when set, is called with the task's state each time its
	// status or status message changes, the first time with the state the
	// task was created in; both polls and the server's status
	// notifications feed it. It runs on Wait's goroutine: a slow OnStatus
	// delays the next poll, nothing else.
	OnStatus func(TaskInfo)
	// MinInterval and MaxInterval bound the wait between two polls of the
	// server's suggested interval (DefaultPollInterval when it suggests
	// none). Zero means MinPollInterval and MaxPollInterval.
	MinInterval time.Duration
	MaxInterval time.Duration
}

// Wait waits for the task to end and returns the call's result: a tool
// that failed is a result with IsError, as from CallTool. It polls with
// tasks/get at the server's interval (bounded by opts), and wakes early
// when the server sends a status notification. A task that needs input is
// served through Options.Handlers, the same handlers that answer server
// requests: on 2025-11-25 by calling tasks/result, during which the server
// sends its requests; on 2026-07-28 by answering the task's inputRequests
// with tasks/update.
//
// A task that failed or was cancelled is a *TaskError (ErrTaskFailed,
// ErrTaskCancelled). When ctx ends, Wait returns its error and leaves the
// task running on the server: cancel it with Cancel, or wait again later.
// A call the server answered at once returns that answer.
func (t *Task) Wait(ctx context.Context, opts *WaitOptions) (*mcp.CallToolResult, error) {
	t.mu.Lock()
	now, nowErr, ti := t.now, t.nowErr, t.info
	t.mu.Unlock()
	if now != nil || nowErr != nil {
		return now, nowErr
	}
	if ti.ID == "" {
		return nil, errors.New("mcp: Wait: no task id")
	}
	var o WaitOptions
	if opts != nil {
		o = *opts
	}
	if o.MinInterval <= 0 {
		o.MinInterval = MinPollInterval
	}
	if o.MaxInterval <= 0 {
		o.MaxInterval = MaxPollInterval
	}
	o.MaxInterval = max(o.MaxInterval, o.MinInterval)

	pushed, unsubscribe := t.listen(ti.ID)
	defer unsubscribe()
	var last TaskInfo
	report := func(ti TaskInfo) {
		if o.OnStatus != nil && (ti.Status != last.Status || ti.StatusMessage != last.StatusMessage) {
			last = ti
			o.OnStatus(ti)
		}
	}
	if ti.Status == "" {
		var err error
		if ti, err = t.Get(ctx); err != nil {
			return nil, err
		}
	}
	for {
		report(ti)
		switch ti.Status {
		case mcp.TaskCompleted, mcp.TaskFailed, mcp.TaskCancelled:
			return t.finish(ctx, ti, report)
		case mcp.TaskInputRequired:
			if !t.modern {
				// tasks/result is where a 2025-11-25 server delivers its
				// requests; it returns once the task has ended.
				return t.legacyResult(ctx, report)
			}
			if err := t.answer(ctx, ti); err != nil {
				return nil, err
			}
		}
		timer := time.NewTimer(min(max(cmp0(ti.PollInterval, DefaultPollInterval), o.MinInterval), o.MaxInterval))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, fmt.Errorf("mcp: waiting for task %q: %w", ti.ID, context.Cause(ctx))
		case <-t.s.done:
			timer.Stop()
			return nil, fmt.Errorf("mcp: waiting for task %q: %w", ti.ID, t.s.err)
		case p := <-pushed:
			timer.Stop()
			t.setInfo(p)
			ti = p
			continue
		case <-timer.C:
		}
		var err error
		if ti, err = t.Get(ctx); err != nil {
			return nil, err
		}
	}
}

func cmp0(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// finish turns a task's terminal state into Wait's answer.
func (t *Task) finish(ctx context.Context, ti TaskInfo, report func(TaskInfo)) (*mcp.CallToolResult, error) {
	switch {
	case ti.Status == mcp.TaskCancelled:
		return nil, &TaskError{TaskID: ti.ID, Status: ti.Status, Message: ti.StatusMessage, Err: ti.Error}
	case !t.modern:
		return t.legacyResult(ctx, report)
	case ti.Status == mcp.TaskFailed:
		return nil, &TaskError{TaskID: ti.ID, Status: ti.Status, Message: ti.StatusMessage, Err: ti.Error}
	}
	if len(ti.Result) == 0 {
		// A status notification need not carry the result; tasks/get does.
		var err error
		if ti, err = t.Get(ctx); err != nil {
			return nil, err
		}
		if len(ti.Result) == 0 {
			return nil, fmt.Errorf("%w: tasks/get: task %q is completed but carries no result", ErrProtocol, ti.ID)
		}
	}
	return t.s.decodeToolResult(ctx, t.tool, ti.Result)
}

// legacyResult fetches a 2025-11-25 task's outcome with tasks/result, which
// the server holds open until the task ends, and then reads the final
// status. A JSON-RPC error is the task's own failure when the task says it
// failed; otherwise (the task expired, say) it is returned as it is.
func (t *Task) legacyResult(ctx context.Context, report func(TaskInfo)) (*mcp.CallToolResult, error) {
	id := t.ID()
	r, err := t.s.taskResult(ctx, id)
	var rpcErr *mcp.Error
	if err != nil && !errors.As(err, &rpcErr) {
		return nil, err
	}
	final, gerr := t.Get(ctx)
	if gerr == nil {
		report(final)
	}
	if err != nil {
		if gerr == nil && (final.Status == mcp.TaskFailed || final.Status == mcp.TaskCancelled) {
			return nil, &TaskError{TaskID: id, Status: final.Status, Message: final.StatusMessage, Err: rpcErr}
		}
		return nil, err
	}
	if gerr == nil && final.Status == mcp.TaskFailed {
		return r, &TaskError{TaskID: id, Status: final.Status, Message: final.StatusMessage}
	}
	if err := t.s.checkOutput(ctx, t.tool, r); err != nil {
		return r, err
	}
	return r, nil
}

// answer serves the inputRequests of a 2026-07-28 task not answered yet and
// delivers the answers with tasks/update. A request answered before is not
// answered again: the server may still list it until it has read the
// update.
func (t *Task) answer(ctx context.Context, ti TaskInfo) error {
	asks := make(map[string]mcp.InputRequest, len(ti.InputRequests))
	t.mu.Lock()
	for k, r := range ti.InputRequests {
		if !t.answered[k] {
			asks[k] = r
		}
	}
	if len(asks) > 0 {
		if t.rounds >= MaxInputRounds {
			t.mu.Unlock()
			return fmt.Errorf("%w: task %q still asks for input after %d rounds", ErrProtocol, ti.ID, t.rounds)
		}
		t.rounds++
		if t.answered == nil {
			t.answered = map[string]bool{}
		}
		for k := range asks {
			t.answered[k] = true
		}
	}
	t.mu.Unlock()
	if len(asks) == 0 {
		return nil
	}
	what := "task " + ti.ID
	answers := make(map[string]any, len(asks))
	for key, r := range asks {
		out, err := answerInput(ctx, &t.s.opts.Handlers, what, key, r)
		if err != nil {
			return err
		}
		answers[key] = out
	}
	return t.s.UpdateTask(ctx, ti.ID, answers)
}

// listen delivers the server's status notifications for task id, the
// newest one only: Wait needs the current state, not the history. The
// callback runs on the session's event goroutine and never blocks it.
func (t *Task) listen(id string) (<-chan TaskInfo, func()) {
	ch := make(chan TaskInfo, 1)
	unsubscribe := t.s.Subscribe(func(n mcp.Notification) {
		ti, ok := parseTaskNotification(t.modern, n)
		if !ok || ti.ID != id {
			return
		}
		for {
			select {
			case ch <- ti:
				return
			default:
				select {
				case <-ch: // a staler one nobody read yet
				default:
				}
			}
		}
	})
	return ch, unsubscribe
}

// parseTaskNotification reads a task status notification of the era:
// notifications/tasks/status (2025-11-25) or notifications/tasks
// (2026-07-28), both carrying the whole task.
func parseTaskNotification(modern bool, n mcp.Notification) (TaskInfo, bool) {
	var ti TaskInfo
	switch {
	case !modern && n.Method == mcp.NotificationTasksStatus:
		var p mcp.TaskStatusParams
		if json.Unmarshal(n.Params, &p) != nil {
			return ti, false
		}
		ti = legacyTaskInfo(&p.Task)
	case modern && n.Method == mcp.NotificationTasks:
		var p mcp.ExtGetTaskResult
		if json.Unmarshal(n.Params, &p) != nil {
			return ti, false
		}
		ti = extTaskInfo(&p.ExtTask)
	default:
		return ti, false
	}
	return ti, ti.check(n.Method) == nil
}
