package otel_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/otel"
	"github.com/tako-mcp/tako/transport"
)

// Tracing every request of a session: one client span per request, its
// trace context carried to the server in params._meta.
func ExampleMiddleware() {
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	defer tp.Shutdown(context.Background())

	srv := mcptest.New(mcptest.Options{})
	_ = srv.AddTool(mcp.Tool{Name: "echo"}, func(context.Context, *mcptest.CallRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("hi")}}, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	conn, wait := srv.Pipe(ctx)
	defer func() { cancel(); wait() }()

	s, err := transport.Connect(ctx, conn, &transport.Options{
		ProtocolVersion: mcp.Version20251125,
		Middleware:      []transport.Middleware{otel.Middleware(&otel.Options{TracerProvider: tp})},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo"}); err != nil {
		fmt.Println(err)
		return
	}
	for _, span := range sr.Ended() {
		fmt.Println(span.Name())
	}
	// Output:
	// initialize
	// tools/call echo
}
