package transport

import (
	"encoding/json"

	"github.com/tako-mcp/tako/mcp"
)

// Progress over a task's whole life (checklist §7D): the progressToken of
// a tools/call stays valid until the task it created ends, so progress the
// server sends after its CreateTaskResult still belongs to the caller's
// WithProgress callback. A tools/call with a callback gets a route by its
// token for the time it is in flight, beside its pending entry; when the
// answer is a task still running, the route is kept, under the task's id,
// until the session sees the task end (a tasks/get, a status notification,
// tasks/result) or the session closes.

// maxTaskRoutes bounds the progress routes kept for running tasks: a
// program that starts tasks and never waits for them must not make the
// session hold callbacks without bound. Past it, a new task's later
// progress is dropped (and logged).
const maxTaskRoutes = 1024

type taskRoute struct {
	fn     func(mcp.ProgressParams)
	taskID string // set once the call's answer is a running task
}

// addTaskRoute routes progress token n to fn while tools/call n is in
// flight. Called with s.mu held.
func (s *Session) addTaskRoute(n int64, fn func(mcp.ProgressParams)) {
	if s.taskRoutes == nil {
		s.taskRoutes = make(map[int64]*taskRoute)
	}
	s.taskRoutes[n] = &taskRoute{fn: fn}
}

// settleTaskRoute keeps or drops the route of tools/call n once it is
// answered: kept for a task that is still running, dropped otherwise.
func (s *Session) settleTaskRoute(n int64, res json.RawMessage, err error) {
	var id string
	if err == nil {
		if ti, ok, cerr := s.createdTask(res); ok && cerr == nil && !ti.Status.IsTerminal() {
			id = ti.ID
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.taskRoutes[n]
	if r == nil {
		return
	}
	if id == "" {
		delete(s.taskRoutes, n)
		return
	}
	kept := 0
	for _, o := range s.taskRoutes {
		if o.taskID != "" {
			kept++
		}
	}
	if kept >= maxTaskRoutes {
		delete(s.taskRoutes, n)
		s.log.Warn("mcp: too many running tasks with progress; this one's later progress is dropped", "task", id, "max", maxTaskRoutes)
		return
	}
	r.taskID = id
}

// dropTaskRoute forgets the route of tools/call n, whose call ended
// without an answer.
func (s *Session) dropTaskRoute(n int64) {
	s.mu.Lock()
	delete(s.taskRoutes, n)
	s.mu.Unlock()
}

// taskEnded forgets the progress route of task id, if ti says it ended.
func (s *Session) taskEnded(ti TaskInfo) {
	if !ti.Status.IsTerminal() || ti.ID == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for n, r := range s.taskRoutes {
		if r.taskID == ti.ID {
			delete(s.taskRoutes, n)
		}
	}
}

// taskRouteFn returns the callback of progress token n kept for a task.
// Called with s.mu held.
func (s *Session) taskRouteFn(n int64) func(mcp.ProgressParams) {
	if r := s.taskRoutes[n]; r != nil {
		return r.fn
	}
	return nil
}
