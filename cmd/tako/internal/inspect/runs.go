package inspect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/tako-mcp/tako/dial"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// run is one operation whose result the page shows and may download: a
// tool call (which runs in the background, with progress, until it ends
// or the person cancels it), a resource read, a prompt.
type run struct {
	ID      string          `json:"id"`
	Server  string          `json:"server"`
	Op      string          `json:"op"` // tools/call, resources/read, prompts/get
	Name    string          `json:"name"`
	Args    json.RawMessage `json:"arguments,omitempty"`
	Started time.Time       `json:"started"`
	State   string          `json:"state"` // running, done, failed, cancelled
	Ms      float64         `json:"ms,omitempty"`
	Error   string          `json:"error,omitempty"`
	// ErrorCode is a JSON-RPC error's code.
	ErrorCode int64 `json:"errorCode,omitempty"`
	// Verdict is the output schema's verdict on structuredContent: "ok",
	// "no schema", or why it does not conform.
	Verdict string `json:"verdict,omitempty"`
	IsError bool   `json:"isError,omitempty"`
	TaskID  string `json:"taskId,omitempty"`
	// Size is the result's size in bytes; View is the result as the page
	// shows it (long texts and data cut, see view.go), Cut whether any was.
	Size int             `json:"size,omitempty"`
	View json.RawMessage `json:"view,omitempty"`
	Cut  bool            `json:"cut,omitempty"`

	Progress *mcp.ProgressParams `json:"progress,omitempty"`

	result []byte // the whole result, for the download
	cancel context.CancelFunc
}

// runStore keeps the runs, their results bounded by bytes.
type runStore struct {
	mu    sync.Mutex
	max   int
	n     int
	order []*run
	byID  map[string]*run
	bytes int
}

func newRunStore(max int) *runStore { return &runStore{max: max, byID: map[string]*run{}} }

func (rs *runStore) add(r *run) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.n++
	r.ID = "r" + strconv.Itoa(rs.n)
	rs.order = append(rs.order, r)
	rs.byID[r.ID] = r
	for len(rs.order) > maxRuns {
		old := rs.order[0]
		if old.State == "running" {
			break
		}
		rs.order = rs.order[1:]
		rs.bytes -= len(old.result)
		delete(rs.byID, old.ID)
	}
}

// setResult stores a finished run's result, forgetting the oldest
// results past the bound (their runs stay, without a download).
func (rs *runStore) setResult(r *run, result []byte) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	r.result = result
	rs.bytes += len(result)
	for _, old := range rs.order {
		if rs.bytes <= rs.max {
			break
		}
		if old != r && old.result != nil {
			rs.bytes -= len(old.result)
			old.result = nil
		}
	}
}

func (rs *runStore) get(id string) *run {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.byID[id]
}

// snapshot copies r under the lock, for the page.
func (rs *runStore) snapshot(r *run) run {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	c := *r
	c.result, c.cancel = nil, nil
	return c
}

func (rs *runStore) update(r *run, f func(*run)) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	f(r)
}

func (rs *runStore) result(id string) []byte {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if r := rs.byID[id]; r != nil {
		return r.result
	}
	return nil
}

// cancelServer cancels the running runs of a server.
func (rs *runStore) cancelServer(server string) {
	rs.mu.Lock()
	var cancels []context.CancelFunc
	for _, r := range rs.order {
		if r.Server == server && r.State == "running" && r.cancel != nil {
			cancels = append(cancels, r.cancel)
		}
	}
	rs.mu.Unlock()
	for _, c := range cancels {
		c()
	}
}

// callTool starts a tool call in the background and returns its run.
func (s *server) callTool(name string, args json.RawMessage, asTask bool) (*run, error) {
	t, sess, err := s.transport()
	if err != nil {
		return nil, err
	}
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	if !json.Valid(args) {
		return nil, &apiError{status: 400, msg: "the arguments are not JSON"}
	}
	ins := s.ins
	ctx, cancel := context.WithCancel(ins.ctx)
	r := &run{Server: s.id, Op: mcp.MethodToolsCall, Name: name, Args: args, Started: time.Now(), State: "running", cancel: cancel}
	ins.runs.add(r)
	ctx = transport.WithProgress(ctx, func(p mcp.ProgressParams) {
		ins.runs.update(r, func(r *run) { r.Progress = &p })
		ins.events.publish("progress", map[string]any{"server": s.id, "run": r.ID, "progress": p})
	})
	ins.events.publish("run", ins.runs.snapshot(r))
	ins.goBackground(func() {
		defer cancel()
		p := &mcp.CallToolParams{Name: name, Arguments: args}
		var (
			res  *mcp.CallToolResult
			cerr error
		)
		start := time.Now()
		if asTask && sess != nil {
			var task *transport.Task
			task, cerr = sess.CallToolTask(ctx, p, nil)
			if cerr == nil {
				if id := task.ID(); id != "" {
					ins.runs.update(r, func(r *run) { r.TaskID = id })
					ins.events.publish("run", ins.runs.snapshot(r))
				}
				res, cerr = task.Wait(ctx, &transport.WaitOptions{OnStatus: func(ti transport.TaskInfo) {
					ins.events.publish("task", map[string]any{"server": s.id, "run": r.ID, "task": taskView(ti)})
				}})
				if cerr != nil && ctx.Err() != nil && task.ID() != "" {
					cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
					_ = task.Cancel(cctx)
					ccancel()
				}
			}
		} else {
			res, cerr = t.CallTool(ctx, p)
		}
		s.record(mcp.MethodToolsCall, name, p, res, cerr, time.Since(start))
		s.finishRun(r, res, cerr, ctx)
	})
	return r, nil
}

