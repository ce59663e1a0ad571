package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"

	"github.com/tako-mcp/tako/mcp"
)

// Pagination (checklist §6A), three ways:
//
//   - ListTools and its siblings return every page merged (ops.go);
//   - Tools, Resources, ResourceTemplates and Prompts are iterators that
//     fetch a page at a time as the loop asks for more, so a caller that
//     stops early sends no more requests;
//   - ListToolsPage and its siblings fetch one page with a cursor the caller
//     holds.
//
// An invalid cursor (-32602 on a request that carried one: the server
// forgot it, or the list changed under it) restarts a listing once from the
// first page, in the merged lists and in the iterators; an iterator then
// skips the items it has already yielded (by tool or prompt name, resource
// URI, template URI template), so each is yielded once. The page methods
// leave the decision to the caller: their error wraps ErrInvalidCursor.

// ErrInvalidCursor is wrapped by the error of a page request whose cursor
// the server refused (-32602 on a request that carried a cursor). Start
// again from the first page.
var ErrInvalidCursor = errors.New("mcp: the server refused the cursor")

// isInvalidCursor reports whether err answers a request with a cursor as an
// invalid cursor: the spec gives that -32602.
func isInvalidCursor(err error) bool {
	var rpcErr *mcp.Error
	return errors.As(err, &rpcErr) && rpcErr.Code == mcp.CodeInvalidParams
}

// fetchPage requests one page of a list method; cursor nil asks for the
// first.
func (s *Session) fetchPage(ctx context.Context, method string, cursor *string) (json.RawMessage, error) {
	var params json.RawMessage
	if cursor != nil {
		params, _ = json.Marshal(&mcp.ListParams{Cursor: cursor}) // a string: cannot fail
	}
	return s.call(ctx, method, params, nil)
}

// endCursor normalises a page's nextCursor so that nil alone means "no more
// pages" in every era: before 2026-07-28 an empty string also ended a list
// (and some servers send it), while on 2026-07-28 "" is a valid cursor.
func (s *Session) endCursor(next *string) *string {
	if next != nil && *next == "" && !s.modern {
		return nil
	}
	return next
}

// pages is the iterator over every item of a paginated list. page decodes
// one page; key names an item, to skip items already yielded after a
// restart.
func pages[T any](ctx context.Context, s *Session, method string, page func(json.RawMessage) ([]T, *string, *int64, error), key func(*T) string) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		// Items already yielded are skipped when a refused cursor starts
		// the walk again from the first page.
		yielded := map[string]bool{}
		stopped := false
		_, err := walkPages(ctx, s, method, page, nil, func(items []T) bool {
			for j := range items {
				k := key(&items[j])
				if yielded[k] {
					continue
				}
				yielded[k] = true
				if !yield(items[j], nil) {
					stopped = true
					return false
				}
			}
			return true
		})
		if err != nil && !stopped {
			var zero T
			yield(zero, err)
		}
	}
}

// Tools iterates over every tool the server offers, fetching a page at a
// time as the loop goes on; breaking out of the loop stops it, with nothing
// left running. An error ends the iteration: it is yielded once, with a
// zero Tool. A server that did not declare tools yields nothing.
//
// On the 2026-07-28 wire over a Conn that must see whole listings
// (Informed: Streamable HTTP, which carries x-mcp-header parameters), Tools
// fetches every page before it yields the first tool, as ListTools does,
// since a tool the Conn cannot carry is known only then.
//
// The output schemas of the tools it sees are kept for CallTool's
// validation (validate.go).
func (s *Session) Tools(ctx context.Context) iter.Seq2[mcp.Tool, error] {
	return func(yield func(mcp.Tool, error) bool) {
		if s.ServerInfo().Capabilities.Tools == nil {
			return
		}
		if s.informed != nil && s.modern {
			tools, err := s.ListTools(ctx)
			for _, t := range tools {
				if !yield(t, nil) {
					return
				}
			}
			if err != nil {
				yield(mcp.Tool{}, err)
			}
			return
		}
		for t, err := range pages(ctx, s, mcp.MethodToolsList, s.toolsPage, func(t *mcp.Tool) string { return t.Name }) {
			if !yield(t, err) || err != nil {
				return
			}
		}
	}
}

// toolsPage decodes one tools/list page and keeps its output schemas.
func (s *Session) toolsPage(res json.RawMessage) ([]mcp.Tool, *string, *int64, error) {
	var r mcp.ListToolsResult
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, nil, nil, err
	}
	s.schemas.learn(r.Tools, false)
	return r.Tools, r.NextCursor, r.TTLMs, nil
}

// Resources iterates over every resource the server lists, a page at a time;
// see Tools for how it ends.
func (s *Session) Resources(ctx context.Context) iter.Seq2[mcp.Resource, error] {
	return func(yield func(mcp.Resource, error) bool) {
		if s.ServerInfo().Capabilities.Resources == nil {
			return
		}
		for r, err := range pages(ctx, s, mcp.MethodResourcesList, resourcesPage, func(r *mcp.Resource) string { return r.URI }) {
			if !yield(r, err) || err != nil {
				return
			}
		}
	}
}

