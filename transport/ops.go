package transport

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tako-mcp/tako/internal/jsonscan"
	"github.com/tako-mcp/tako/mcp"
)

// maxPages bounds a paginated listing, so that a server that hands out
// cursors forever cannot hold a caller forever.
const maxPages = 10000

// listAll fetches every page of a paginated list method and returns the
// items of all pages. page decodes one page's result into its items, the
// next cursor (nil at the end) and its ttlMs. The list as a whole is fresh
// for as long as its least fresh page (checklist §6B); that time is
// recorded for TTL.
func listAll[T any](ctx context.Context, s *Session, method string, page func(json.RawMessage) ([]T, *string, *int64, error)) ([]T, error) {
	var out []T
	ttl, err := walkPages(ctx, s, method, page,
		func() { out = out[:0] },
		func(items []T) bool { out = append(out, items...); return true })
	if ttl != nil {
		s.mu.Lock()
		if s.ttls == nil {
			s.ttls = map[string]time.Duration{}
		}
		s.ttls[method] = time.Duration(max(*ttl, 0)) * time.Millisecond
		s.mu.Unlock()
	}
	return out, err
}

// walkPages fetches the pages of a list method in order and hands each
// page's items to each, until the last page or until each returns false.
// A cursor the server refuses (it forgot it, or the list changed under it)
// starts the walk again from the first page, once, after restart (§6A). It
// returns the least ttlMs of the pages it decoded. Both ListTools and the
// Tools iterator walk with it, so the two cannot come to disagree on where
// a list ends.
func walkPages[T any](ctx context.Context, s *Session, method string, page func(json.RawMessage) ([]T, *string, *int64, error), restart func(), each func([]T) bool) (*int64, error) {
	var ttl *int64
	var next *string // the cursor of the page to fetch; nil for the first
	seen := map[string]bool{}
	restarted := false
	for i := 0; i < maxPages; i++ {
		res, err := s.fetchPage(ctx, method, next)
		if err != nil {
			if next != nil && !restarted && isInvalidCursor(err) {
				s.log.Debug("mcp: invalid cursor; listing again from the first page", "method", method, "err", err)
				s.dropPages(method)
				restarted, next, ttl = true, nil, nil
				clear(seen)
				if restart != nil {
					restart()
				}
				continue
			}
			return ttl, err
		}
		items, cur, pageTTL, err := page(res)
		if err != nil {
			return ttl, fmt.Errorf("%w: %s result: %v", ErrProtocol, method, err)
		}
		if pageTTL != nil && (ttl == nil || *pageTTL < *ttl) {
			ttl = pageTTL
		}
		if !each(items) {
			return ttl, nil
		}
		// The empty string is a valid cursor on 2026-07-28 (checklist §6A);
		// only an absent nextCursor ends the list.
		if cur = s.endCursor(cur); cur == nil {
			return ttl, nil
		}
		if seen[*cur] {
			return ttl, fmt.Errorf("%w: %s repeated cursor %q", ErrProtocol, method, *cur)
		}
		seen[*cur] = true
		next = cur
	}
	return ttl, fmt.Errorf("%w: %s has more than %d pages", ErrProtocol, method, maxPages)
}

// typedPage decodes one page into R and takes from it, with get, the items,
// the next cursor and the cache fields.
func typedPage[R, T any](get func(*R) ([]T, *string, *mcp.CacheFields)) func(json.RawMessage) ([]T, *string, *int64, error) {
	return func(res json.RawMessage) ([]T, *string, *int64, error) {
		var r R
		if err := json.Unmarshal(res, &r); err != nil {
			return nil, nil, nil, err
		}
		items, next, cache := get(&r)
		return items, next, cache.TTLMs, nil
	}
}

// ListTools returns every tool the server offers, all pages merged. A
// server that did not declare the tools capability has none. On the
// 2026-07-28 wire, a tool the transport cannot carry (an invalid
// x-mcp-header over HTTP) is left out, with a warning in the log.
func (s *Session) ListTools(ctx context.Context) ([]mcp.Tool, error) {
	if s.ServerInfo().Capabilities.Tools == nil {
		return nil, nil
	}
	gen := s.schemas.generation()
	tools, err := listAll(ctx, s, mcp.MethodToolsList, typedPage(func(r *mcp.ListToolsResult) ([]mcp.Tool, *string, *mcp.CacheFields) {
		return r.Tools, r.NextCursor, &r.CacheFields
	}))
	if err != nil {
		return tools, err
	}
	tools = s.admitTools(tools)
	s.schemas.learnAll(tools, gen)
	return tools, nil
}

