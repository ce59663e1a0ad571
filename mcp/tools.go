package mcp

import "encoding/json"

// Tool describes one tool a server offers. InputSchema and OutputSchema are
// kept raw: every JSON Schema keyword (2020-12, draft-07, vendor keywords such
// as x-mcp-header) reaches the caller exactly as the server sent it.
type Tool struct {
	Name         string           `json:"name"`
	Title        string           `json:"title,omitempty"`
	Description  string           `json:"description,omitempty"`
	InputSchema  json.RawMessage  `json:"inputSchema"`
	OutputSchema json.RawMessage  `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"`
	Execution    *ToolExecution   `json:"execution,omitempty"`
	Icons        []Icon           `json:"icons,omitempty"`
	Meta         Meta             `json:"_meta,omitempty"`
}

// ToolAnnotations are hints about a tool's behaviour. They are untrusted
// unless the server is: never base a security decision on them. A nil hint
// takes the spec's default (readOnly false, destructive true, idempotent
// false, openWorld true).
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// ToolExecution carries execution hints (2025-11-25): whether the tool may or
// must run as a task.
type ToolExecution struct {
	// TaskSupport is "forbidden" (the default), "optional" or "required".
	TaskSupport string `json:"taskSupport,omitempty"`
}

// ListToolsParams are the params of tools/list.
type ListToolsParams struct {
	Cursor *string `json:"cursor,omitempty"`
	Meta   Meta    `json:"_meta,omitempty"`
}

// ListToolsResult is one page of tools/list.
type ListToolsResult struct {
	Tools      []Tool  `json:"tools"`
	NextCursor *string `json:"nextCursor,omitempty"`
	CacheFields
}

// CacheFields are the 2026-07-28 caching members of list and read results.
type CacheFields struct {
	ResultType string `json:"resultType,omitempty"`
	TTLMs      *int64 `json:"ttlMs,omitempty"`
	CacheScope string `json:"cacheScope,omitempty"`
	Meta       Meta   `json:"_meta,omitempty"`
}

// CallToolParams are the params of tools/call. Arguments is the JSON object
// of arguments, kept raw; nil sends no arguments.
type CallToolParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Task asks a 2025-11-25 server to run the call as a task.
	Task *TaskParams `json:"task,omitempty"`
	// InputResponses and RequestState retry a 2026-07-28 request whose
	// result was input_required: the answers to its InputRequests, keyed
	// as they were, and its RequestState byte for byte (nil if it had
	// none). Leave both empty on a first attempt.
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
	RequestState   *string                    `json:"requestState,omitempty"`
	Meta           Meta                       `json:"_meta,omitempty"`
}

// TaskParams are the task augmentation of a 2025-11-25 request.
type TaskParams struct {
	TTL *int64 `json:"ttl,omitempty"`
}

// CallToolResult is the result of tools/call. IsError marks a tool execution
// error, which a model should see so it can correct itself; protocol errors
// come back as *Error instead.
type CallToolResult struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
	ResultType        string          `json:"resultType,omitempty"`
	Meta              Meta            `json:"_meta,omitempty"`
}

// Text returns the text of every text block of r, joined by newlines: the
// common way to show a tool's result to a person.
func (r *CallToolResult) Text() string {
	var out []byte
	for i := range r.Content {
		if r.Content[i].Type != ContentText {
			continue
		}
		if len(out) > 0 {
			out = append(out, '\n')
		}
		out = append(out, r.Content[i].Text...)
	}
	return string(out)
}
