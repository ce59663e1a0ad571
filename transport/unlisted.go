package transport

import (
	"context"

	"github.com/tako-mcp/tako/mcp"
)

// Tools called before they were listed.
//
// What the engine does with a tools/call depends on the tool's listing: its
// outputSchema (validate.go) and, on 2025-11-25, its execution.taskSupport
// (a "required" tool answers a plain call with -32601, tasks.go). A
// program that calls a tool straight after Connect, as the CLI and many
// agents do, had neither: the output went unchecked and a required-task
// tool failed. So the engine lists the tools on demand, with ListTools
// (through the result cache, like any listing, and teaching an Informed
// Conn the tools' x-mcp-header parameters on the way), when what it would
// learn matters for a tool it has not seen listed:
//
//   - before the call, on 2025-11-25 with a server that runs tools as
//     tasks (tasks.requests.tools.call): whether to send it as a task;
//   - after the answer, when the result carries structuredContent and
//     output validation is on: the schema to check it against.
//
// A plain text answer of an unlisted tool, the common call, costs nothing.
//
// Bounded: at most one listing on demand runs at a time (others wait for
// it, each under its own context), and once one has been made (or tried
// and failed on the server's side) no other is made until the server says
// the list changed (notifications/tools/list_changed): a tool the listing
// lacks is called as before, not listed for on every call. A listing that
// fails, or that the server leaves unanswered for Options.ProbeTimeout, is
// logged and the call goes on as it would have.
//
// Retrying a refused call as a task was weighed and dropped: it saves the
// round trip only where the refusal comes, but the refusal has no code of
// its own (-32601 is also "no such tool", and server-everything sends it as
// an isError result), and it leaves output validation blind.

// learnTaskSupport learns tool's taskSupport before a call of it, when
// that decides how the call is sent.
func (s *Session) learnTaskSupport(ctx context.Context, tool string) {
	if s.schemas.unlisted(tool) && s.canRunTasks(s.ServerInfo().Capabilities) {
		s.learnTool(ctx, tool)
	}
}

// learnTool lists the tools on demand when tool has not been seen listed
// and no listing has been made since the list last changed.
func (s *Session) learnTool(ctx context.Context, tool string) {
	if !s.schemas.unlisted(tool) || s.ServerInfo().Capabilities.Tools == nil {
		return
	}
	sem := s.schemas.semaphore()
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return
	}
	defer func() { <-sem }()
	gen, ok := s.schemas.unlistedGen(tool)
	if !ok {
		return // learnt while this call waited
	}
	lctx, cancel := context.WithTimeout(ctx, s.opts.ProbeTimeout)
	defer cancel()
	if _, err := s.ListTools(lctx); err != nil {
		s.log.Debug("mcp: listing the tools to learn about a tool called before it was listed failed", "tool", tool, "err", err)
		if ctx.Err() == nil {
			s.schemas.tried(gen)
		}
	}
}

// canRunTasks reports whether a call's taskSupport could change how it is
// sent: on 2025-11-25, with a server that takes task-augmented calls.
func (s *Session) canRunTasks(caps mcp.ServerCapabilities) bool {
	if s.modern {
		return false
	}
	tc, err := caps.TasksCapability()
	return err == nil && tc.ToolCall()
}

// unlisted reports whether tool is unknown and no listing has been made
// since the tool list last changed.
func (ts *toolSchemas) unlisted(tool string) bool {
	_, ok := ts.unlistedGen(tool)
	return ok
}

// unlistedGen is unlisted, with the generation of the tool list it saw.
func (ts *toolSchemas) unlistedGen(tool string) (uint64, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if _, known := ts.support[tool]; known || ts.listed == ts.gen+1 {
		return 0, false
	}
	return ts.gen, true
}

// tried records a listing of generation gen that failed on the server's
// side: no other is made on demand until the list changes.
func (ts *toolSchemas) tried(gen uint64) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.gen == gen {
		ts.listed = gen + 1
	}
}

// changed records a tools/list_changed notification.
func (ts *toolSchemas) changed() {
	ts.mu.Lock()
	ts.gen++
	ts.mu.Unlock()
}

// generation returns the current generation of the tool list, for a
// complete listing to record when it began.
func (ts *toolSchemas) generation() uint64 {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.gen
}

func (ts *toolSchemas) semaphore() chan struct{} {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.sem == nil {
		ts.sem = make(chan struct{}, 1)
	}
	return ts.sem
}