// CallTool calls a tool. A tool that fails reports it in the result
// (IsError), not as a Go error: a model should see it (ToolResultError
// turns such a result into an error where a program wants one). The
// structuredContent of a tool listed with an outputSchema is validated
// against it (validate.go): a mismatch is an *OutputSchemaError, returned
// together with the result. A tool not seen listed yet is learnt by
// listing the tools, once, when that matters (unlisted.go): before the
// call when the server runs tools as tasks, after it when the result is
// structured.
//
// A call that runs as a task (tasks.go) is waited for, and its result
// returned: on 2025-11-25 when p.Task is set or the tool's taskSupport is
// "required", on 2026-07-28 when Options.Capabilities declares the tasks
// extension and the server answers with a task. If ctx ends first, the
// task is cancelled. p.Task on a tool that forbids tasks, or a server
// without task support, is dropped. CallToolTask returns the handle
// instead.
func (s *Session) CallTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	s.learnTaskSupport(ctx, p.Name)
	if s.mustTask(p) {
		return s.callToolAsTask(ctx, p)
	}
	if p.Task != nil {
		// Not to be a task: a tool that forbids it, a server without task
		// support, or 2026-07-28, where params.task does not exist.
		q := *p
		q.Task = nil
		p = &q
	}
	raw, err := marshalToolParams(p)
	if err != nil {
		return nil, err
	}
	// Only an Informed Conn reads the RequestInfo: for any other, making it
	// would be an allocation per call for nothing.
	var info *RequestInfo
	if s.informed != nil {
		info = &RequestInfo{Modern: s.modern, Name: p.Name, HasName: true, Arguments: p.Arguments}
	}
	res, err := s.call(ctx, mcp.MethodToolsCall, raw, info)
	if err != nil {
		return nil, err
	}
	// A task result reaching here was asked for: by the context, by the
	// session's capabilities, or by the re-send after a -32021 that named
	// the tasks extension (missingcap.go); the engine refuses any other.
	if s.modern && (s.tasksAccepted(ctx) || isTaskResult(res)) {
		t, err := s.toolTask(ctx, p.Name, res)
		if err != nil {
			return nil, err
		}
		return t.waitOwned(ctx)
	}
	return s.decodeToolResult(ctx, p.Name, res)
}

// marshalToolParams is marshalObject for the params of a tools/call. The
// common ones, a name and arguments, are written directly: encoding/json
// would reach the arguments by reflection and compact them with a scanner
// of its own (0.8 µs for an echo call's params, against 0.1 µs here:
// BenchmarkMarshalToolParams). The arguments are still checked to be one
// JSON value, and refused as encoding/json would refuse them. Params with
// more than that go through encoding/json.
func marshalToolParams(p *mcp.CallToolParams) (json.RawMessage, error) {
	if p.Task != nil || p.InputResponses != nil || p.RequestState != nil || p.Meta != nil {
		return marshalObject(p)
	}
	b := make([]byte, 0, len(p.Name)+len(p.Arguments)+24)
	b = append(b, `{"name":`...)
	b = mcp.AppendJSONString(b, p.Name)
	if len(p.Arguments) > 0 {
		i := jsonscan.Space(p.Arguments, 0)
		end, _, err := jsonscan.Value(p.Arguments, i, 0)
		if err == nil {
			err = jsonscan.Finish(p.Arguments, end)
		}
		if err != nil {
			return nil, fmt.Errorf("mcp: marshal params: arguments of %q: %w", p.Name, err)
		}
		b = append(b, `,"arguments":`...)
		b = append(b, p.Arguments...)
	}
	return append(b, '}'), nil
}