// finishRun stores what a tool call ended with and tells the page.
func (s *server) finishRun(r *run, res *mcp.CallToolResult, err error, ctx context.Context) {
	ins := s.ins
	var ose *transport.OutputSchemaError
	verdict := ""
	switch {
	case errors.As(err, &ose):
		verdict = ose.Err.Error()
		err = nil
	case err == nil && res != nil && len(res.StructuredContent) > 0:
		verdict = "ok"
	}
	var raw []byte
	if res != nil {
		raw, _ = json.Marshal(res)
	}
	view, cut := toolView(res)
	ins.runs.setResult(r, raw)
	ins.runs.update(r, func(r *run) {
		r.Ms = ms(time.Since(r.Started))
		r.Size, r.View, r.Cut, r.Verdict = len(raw), view, cut, verdict
		if res != nil {
			r.IsError = res.IsError
		}
		switch {
		case err != nil && ctx.Err() != nil:
			r.State, r.Error = "cancelled", "cancelled"
		case err != nil:
			r.State, r.Error = "failed", err.Error()
			var rpc *mcp.Error
			if errors.As(err, &rpc) {
				r.ErrorCode = rpc.Code
			}
		default:
			r.State = "done"
		}
	})
	if verdict != "" && verdict != "ok" {
		ins.runs.update(r, func(r *run) { r.Verdict = "does not conform: " + verdict })
	}
	ins.events.publish("run", ins.runs.snapshot(r))
}

// cancelRun cancels a running tool call: the engine tells the server
// (notifications/cancelled, or the stream closed on modern HTTP).
func (ins *Inspector) cancelRun(id string) error {
	r := ins.runs.get(id)
	if r == nil {
		return &apiError{status: 404, msg: "no such run"}
	}
	var cancel context.CancelFunc
	ins.runs.update(r, func(r *run) {
		if r.State == "running" {
			cancel = r.cancel
		}
	})
	if cancel == nil {
		return &apiError{status: 409, msg: "the call is not running"}
	}
	cancel()
	return nil
}

// taskView is a task's state for the page.
func taskView(ti transport.TaskInfo) map[string]any {
	v := map[string]any{"taskId": ti.ID, "status": ti.Status, "statusMessage": ti.StatusMessage, "createdAt": ti.CreatedAt, "lastUpdatedAt": ti.LastUpdatedAt}
	if ti.TTL > 0 {
		v["ttlMs"] = ti.TTL.Milliseconds()
	}
	if ti.PollInterval > 0 {
		v["pollIntervalMs"] = ti.PollInterval.Milliseconds()
	}
	if len(ti.Result) > 0 {
		view, _ := viewOf(ti.Result)
		v["result"] = view
	}
	if ti.Error != nil {
		v["error"] = ti.Error
	}
	if len(ti.InputRequests) > 0 {
		v["inputRequests"] = ti.InputRequests
	}
	return v
}

// record adds an operation to a gRPC server's history (a transport with
// messages has them recorded by its Conn already).
func (s *server) record(method, name string, params, result any, err error, d time.Duration) {
	if s.kind != dial.GRPC {
		return
	}
	body, _ := json.Marshal(map[string]any{"params": params, "result": result})
	var rpc *mcp.Error
	if err != nil && !errors.As(err, &rpc) {
		rpc = &mcp.Error{Code: 0, Message: err.Error()}
	}
	e := s.ins.hist.addOp(s.id, method, name, body, d, rpc)
	s.ins.events.publish("message", e)
}

// keepRun stores the result of a short operation (a read, a prompt) as a
// run, so that the page can download it whole.
func (s *server) keepRun(op, name string, raw []byte, err error, start time.Time) run {
	ins := s.ins
	r := &run{Server: s.id, Op: op, Name: name, Started: start, State: "done", Ms: ms(time.Since(start))}
	if err != nil {
		r.State, r.Error = "failed", err.Error()
		var rpc *mcp.Error
		if errors.As(err, &rpc) {
			r.ErrorCode = rpc.Code
		}
	}
	ins.runs.add(r)
	view, cut := viewOf(raw)
	ins.runs.setResult(r, raw)
	ins.runs.update(r, func(r *run) { r.Size, r.View, r.Cut = len(raw), view, cut })
	return ins.runs.snapshot(r)
}

// errNotHere is an operation this transport does not offer.
func errNotHere(what string) error {
	return &apiError{status: 501, msg: fmt.Sprintf("%s is not available on this transport", what)}
}
