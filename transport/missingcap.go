package transport

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tako-mcp/tako/mcp"
)

// A 2026-07-28 server refuses a request that needs a client capability the
// request did not declare with -32021, naming what it needs (checklist
// §1B.8). The fix the spec gives is to re-send declaring it, if the client
// supports it. A Session declares on every request all that its Handlers,
// Roots and Options.Capabilities imply, so the one capability it supports
// without declaring is the tasks extension, which it names only on the
// requests that opt in: a tools/call refused for want of it is re-sent once
// opted in (and CallTool then waits for the task). For anything else the
// caller gets a *MissingCapabilityError naming what the client lacks.

// MissingCapabilityError reports a request the server refused (-32021)
// because it needs client capabilities this client does not have, or has
// and declared already (a server that asks again for what it was given).
// It names them so a program can tell its user what to enable (a sampling
// or elicitation handler, say); errors.As reaches the server's *mcp.Error
// through it.
type MissingCapabilityError struct {
	// Method is the request the server refused.
	Method string
	// Missing names the capabilities the server asked for that the client
	// lacks, as dotted paths ("sampling", "sampling.tools",
	// "elicitation.url", "extensions.io.modelcontextprotocol/tasks").
	// Empty when the request declared all of them already.
	Missing []string
	// Required is what the server's error data asked for.
	Required mcp.ClientCapabilities
	// Err is the server's error.
	Err *mcp.Error
}

func (e *MissingCapabilityError) Error() string {
	if len(e.Missing) == 0 {
		return fmt.Sprintf("mcp: %s: the server asks for client capabilities the request declared: %s", e.Method, e.Err.Message)
	}
	return fmt.Sprintf("mcp: %s needs client capabilities this client does not support: %s", e.Method, strings.Join(e.Missing, ", "))
}

// Unwrap returns the server's *mcp.Error.
func (e *MissingCapabilityError) Unwrap() error { return e.Err }

// missingCapability returns the -32021 error in err and what it asks for.
func missingCapability(err error) (*mcp.Error, *mcp.ClientCapabilities) {
	if err == nil {
		return nil, nil
	}
	rpcErr := rpcErrorWithCode(err, mcp.CodeMissingRequiredClientCapability)
	if rpcErr == nil {
		return nil, nil
	}
	req, ok := rpcErr.MissingCapabilities()
	if !ok {
		// No usable data: nothing to name, nothing to add.
		req = &mcp.ClientCapabilities{}
	}
	return rpcErr, req
}

// retryWithCapabilities decides what to do about a -32021 answer to
// method: the context to re-send the request with, when adding what the
// server asks for makes a difference the client supports, or the typed
// error to return.
func (s *Session) retryWithCapabilities(ctx context.Context, method string, rpcErr *mcp.Error, required *mcp.ClientCapabilities) (context.Context, error) {
	lacking := lackingCapabilities(*required, s.caps, s.tasksAccepted(ctx))
	typed := &MissingCapabilityError{Method: method, Missing: lacking, Required: *required, Err: rpcErr}
	if !s.modern || len(lacking) == 0 {
		return nil, typed
	}
	tasks := "extensions." + mcp.ExtensionTasks
	server := s.ServerInfo().Capabilities
	if method == mcp.MethodToolsCall && slices.Equal(lacking, []string{tasks}) && server.HasExtension(mcp.ExtensionTasks) {
		return withTaskOptIn(ctx), nil
	}
	return nil, typed
}

// lackingCapabilities names the members of required that have does not
// declare; tasksExt says the request declared the tasks extension on top.
func lackingCapabilities(required, have mcp.ClientCapabilities, tasksExt bool) []string {
	var out []string
	if required.Roots != nil && have.Roots == nil {
		out = append(out, "roots")
	}
	if r := required.Sampling; r != nil {
		h := have.Sampling
		switch {
		case h == nil:
			out = append(out, "sampling")
		case r.Tools != nil && h.Tools == nil:
			out = append(out, "sampling.tools")
		case r.Context != nil && h.Context == nil:
			out = append(out, "sampling.context")
		}
	}
	if r := required.Elicitation; r != nil {
		h := have.Elicitation
		// An empty object means form mode, on either side.
		form := func(e *mcp.ElicitationCapability) bool { return e.Form != nil || e.URL == nil }
		switch {
		case h == nil:
			out = append(out, "elicitation")
		case r.URL != nil && h.URL == nil:
			out = append(out, "elicitation.url")
		case form(r) && !form(h):
			out = append(out, "elicitation.form")
		}
	}
	if len(required.Tasks) > 0 && len(have.Tasks) == 0 {
		out = append(out, "tasks")
	}
	for _, k := range slices.Sorted(maps.Keys(required.Experimental)) {
		if _, ok := have.Experimental[k]; !ok {
			out = append(out, "experimental."+k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(required.Extensions)) {
		if _, ok := have.Extensions[k]; ok || (k == mcp.ExtensionTasks && tasksExt) {
			continue
		}
		out = append(out, "extensions."+k)
	}
	return out
}

// isTaskResult reports whether a tools/call result is the tasks
// extension's CreateTaskResult; the common result, without resultType,
// costs one bytes.Contains.
func isTaskResult(res []byte) bool {
	if !bytes.Contains(res, []byte(`"resultType"`)) {
		return false
	}
	rt, err := mcp.ParseResultType(res)
	return err == nil && rt == mcp.ResultTypeTask
}