// decodeToolResult decodes a tools/call result of tool and validates its
// structured output; an *OutputSchemaError comes with the result.
func (s *Session) decodeToolResult(ctx context.Context, tool string, res json.RawMessage) (*mcp.CallToolResult, error) {
	var r mcp.CallToolResult
	// The result's bytes belong to this call alone, so the decoded value
	// may alias them (the hot path of every agent; see
	// mcp.DecodeCallToolResult).
	if err := mcp.DecodeCallToolResult(res, &r); err != nil {
		return nil, fmt.Errorf("%w: %s result: %v", ErrProtocol, mcp.MethodToolsCall, err)
	}
	if r.Content == nil {
		r.Content = []mcp.Content{}
	}
	if err := s.checkOutput(ctx, tool, &r); err != nil {
		return &r, err
	}
	return &r, nil
}

// ListResources returns every resource the server lists.
func (s *Session) ListResources(ctx context.Context) ([]mcp.Resource, error) {
	if s.ServerInfo().Capabilities.Resources == nil {
		return nil, nil
	}
	return listAll(ctx, s, mcp.MethodResourcesList, typedPage(func(r *mcp.ListResourcesResult) ([]mcp.Resource, *string, *mcp.CacheFields) {
		return r.Resources, r.NextCursor, &r.CacheFields
	}))
}

// ListResourceTemplates returns every resource template the server lists.
func (s *Session) ListResourceTemplates(ctx context.Context) ([]mcp.ResourceTemplate, error) {
	if s.ServerInfo().Capabilities.Resources == nil {
		return nil, nil
	}
	return listAll(ctx, s, mcp.MethodResourcesTemplatesList, typedPage(func(r *mcp.ListResourceTemplatesResult) ([]mcp.ResourceTemplate, *string, *mcp.CacheFields) {
		return r.ResourceTemplates, r.NextCursor, &r.CacheFields
	}))
}

// ReadResource reads one resource.
func (s *Session) ReadResource(ctx context.Context, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	if s.ServerInfo().Capabilities.Resources == nil {
		return nil, fmt.Errorf("%w: resources", ErrCapability)
	}
	var r mcp.ReadResourceResult
	if err := s.Call(ctx, mcp.MethodResourcesRead, p, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// ListPrompts returns every prompt the server lists.
func (s *Session) ListPrompts(ctx context.Context) ([]mcp.Prompt, error) {
	if s.ServerInfo().Capabilities.Prompts == nil {
		return nil, nil
	}
	return listAll(ctx, s, mcp.MethodPromptsList, typedPage(func(r *mcp.ListPromptsResult) ([]mcp.Prompt, *string, *mcp.CacheFields) {
		return r.Prompts, r.NextCursor, &r.CacheFields
	}))
}

// GetPrompt fetches one prompt with its arguments filled in.
func (s *Session) GetPrompt(ctx context.Context, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	if s.ServerInfo().Capabilities.Prompts == nil {
		return nil, fmt.Errorf("%w: prompts", ErrCapability)
	}
	var r mcp.GetPromptResult
	if err := s.Call(ctx, mcp.MethodPromptsGet, p, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Complete asks for completions of a prompt or resource-template argument.
func (s *Session) Complete(ctx context.Context, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	if s.ServerInfo().Capabilities.Completions == nil {
		return nil, fmt.Errorf("%w: completions", ErrCapability)
	}
	var r mcp.CompleteResult
	if err := s.Call(ctx, mcp.MethodComplete, p, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Ping checks that the server answers. On 2026-07-28, which has no ping,
// it sends server/discover instead.
func (s *Session) Ping(ctx context.Context) error {
	method := mcp.MethodPing
	if s.modern {
		method = mcp.MethodDiscover
	}
	// Past the cache: an answer from it would prove nothing.
	_, _, err := s.callRounds(ctx, method, nil, nil)
	return err
}

// TTL reports how long the server said the last full listing of method
// (tools/list, prompts/list, ...) stays fresh: the least ttlMs of its pages,
// on the 2026-07-28 wire. ok is false when the server gave none.
func (s *Session) TTL(method string) (d time.Duration, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok = s.ttls[method]
	return d, ok
}

var (
	_ Transport = (*Session)(nil)
	_ ListTTL   = (*Session)(nil)
	_ Caller    = (*Session)(nil)
)
