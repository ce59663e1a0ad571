package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tako-mcp/tako/mcp"
)

// Middleware: the seam around every request a Session sends.
//
// A Middleware wraps a Handler the way an http.RoundTripper wraps another:
// it sees each request on its way to the wire (method, id, params), may add
// _meta members to it (trace context, a tenant tag), and sees what came back
// (the raw result or the error). Tracing, metrics and logging are written
// once against it, for every transport.
//
// The chain sits where one JSON-RPC request becomes one message on the wire,
// below the engine's retries: a request re-sent with a new id (lost in
// transit, an expired legacy session, a header mismatch, each round of an
// input_required request) passes through the chain once per send, so a
// tracer makes one span per request the server saw. The handshake
// (server/discover, initialize) and the 2026-07-28 subscriptions/listen
// stream pass through it too; notifications do not.
//
// The result cache (cache.go) sits above the chain: a result served from the
// cache was never sent, so no middleware sees it. That keeps the chain's
// meaning plain (one call of the chain, one message to the server) and keeps
// the cache's key free of what middleware add to _meta.

// Handler sends one request and returns its result: the server's JSON, or
// an error (an *mcp.Error for a JSON-RPC error from the server; other errors
// wrap ErrClosed, ErrConnectionLost, a context's error, ...).
type Handler func(ctx context.Context, req *Request) (json.RawMessage, error)

// Middleware wraps a Handler. A middleware must call next at most once per
// request, from the goroutine it was called on or not at all (returning an
// error instead), and must not keep req after next returns. The first
// middleware of Options.Middleware is the outermost.
type Middleware func(next Handler) Handler

// ErrReservedMeta is wrapped by the error of Request.SetMeta for a _meta key
// that belongs to the protocol (progressToken, or a key whose prefix's second
// label is modelcontextprotocol or mcp, such as io.modelcontextprotocol/...):
// the engine writes those itself.
var ErrReservedMeta = errors.New("mcp: reserved _meta key")

// Request is one request on its way through the middleware chain. It is
// not safe for concurrent use; a middleware that starts goroutines copies
// what they need.
type Request struct {
	// Method is the JSON-RPC method, such as mcp.MethodToolsCall.
	Method string
	// ID is the request's JSON-RPC id on the wire.
	ID mcp.ID
	// Params are the request's params as the caller gave them, without the
	// _meta members the engine adds (the 2026-07-28 protocol keys, the
	// progress token); nil when there are none. Treat them as read-only:
	// add _meta members with SetMeta.
	Params json.RawMessage

	n        int64
	withMeta bool
	info     *RequestInfo
	meta     []member
}

// SetMeta adds the member key to the request's params._meta, with value
// encoded as JSON (a json.RawMessage is taken as it is, a string is quoted,
// anything else goes through encoding/json). A second SetMeta of the same
// key replaces the first; a key the caller's params already carry in _meta
// is overridden. It works the same on every protocol revision, and costs no
// parsing of the params when they have no _meta of their own.
//
// Keys the protocol reserves are refused with an error wrapping
// ErrReservedMeta; W3C trace context (traceparent, tracestate, baggage) is
// allowed, as the 2026-07-28 revision says.
func (r *Request) SetMeta(key string, value any) error {
	if err := checkMetaKey(key); err != nil {
		return err
	}
	var raw json.RawMessage
	switch v := value.(type) {
	case json.RawMessage:
		if !json.Valid(v) {
			return fmt.Errorf("mcp: _meta %q: the value is not valid JSON", key)
		}
		raw = v
	case string:
		raw = mcp.AppendJSONString(nil, v)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("mcp: _meta %q: %w", key, err)
		}
		raw = b
	}
	for i := range r.meta {
		if r.meta[i].key == key {
			r.meta[i].value = raw
			return nil
		}
	}
	r.meta = append(r.meta, member{key, raw})
	return nil
}

// Meta returns the value SetMeta gave key in this request, or nil.
func (r *Request) Meta(key string) json.RawMessage {
	for _, m := range r.meta {
		if m.key == key {
			return m.value
		}
	}
	return nil
}

// checkMetaKey refuses empty keys and the keys the protocol reserves
// (checklist §2: a prefix whose second label is modelcontextprotocol or mcp,
// and the bare progressToken the engine allocates).
func checkMetaKey(key string) error {
	if key == "" {
		return errors.New("mcp: empty _meta key")
	}
	if key == "progressToken" {
		return fmt.Errorf("%w: %q", ErrReservedMeta, key)
	}
	if prefix, _, ok := strings.Cut(key, "/"); ok {
		labels := strings.Split(prefix, ".")
		if len(labels) >= 2 && (labels[1] == "modelcontextprotocol" || labels[1] == "mcp") {
			return fmt.Errorf("%w: %q", ErrReservedMeta, key)
		}
	}
	return nil
}

// chain builds the session's handler from Options.Middleware, the first
// outermost. Nil when there is none: roundTrip then skips the Request value
// altogether, so a session without middleware pays nothing for the seam.
func (s *Session) chain() Handler {
	if len(s.opts.Middleware) == 0 {
		return nil
	}
	h := Handler(func(ctx context.Context, req *Request) (json.RawMessage, error) {
		return s.exchange(ctx, req.n, req.Method, req.Params, req.withMeta, req.info, req.meta)
	})
	for i := len(s.opts.Middleware) - 1; i >= 0; i-- {
		if mw := s.opts.Middleware[i]; mw != nil {
			h = mw(h)
		}
	}
	return h
}

// appendMembers appends ,"key":value for each member to meta (without the
// leading comma when meta is empty).
func appendMembers(meta []byte, ms []member) []byte {
	for _, m := range ms {
		if len(meta) > 0 {
			meta = append(meta, ',')
		}
		meta = mcp.AppendJSONString(meta, m.key)
		meta = append(meta, ':')
		meta = append(meta, m.value...)
	}
	return meta
}
