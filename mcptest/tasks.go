package mcptest

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/tako-mcp/tako/mcp"
)

// Tasks of the 2026-07-28 extension io.modelcontextprotocol/tasks. No peer
// tako is tested against implements the extension yet, so the test server
// does: when the server declares it (Options.Capabilities.Extensions), a
// request declares it in its client capabilities, and the tool's
// execution.taskSupport is optional or required, tools/call answers with
// resultType "task" and runs the handler in the background. tasks/get
// reports the task with its result, error or inputRequests; a handler that
// asks for input (Sample, Elicit, ListRoots) leaves the task
// input_required, and tasks/update with the answers runs it again from the
// start with them, as an input_required round does. tasks/cancel cancels
// the handler's context. Tasks are shared by every connection of the
// server (the era is stateless) and run until they end or the connection
// that created them does.

// maxTasks bounds the tasks a server keeps, so that a client creating them
// in a loop cannot grow the store without end.
const maxTasks = 1000

// defaultTaskPoll is the pollIntervalMs the server suggests when
// Options.TaskPollInterval is zero.
const defaultTaskPoll = 10 * time.Millisecond

type serverTask struct {
	id      string
	entry   toolEntry
	req     CallRequest // the creating request, copied for each run
	created string

	// guarded by Server.mu
	cancel  context.CancelFunc // ends the current run
	status  mcp.TaskStatus
	message string
	updated string
	answers map[string]json.RawMessage
	round   int
	asks    map[string]mcp.InputRequest
	result  json.RawMessage
	err     *mcp.Error
}

func (s *Server) tasksDeclared() bool { return s.caps.HasExtension(mcp.ExtensionTasks) }

// taskEligible reports whether a modern tools/call of entry becomes a task.
func (s *Server) taskEligible(entry toolEntry, caps mcp.ClientCapabilities) bool {
	if !s.tasksDeclared() || !caps.HasExtension(mcp.ExtensionTasks) || entry.tool.Execution == nil {
		return false
	}
	ts := entry.tool.Execution.TaskSupport
	return ts == mcp.TaskSupportOptional || ts == mcp.TaskSupportRequired
}

func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }

// createTask answers a tools/call with a new task and starts its first run.
func (p *Peer) createTask(entry toolEntry, req *CallRequest) (any, error) {
	s := p.srv
	t := &serverTask{entry: entry, created: now(), status: mcp.TaskWorking, answers: map[string]json.RawMessage{}}
	t.updated = t.created
	t.req = CallRequest{Name: req.Name, Arguments: req.Arguments, Meta: req.Meta, ID: req.ID,
		peer: p, modern: true, version: req.version, caps: req.caps, logLevel: req.logLevel,
		// The token stays valid for the task's whole life (§7D).
		progressToken: req.progressToken}
	s.mu.Lock()
	if len(s.tasks) >= maxTasks {
		s.mu.Unlock()
		return nil, rpcError(mcp.CodeInternalError, nil, "mcptest: more than %d tasks", maxTasks)
	}
	if s.tasks == nil {
		s.tasks = map[string]*serverTask{}
	}
	s.nextTask++
	t.id = "task-" + strconv.Itoa(s.nextTask)
	s.tasks[t.id] = t
	res := s.taskWire(t, false)
	s.mu.Unlock()
	p.runTask(t)
	return &mcp.ExtCreateTaskResult{ResultType: mcp.ResultTypeTask, ExtTask: res, Meta: s.serverMeta(nil)}, nil
}

// runTask runs the task's handler once, on a goroutine of the peer's, with
// the answers so far. The run outlives the request, and the connection,
// that started it: a 2026-07-28 client may send each request on a
// connection of its own (a stateless HTTP server sees one per POST), and
// tasks/get and tasks/update come later. The run ends when the handler
// returns, with tasks/cancel, or when the ctx Serve was given ends; Serve
// waits for it before it returns, so nothing outlives Serve.
func (p *Peer) runTask(t *serverTask) {
	s := p.srv
	life := p.life
	if life == nil {
		life = p.ctx
	}
	ctx, cancel := context.WithCancel(life)
	s.mu.Lock()
	t.cancel = cancel
	req := &CallRequest{Name: t.req.Name, Arguments: t.req.Arguments, Meta: t.req.Meta, ID: t.req.ID,
		peer: p, modern: true, version: t.req.version, caps: t.req.caps, logLevel: t.req.logLevel,
		progressToken: t.req.progressToken,
		Round:         t.round, answers: make(map[string]json.RawMessage, len(t.answers))}
	for k, v := range t.answers {
		req.answers[k] = v
	}
	s.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer cancel()
		res, err := runHandler(ctx, t.entry.handler, req)
		s.mu.Lock()
		defer s.mu.Unlock()
		if t.status.IsTerminal() {
			return // cancelled meanwhile
		}
		t.updated = now()
		if ask := req.pendingInput(); ask != nil {
			t.status, t.message = mcp.TaskInputRequired, "waiting for "+ask.method
			t.asks = map[string]mcp.InputRequest{ask.key: {Method: ask.method, Params: ask.params}}
			return
		}
		t.asks = nil
		var rpcErr *mcp.Error
		switch {
		case ctx.Err() != nil:
			t.status, t.message = mcp.TaskCancelled, "the server stopped"
			return
		case errors.As(err, &rpcErr):
			t.status, t.err = mcp.TaskFailed, rpcErr
			return
		case err != nil:
			res = &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(err.Error())}, IsError: true}
		case res == nil:
			res = &mcp.CallToolResult{}
		}
		out := *res
		if out.Content == nil {
			out.Content = []mcp.Content{}
		}
		out.ResultType = mcp.ResultTypeComplete
		b, merr := json.Marshal(&out)
		if merr != nil {
			t.status, t.err = mcp.TaskFailed, rpcError(mcp.CodeInternalError, nil, "result: %v", merr)
			return
		}
		t.status, t.message, t.result = mcp.TaskCompleted, "", b
	}()
}

