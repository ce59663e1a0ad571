// Package otel traces the requests a tako Session sends with OpenTelemetry.
//
// Middleware returns a transport.Middleware that starts a client span for
// every request on its way to the server, named and attributed after the
// OpenTelemetry semantic conventions for MCP (semconv v1.41.0: span name
// "{mcp.method.name} {target}", such as "tools/call echo"; attributes
// mcp.method.name, jsonrpc.request.id, gen_ai.tool.name,
// gen_ai.prompt.name, mcp.resource.uri, network.transport, error.type,
// rpc.response.status_code), and injects the span's W3C trace context
// (traceparent, tracestate) and baggage into the request's params._meta, so
// that a server that reads them continues the trace.
//
// It lives in a module of its own so that tako's core carries no
// OpenTelemetry dependency.
//
//	s, err := transport.Connect(ctx, conn, &transport.Options{
//		Middleware: []transport.Middleware{otel.Middleware(&otel.Options{TracerProvider: tp})},
//	})
//
// One span per message the server saw: a request the engine re-sends (lost
// in transit, a renewed legacy session, each round of an input_required
// request) gets a span of its own, and a result the Session answers from its
// cache gets none, since nothing was sent.
package otel

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	gotel "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// ScopeName is the instrumentation scope of the tracer.
const ScopeName = "github.com/tako-mcp/tako/otel"

// Options configure Middleware. The zero value (or nil) works: the global
// tracer provider, W3C trace context and baggage.
type Options struct {
	// TracerProvider makes the tracer. Nil means the global one
	// (go.opentelemetry.io/otel.GetTracerProvider), as OpenTelemetry
	// instrumentations do.
	TracerProvider trace.TracerProvider
	// Propagator writes the trace context into params._meta. Nil means W3C
	// trace context and baggage (traceparent, tracestate, baggage), the
	// keys the MCP specification allows unprefixed in _meta.
	Propagator propagation.TextMapPropagator
	// NetworkTransport, when set, is the network.transport attribute of
	// every span: "pipe" for stdio, "tcp" for HTTP, WebSocket and gRPC.
	NetworkTransport string
}

// Middleware returns the tracing middleware. Add it to
// transport.Options.Middleware; it is safe for use by many sessions at once.
func Middleware(opts *Options) transport.Middleware {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.TracerProvider == nil {
		o.TracerProvider = gotel.GetTracerProvider()
	}
	if o.Propagator == nil {
		o.Propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	tracer := o.TracerProvider.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL))
	var common []attribute.KeyValue
	if o.NetworkTransport != "" {
		common = append(common, semconv.NetworkTransportKey.String(o.NetworkTransport))
	}
	return func(next transport.Handler) transport.Handler {
		return func(ctx context.Context, req *transport.Request) (json.RawMessage, error) {
			name, attrs := describe(req)
			attrs = append(attrs, common...)
			ctx, span := tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
			defer span.End()
			o.Propagator.Inject(ctx, carrier{req})
			res, err := next(ctx, req)
			if err != nil {
				fail(span, err)
				return res, err
			}
			if req.Method == mcp.MethodToolsCall && toolFailed(res) {
				span.SetAttributes(semconv.ErrorTypeKey.String("tool_error"))
				span.SetStatus(codes.Error, "the tool reported an error")
			}
			return res, nil
		}
	}
}

// describe names the span and gives its request attributes. The target in
// the name is low-cardinality only: a tool or prompt name, never a URI.
func describe(req *transport.Request) (string, []attribute.KeyValue) {
	attrs := []attribute.KeyValue{
		semconv.McpMethodNameKey.String(req.Method),
		semconv.JSONRPCRequestIDKey.String(req.ID.String()),
	}
	name := req.Method
	switch req.Method {
	case mcp.MethodToolsCall, mcp.MethodPromptsGet, mcp.MethodResourcesRead:
		var p struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
		}
		if json.Unmarshal(req.Params, &p) != nil {
			break
		}
		switch {
		case req.Method == mcp.MethodToolsCall && p.Name != "":
			name += " " + p.Name
			attrs = append(attrs, semconv.GenAIToolNameKey.String(p.Name))
		case req.Method == mcp.MethodPromptsGet && p.Name != "":
			name += " " + p.Name
			attrs = append(attrs, semconv.GenAIPromptNameKey.String(p.Name))
		case req.Method == mcp.MethodResourcesRead && p.URI != "":
			attrs = append(attrs, semconv.McpResourceURIKey.String(p.URI))
		}
	}
	return name, attrs
}

// fail records err on span: a JSON-RPC error by its code, as the
// conventions say, anything else by the kind of failure.
func fail(span trace.Span, err error) {
	var rpc *mcp.Error
	kind := "_OTHER"
	switch {
	case errors.As(err, &rpc):
		code := strconv.FormatInt(rpc.Code, 10)
		kind = code
		span.SetAttributes(semconv.RPCResponseStatusCodeKey.String(code))
	case errors.Is(err, context.DeadlineExceeded):
		kind = "timeout"
	case errors.Is(err, context.Canceled):
		kind = "cancelled"
	case errors.Is(err, transport.ErrConnectionLost):
		kind = "connection_lost"
	case errors.Is(err, transport.ErrClosed):
		kind = "closed"
	}
	span.SetAttributes(semconv.ErrorTypeKey.String(kind))
	span.SetStatus(codes.Error, err.Error())
}

func toolFailed(res json.RawMessage) bool {
	var r struct {
		IsError bool `json:"isError"`
	}
	return json.Unmarshal(res, &r) == nil && r.IsError
}

// carrier writes propagated fields into the request's _meta.
type carrier struct{ req *transport.Request }

func (c carrier) Get(key string) string {
	var v string
	if raw := c.req.Meta(key); raw != nil {
		_ = json.Unmarshal(raw, &v)
	}
	return v
}

func (c carrier) Set(key, value string) {
	// The propagators write only traceparent, tracestate and baggage (or
	// keys of a custom propagator), which SetMeta accepts; a key it
	// refuses is one the protocol reserves, and is left out.
	_ = c.req.SetMeta(key, value)
}

// Keys serves extraction, which a client middleware never does.
func (c carrier) Keys() []string { return nil }
