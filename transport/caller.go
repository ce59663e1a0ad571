package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/tako-mcp/tako/mcp"
)

// Raw results through the Transport seam.
//
// A program that prints what a server said (tako --json), forwards it, or
// reads a field tako does not model needs the protocol's own JSON of a
// result, not tako's typed view of it. Caller is the small optional
// interface through which a Transport gives it; Call is the function that
// works on every Transport, using Caller when the Transport has it and the
// typed methods otherwise. The CLI needs nothing else, so it is written
// against Transport alone (DESIGN.md).

// Caller is implemented by Transports that can send any MCP request and
// return its result as the protocol's JSON. Session and the gRPC client
// implement it.
//
// Call sends method with params (nil, raw JSON, or a value that marshals to
// a JSON object) and stores the result in result: a *json.RawMessage keeps
// the JSON, nil discards it, anything else is decoded with encoding/json.
// A list method (tools/list, prompts/list, resources/list,
// resources/templates/list) called without a cursor returns the whole
// list: every page is fetched and merged into one result whose list member
// holds every item and which has no nextCursor. A JSON-RPC error from the
// server is an *mcp.Error.
type Caller interface {
	Call(ctx context.Context, method string, params, result any) error
}

// Call sends method with params to t and stores its result in result, as
// Caller describes. A Transport that does not implement Caller is served
// through its typed methods, so only the methods Transport has can be
// called, and the result is tako's encoding of the typed value.
func Call(ctx context.Context, t Transport, method string, params, result any) error {
	if c, ok := t.(Caller); ok {
		return c.Call(ctx, method, params, result)
	}
	res, err := callTyped(ctx, t, method, params)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("mcp: %s result: %w", method, err)
	}
	return decodeResult(method, raw, result)
}

// callTyped serves Call through t's typed methods.
func callTyped(ctx context.Context, t Transport, method string, params any) (any, error) {
	switch method {
	case mcp.MethodToolsList:
		tools, err := t.ListTools(ctx)
		return &mcp.ListToolsResult{Tools: nonNil(tools)}, err
	case mcp.MethodResourcesList:
		list, err := t.ListResources(ctx)
		return &mcp.ListResourcesResult{Resources: nonNil(list)}, err
	case mcp.MethodResourcesTemplatesList:
		list, err := t.ListResourceTemplates(ctx)
		return &mcp.ListResourceTemplatesResult{ResourceTemplates: nonNil(list)}, err
	case mcp.MethodPromptsList:
		list, err := t.ListPrompts(ctx)
		return &mcp.ListPromptsResult{Prompts: nonNil(list)}, err
	case mcp.MethodToolsCall:
		p, err := DecodeParams[mcp.CallToolParams](params)
		if err != nil {
			return nil, err
		}
		return t.CallTool(ctx, p)
	case mcp.MethodResourcesRead:
		p, err := DecodeParams[mcp.ReadResourceParams](params)
		if err != nil {
			return nil, err
		}
		return t.ReadResource(ctx, p)
	case mcp.MethodPromptsGet:
		p, err := DecodeParams[mcp.GetPromptParams](params)
		if err != nil {
			return nil, err
		}
		return t.GetPrompt(ctx, p)
	case mcp.MethodComplete:
		p, err := DecodeParams[mcp.CompleteParams](params)
		if err != nil {
			return nil, err
		}
		return t.Complete(ctx, p)
	}
	return nil, fmt.Errorf("%w: %s has no typed method on this transport", ErrCapability, method)
}

// DecodeParams turns params as Call takes them (nil, raw JSON, or any value
// that marshals to an object) into a *T. A Transport that implements
// Caller by dispatching to typed operations uses it; a malformed value is
// an *mcp.Error with code -32602, as a server would answer it.
func DecodeParams[T any](params any) (*T, error) {
	if p, ok := params.(*T); ok && p != nil {
		return p, nil
	}
	raw, err := marshalObject(params)
	if err != nil {
		return nil, err
	}
	p := new(T)
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, p); err != nil {
			return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: err.Error()}
		}
	}
	return p, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// listKeys names the list member of each paginated method's result.
var listKeys = map[string]string{
	mcp.MethodToolsList:              "tools",
	mcp.MethodPromptsList:            "prompts",
	mcp.MethodResourcesList:          "resources",
	mcp.MethodResourcesTemplatesList: "resourceTemplates",
}

// hasCursor reports whether raw list params name a cursor (a caller asking
// for one page).
func hasCursor(raw json.RawMessage) bool {
	if !bytes.Contains(raw, []byte(`"cursor"`)) {
		return false
	}
	var p struct {
		Cursor *string `json:"cursor"`
	}
	return json.Unmarshal(raw, &p) == nil && p.Cursor != nil
}

// callList fetches every page of list method and merges them: the first
// page's members, the list member holding every page's items, no
// nextCursor. The items are the server's bytes.
func (s *Session) callList(ctx context.Context, method string) (json.RawMessage, error) {
	key := listKeys[method]
	var first map[string]json.RawMessage
	items, err := listAll(ctx, s, method, func(res json.RawMessage) ([]json.RawMessage, *string, *int64, error) {
		var page map[string]json.RawMessage
		if err := json.Unmarshal(res, &page); err != nil {
			return nil, nil, nil, err
		}
		// The page is decoded once; its members are read from the map.
		var (
			list []json.RawMessage
			next *string
			ttl  *int64
		)
		if err := decodeMember(page, key, &list); err != nil {
			return nil, nil, nil, err
		}
		if err := decodeMember(page, "nextCursor", &next); err != nil {
			return nil, nil, nil, err
		}
		if err := decodeMember(page, "ttlMs", &ttl); err != nil {
			return nil, nil, nil, err
		}
		if first == nil {
			first = page
		}
		return list, next, ttl, nil
	})
	if err != nil {
		return nil, err
	}
	if method == mcp.MethodToolsList {
		items, err = s.checkRawTools(items)
		if err != nil {
			return nil, err
		}
	}
	return mergePages(first, key, items), nil
}

// decodeMember decodes obj[name] into v, if obj has it.
func decodeMember(obj map[string]json.RawMessage, name string, v any) error {
	raw, ok := obj[name]
	if !ok {
		return nil
	}
	return json.Unmarshal(raw, v)
}

// mergePages writes the merged result by hand: encoding/json compacts a
// RawMessage it marshals, and the items must reach the caller as the
// server wrote them. The first page's other members follow the list, in
// sorted order so the output is stable.
func mergePages(first map[string]json.RawMessage, key string, items []json.RawMessage) json.RawMessage {
	n := 2
	for _, it := range items {
		n += len(it) + 1
	}
	b := make([]byte, 0, n+len(key)+64)
	b = append(b, '{')
	b = mcp.AppendJSONString(b, key)
	b = append(b, ":["...)
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	b = append(b, ']')
	keys := make([]string, 0, len(first))
	for k := range first {
		if k != key && k != "nextCursor" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		b = append(b, ',')
		b = mcp.AppendJSONString(b, k)
		b = append(b, ':')
		b = append(b, first[k]...)
	}
	return append(b, '}')
}