// taskWire is the task as the extension sends it; detailed adds the
// status-specific members of tasks/get. The caller holds s.mu.
func (s *Server) taskWire(t *serverTask, detailed bool) mcp.ExtTask {
	poll := s.opts.TaskPollInterval
	if poll <= 0 {
		poll = defaultTaskPoll
	}
	pollMs := max(poll.Milliseconds(), 1)
	ttl := int64(time.Hour / time.Millisecond)
	w := mcp.ExtTask{TaskID: t.id, Status: t.status, StatusMessage: t.message,
		CreatedAt: t.created, LastUpdatedAt: t.updated, TTLMs: &ttl, PollIntervalMs: &pollMs}
	if detailed {
		switch t.status {
		case mcp.TaskInputRequired:
			w.InputRequests = t.asks
		case mcp.TaskCompleted:
			w.Result = t.result
		case mcp.TaskFailed:
			w.Error = t.err
		}
	}
	return w
}

type taskParams struct {
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
}

// taskRequest serves tasks/get, tasks/update and tasks/cancel.
func (p *Peer) taskRequest(msg *mcp.Message, caps mcp.ClientCapabilities) (any, error) {
	s := p.srv
	if !s.tasksDeclared() {
		return nil, rpcError(mcp.CodeMethodNotFound, nil, "method not found: %s", msg.Method)
	}
	if !caps.HasExtension(mcp.ExtensionTasks) {
		s.violation(p, "%s without the %s extension in the client capabilities", msg.Method, mcp.ExtensionTasks)
		return nil, rpcError(mcp.CodeMissingRequiredClientCapability,
			map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{mcp.ExtensionTasks: map[string]any{}}}},
			"%s needs the %s extension", msg.Method, mcp.ExtensionTasks)
	}
	var tp taskParams
	if len(msg.Params) == 0 || json.Unmarshal(msg.Params, &tp) != nil || tp.TaskID == "" {
		return nil, rpcError(mcp.CodeInvalidParams, nil, "%s: bad or missing taskId", msg.Method)
	}
	ack := map[string]any{"resultType": mcp.ResultTypeComplete, "_meta": s.serverMeta(nil)}
	s.mu.Lock()
	t := s.tasks[tp.TaskID]
	if t == nil {
		s.mu.Unlock()
		return nil, rpcError(mcp.CodeInvalidParams, nil, "%s: unknown task %q", msg.Method, tp.TaskID)
	}
	switch msg.Method {
	case mcp.MethodTasksGet:
		w := s.taskWire(t, true)
		s.mu.Unlock()
		return &mcp.ExtGetTaskResult{ResultType: mcp.ResultTypeComplete, ExtTask: w, Meta: s.serverMeta(nil)}, nil
	case mcp.MethodTasksCancel:
		if !t.status.IsTerminal() {
			t.status, t.message, t.updated, t.asks = mcp.TaskCancelled, "cancelled by the client", now(), nil
		}
		cancel := t.cancel
		s.mu.Unlock()
		cancel()
		return ack, nil
	}
	// tasks/update
	if t.status != mcp.TaskInputRequired {
		s.mu.Unlock()
		s.violation(p, "tasks/update for task %s, which is %s", tp.TaskID, t.status)
		return ack, nil
	}
	for k := range tp.InputResponses {
		if _, asked := t.asks[k]; !asked {
			s.mu.Unlock()
			s.violation(p, "tasks/update answers %q, which task %s did not ask for", k, tp.TaskID)
			return nil, rpcError(mcp.CodeInvalidParams, nil, "tasks/update: input %q was not requested", k)
		}
	}
	for k, v := range tp.InputResponses {
		t.answers[k] = v
	}
	t.round++
	t.status, t.message, t.updated, t.asks = mcp.TaskWorking, "", now(), nil
	s.mu.Unlock()
	// The run goes on on the connection that answered: the one that
	// created the task may be gone.
	p.runTask(t)
	return ack, nil
}
