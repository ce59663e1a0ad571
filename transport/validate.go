package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/tako-mcp/tako/internal/jsonvalue"
	"github.com/tako-mcp/tako/internal/schemacheck"
	"github.com/tako-mcp/tako/mcp"
)

// Structured output (checklist §6C). A tool that declares an outputSchema
// must answer with structuredContent that conforms to it, and a client
// should check. The Session keeps the output schema of every tool it has
// seen listed (ListTools replaces them all; Tools and ListToolsPage add
// the tools of each page) and validates the structuredContent of a
// successful CallTool of such a tool. A tool listed without an
// outputSchema is not checked; nor is a result with isError, which reports
// a failure rather than output. Schemas are
// compiled on a tool's first call and kept until the listing changes them;
// an external $ref is never fetched (the schema then does not compile,
// which is an OutputSchemaError too). Options.SkipOutputValidation turns
// all of it off.
//
// A tool not seen listed whose result carries structuredContent is learnt
// by listing the tools on demand (unlisted.go), so a program that calls
// without ListTools has its structured output checked too; such a tool
// that answers without structuredContent cannot be told from one without
// an outputSchema, and is not listed for.

// OutputSchemaError reports a tool result whose structuredContent does not
// conform to the tool's outputSchema (or is missing, or the schema cannot
// be used). CallTool returns it together with the result, so a caller that
// wants the content anyway still has it.
type OutputSchemaError struct {
	// Tool is the tool's name.
	Tool string
	// Err says what is wrong: the validation failures, where they are, or
	// why the schema could not be compiled.
	Err error
}

func (e *OutputSchemaError) Error() string {
	return fmt.Sprintf("mcp: tool %q: structured output does not match its output schema: %v", e.Tool, e.Err)
}

func (e *OutputSchemaError) Unwrap() error { return e.Err }

// toolSchemas is the Session's store of output schemas by tool name. Its
// methods are safe for concurrent use.
type toolSchemas struct {
	mu       sync.Mutex
	raw      map[string]json.RawMessage
	compiled map[string]compiledSchema
	// support is each listed tool's execution.taskSupport (tasks.go).
	support map[string]string
	// gen counts the server's tools/list_changed notifications; listed is
	// gen+1 when a complete listing (or an attempt at one on demand) has
	// been made since the last of them, so that a tool the listing lacks
	// is not listed for again (unlisted.go).
	gen, listed uint64
	// sem lets one listing on demand run at a time.
	sem chan struct{}
}

type compiledSchema struct {
	raw    json.RawMessage // what was compiled, to notice a new listing
	schema *schemacheck.Schema
	err    error
}

// learn records the output schemas of tools; replace drops every schema
// not in tools first (a complete listing).
func (ts *toolSchemas) learn(tools []mcp.Tool, replace bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if replace || ts.raw == nil {
		ts.raw = make(map[string]json.RawMessage, len(tools))
		ts.support = make(map[string]string, len(tools))
	}
	for i := range tools {
		ts.support[tools[i].Name] = taskSupportOf(&tools[i])
		if s := bytes.TrimSpace(tools[i].OutputSchema); len(s) > 0 && string(s) != "null" {
			ts.raw[tools[i].Name] = bytes.Clone(s)
		} else {
			delete(ts.raw, tools[i].Name)
		}
	}
}

// learnAll is learn for a complete listing that began in generation gen
// of the tool list (unlisted.go): unless the list changed since, no tool
// is listed for on demand until it does.
func (ts *toolSchemas) learnAll(tools []mcp.Tool, gen uint64) {
	ts.learn(tools, true)
	ts.tried(gen)
}

// lookup returns the compiled output schema of tool, nil if there is none
// to check against.
func (ts *toolSchemas) lookup(tool string) (*schemacheck.Schema, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	raw, ok := ts.raw[tool]
	if !ok {
		return nil, nil
	}
	if c, ok := ts.compiled[tool]; ok && bytes.Equal(c.raw, raw) {
		return c.schema, c.err
	}
	schema, err := schemacheck.Compile(raw)
	if err != nil {
		err = fmt.Errorf("the output schema cannot be used: %w", err)
	}
	if ts.compiled == nil {
		ts.compiled = map[string]compiledSchema{}
	}
	ts.compiled[tool] = compiledSchema{raw: raw, schema: schema, err: err}
	return schema, err
}

// checkOutput validates a tool result's structuredContent; see the note
// at the top of this file.
func (s *Session) checkOutput(ctx context.Context, tool string, r *mcp.CallToolResult) error {
	if s.opts.SkipOutputValidation || r.IsError {
		return nil
	}
	if len(bytes.TrimSpace(r.StructuredContent)) > 0 {
		// Structured output of a tool not seen listed: learn its schema
		// (unlisted.go).
		s.learnTool(ctx, tool)
	}
	schema, err := s.schemas.lookup(tool)
	if err != nil {
		return &OutputSchemaError{Tool: tool, Err: err}
	}
	if schema == nil {
		return nil
	}
	if len(bytes.TrimSpace(r.StructuredContent)) == 0 {
		return &OutputSchemaError{Tool: tool, Err: errors.New("the tool declares an output schema but the result has no structuredContent")}
	}
	v, err := jsonvalue.Decode(r.StructuredContent)
	if err != nil {
		return &OutputSchemaError{Tool: tool, Err: fmt.Errorf("structuredContent is not JSON: %w", err)}
	}
	if err := schema.Validate(v); err != nil {
		return &OutputSchemaError{Tool: tool, Err: errors.New(schemacheck.Message(err))}
	}
	return nil
}
