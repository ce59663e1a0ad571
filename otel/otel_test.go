package otel_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/otel"
	"github.com/tako-mcp/tako/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// start connects a traced Session to an in-process mcptest server over a
// message pipe; the server records what it received, _meta included.
func start(t *testing.T, version string, sr *tracetest.SpanRecorder) (*mcptest.Server, *transport.Session) {
	t.Helper()
	srv := mcptest.New(mcptest.Options{})
	if err := srv.AddTool(mcp.Tool{Name: "echo"}, func(_ context.Context, req *mcptest.CallRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("ok")}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	conn, wait := srv.Pipe(ctx)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	s, err := transport.Connect(ctx, conn, &transport.Options{
		ProtocolVersion: version,
		Middleware:      []transport.Middleware{otel.Middleware(&otel.Options{TracerProvider: tp, NetworkTransport: "pipe"})},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		cancel()
		wait()
		_ = tp.Shutdown(context.Background())
	})
	return srv, s
}

func attr(s sdktrace.ReadOnlySpan, key attribute.Key) string {
	for _, kv := range s.Attributes() {
		if kv.Key == key {
			return kv.Value.String()
		}
	}
	return ""
}

func TestSpansAndTraceContextInMeta(t *testing.T) {
	for _, version := range []string{mcp.Version20260728, mcp.Version20251125} {
		t.Run(version, func(t *testing.T) {
			sr := tracetest.NewSpanRecorder()
			srv, s := start(t, version, sr)

			// A parent span of the caller's, with baggage, as a program
			// that is itself traced has.
			parentTP := sdktrace.NewTracerProvider()
			defer parentTP.Shutdown(context.Background())
			ctx, parent := parentTP.Tracer("test").Start(context.Background(), "agent turn")
			res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{}`)})
			parent.End()
			if err != nil || res.Text() != "ok" {
				t.Fatalf("call: %v %v", res, err)
			}
			if _, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "missing"}); err == nil {
				t.Fatal("no error for an unknown tool")
			}

			var call, failed sdktrace.ReadOnlySpan
			for _, sp := range sr.Ended() {
				if sp.Name() == "tools/call echo" {
					call = sp
				}
				if sp.Name() == "tools/call missing" {
					failed = sp
				}
			}
			if call == nil || failed == nil {
				var names []string
				for _, sp := range sr.Ended() {
					names = append(names, sp.Name())
				}
				t.Fatalf("spans %v", names)
			}
			if call.SpanKind() != trace.SpanKindClient || call.Parent().SpanID() != parent.SpanContext().SpanID() ||
				call.SpanContext().TraceID() != parent.SpanContext().TraceID() {
				t.Errorf("span kind %v, parent %v: not a client child of the caller's span", call.SpanKind(), call.Parent())
			}
			for k, want := range map[attribute.Key]string{
				"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "network.transport": "pipe",
			} {
				if got := attr(call, k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			if failed.Status().Code != codes.Error || attr(failed, "error.type") != "-32602" {
				t.Errorf("failed call: status %v, error.type %q", failed.Status(), attr(failed, "error.type"))
			}

			// The server received the span's context in _meta.
			var rec mcptest.Record
			for _, r := range srv.Received() {
				if r.Msg.Method == mcp.MethodToolsCall {
					rec = r
					break
				}
			}
			if got := attr(call, "jsonrpc.request.id"); got != rec.Msg.ID.String() {
				t.Errorf("jsonrpc.request.id %q, the server saw id %s", got, rec.Msg.ID.String())
			}
			var tp string
			_ = json.Unmarshal(rec.Meta()["traceparent"], &tp)
			sc := call.SpanContext()
			if want := "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"; tp != want {
				t.Errorf("traceparent the server saw %q, want %q (params %s)", tp, want, rec.Msg.Params)
			}
			if version == mcp.Version20260728 && rec.Meta()[mcp.MetaProtocolVersion] == nil {
				t.Errorf("the protocol's _meta is missing next to the trace context: %s", rec.Msg.Params)
			}
		})
	}
}