// ResourceTemplates iterates over every resource template the server lists,
// a page at a time; see Tools for how it ends.
func (s *Session) ResourceTemplates(ctx context.Context) iter.Seq2[mcp.ResourceTemplate, error] {
	return func(yield func(mcp.ResourceTemplate, error) bool) {
		if s.ServerInfo().Capabilities.Resources == nil {
			return
		}
		for r, err := range pages(ctx, s, mcp.MethodResourcesTemplatesList, templatesPage, func(r *mcp.ResourceTemplate) string { return r.URITemplate }) {
			if !yield(r, err) || err != nil {
				return
			}
		}
	}
}

// Prompts iterates over every prompt the server lists, a page at a time;
// see Tools for how it ends.
func (s *Session) Prompts(ctx context.Context) iter.Seq2[mcp.Prompt, error] {
	return func(yield func(mcp.Prompt, error) bool) {
		if s.ServerInfo().Capabilities.Prompts == nil {
			return
		}
		for p, err := range pages(ctx, s, mcp.MethodPromptsList, promptsPage, func(p *mcp.Prompt) string { return p.Name }) {
			if !yield(p, err) || err != nil {
				return
			}
		}
	}
}

var (
	resourcesPage = typedPage(func(r *mcp.ListResourcesResult) ([]mcp.Resource, *string, *mcp.CacheFields) {
		return r.Resources, r.NextCursor, &r.CacheFields
	})
	templatesPage = typedPage(func(r *mcp.ListResourceTemplatesResult) ([]mcp.ResourceTemplate, *string, *mcp.CacheFields) {
		return r.ResourceTemplates, r.NextCursor, &r.CacheFields
	})
	promptsPage = typedPage(func(r *mcp.ListPromptsResult) ([]mcp.Prompt, *string, *mcp.CacheFields) {
		return r.Prompts, r.NextCursor, &r.CacheFields
	})
)

// onePage fetches one page into R. A server without the capability has an
// empty list: R's zero value, whose NextCursor is nil.
func onePage[R any](ctx context.Context, s *Session, method string, cursor *string, has bool) (*R, error) {
	r := new(R)
	if !has {
		return r, nil
	}
	res, err := s.fetchPage(ctx, method, cursor)
	if err != nil {
		if cursor != nil && isInvalidCursor(err) {
			s.dropPages(method)
			return nil, fmt.Errorf("%s: %w: %w", method, ErrInvalidCursor, err)
		}
		return nil, err
	}
	if err := json.Unmarshal(res, r); err != nil {
		return nil, fmt.Errorf("%w: %s result: %v", ErrProtocol, method, err)
	}
	return r, nil
}

// pageCursor is p's cursor; a nil p asks for the first page.
func pageCursor(p *mcp.ListParams) *string {
	if p == nil {
		return nil
	}
	return p.Cursor
}

// ListToolsPage fetches one page of tools/list: the first when p (or its
// Cursor) is nil, else the page that p.Cursor names (pass the previous page's
// NextCursor). A nil NextCursor in the result means the last page, in every
// era (a legacy server's "" is turned into nil; on 2026-07-28 "" is a
// cursor). A refused cursor is an error wrapping ErrInvalidCursor. On the
// 2026-07-28 wire over Streamable HTTP, prefer ListTools or Tools: the Conn
// learns each tool's x-mcp-header parameters only from complete listings.
func (s *Session) ListToolsPage(ctx context.Context, p *mcp.ListParams) (*mcp.ListToolsResult, error) {
	r, err := onePage[mcp.ListToolsResult](ctx, s, mcp.MethodToolsList, pageCursor(p), s.ServerInfo().Capabilities.Tools != nil)
	if err != nil {
		return nil, err
	}
	r.NextCursor = s.endCursor(r.NextCursor)
	s.schemas.learn(r.Tools, false)
	return r, nil
}

// ListResourcesPage fetches one page of resources/list; see ListToolsPage.
func (s *Session) ListResourcesPage(ctx context.Context, p *mcp.ListParams) (*mcp.ListResourcesResult, error) {
	r, err := onePage[mcp.ListResourcesResult](ctx, s, mcp.MethodResourcesList, pageCursor(p), s.ServerInfo().Capabilities.Resources != nil)
	if err != nil {
		return nil, err
	}
	r.NextCursor = s.endCursor(r.NextCursor)
	return r, nil
}

// ListResourceTemplatesPage fetches one page of resources/templates/list;
// see ListToolsPage.
func (s *Session) ListResourceTemplatesPage(ctx context.Context, p *mcp.ListParams) (*mcp.ListResourceTemplatesResult, error) {
	r, err := onePage[mcp.ListResourceTemplatesResult](ctx, s, mcp.MethodResourcesTemplatesList, pageCursor(p), s.ServerInfo().Capabilities.Resources != nil)
	if err != nil {
		return nil, err
	}
	r.NextCursor = s.endCursor(r.NextCursor)
	return r, nil
}

// ListPromptsPage fetches one page of prompts/list; see ListToolsPage.
func (s *Session) ListPromptsPage(ctx context.Context, p *mcp.ListParams) (*mcp.ListPromptsResult, error) {
	r, err := onePage[mcp.ListPromptsResult](ctx, s, mcp.MethodPromptsList, pageCursor(p), s.ServerInfo().Capabilities.Prompts != nil)
	if err != nil {
		return nil, err
	}
	r.NextCursor = s.endCursor(r.NextCursor)
	return r, nil
}
