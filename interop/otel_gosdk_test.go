package interop

import (
	"encoding/json"
	"path/filepath"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/otel"
	"github.com/tako-mcp/tako/transport"
)

// TestTraceContextReachesGoSDK: the official Go SDK's server receives the
// client span's traceparent in the _meta of the tools/call it runs (its
// meta tool returns that _meta), on 2026-07-28 next to the protocol's own
// keys and on 2025-11-25 alone.
func TestTraceContextReachesGoSDK(t *testing.T) {
	for _, pin := range []string{mcp.Version20260728, mcp.Version20251125} {
		t.Run(pin, func(t *testing.T) {
			ctx := testContext(t)
			sr := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
			t.Cleanup(func() { _ = tp.Shutdown(ctx) })
			s := connect(t, ctx, filepath.Join(peerBin, "gosdk"), []string{"-extra-tools"}, &transport.Options{
				ProtocolVersion: pin,
				Middleware:      []transport.Middleware{otel.Middleware(&otel.Options{TracerProvider: tp, NetworkTransport: "pipe"})},
			})
			res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "meta", Arguments: json.RawMessage(`{}`)})
			if err != nil || res.IsError {
				t.Fatalf("meta: %v %v", res, err)
			}
			var meta map[string]any
			if err := json.Unmarshal([]byte(res.Text()), &meta); err != nil {
				t.Fatalf("meta tool answered %q: %v", res.Text(), err)
			}
			var span sdktrace.ReadOnlySpan
			for _, sp := range sr.Ended() {
				if sp.Name() == "tools/call meta" {
					span = sp
				}
			}
			if span == nil {
				t.Fatal("no span tools/call meta")
			}
			sc := span.SpanContext()
			want := "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"
			if meta["traceparent"] != want {
				t.Errorf("the server saw _meta %v, want traceparent %s", meta, want)
			}
		})
	}
}
