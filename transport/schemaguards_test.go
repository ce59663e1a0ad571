package transport_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
)

// TestFailingToolWithOutputSchemaReturnsItsError pins that the output
// schema binds a tool's results, not its errors: a tool that declares an
// outputSchema and fails answers isError with text only, as the spec has
// tool errors do, and the caller must get that error result (for the model
// to read and correct), not an OutputSchemaError about the missing
// structuredContent that hides what went wrong.
func TestFailingToolWithOutputSchemaReturnsItsError(t *testing.T) {
	const why = "the file \"rapport (final).txt\" was not found\nin /srv/données — check the name"
	srv := mcptest.New(mcptest.Options{})
	if err := srv.AddTool(mcp.Tool{Name: "count", OutputSchema: json.RawMessage(countSchema)}, func(context.Context, *mcptest.CallRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{mcp.TextContent(why)}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	sctx, scancel := context.WithCancel(context.Background())
	conn, wait := srv.Pipe(sctx)
	s := connect(t, conn, nil)
	t.Cleanup(func() { s.Close(); scancel(); wait() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Listed: the engine knows the tool's output schema.
	if _, err := s.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "count", Arguments: json.RawMessage(`{"path":"rapport (final).txt"}`)})
	if err != nil {
		t.Fatalf("a failing tool's error result was replaced by: %v", err)
	}
	if !res.IsError || res.Text() != why {
		t.Fatalf("result isError=%v text %q, want the tool's error %q", res.IsError, res.Text(), why)
	}
}

// TestRelistedOutputSchemaReplacesTheCompiledOne pins that a tool's
// output schema is the one last listed: the engine compiles a schema once
// and keeps it, and it kept using the first schema it compiled after a
// new listing changed the tool's schema, refusing results that conform to
// the new one.
func TestRelistedOutputSchemaReplacesTheCompiledOne(t *testing.T) {
	const (
		schemaA = `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`
		schemaB = `{"type":"object","properties":{"n":{"type":"string"}},"required":["n"]}`
	)
	srv := mcptest.New(mcptest.Options{})
	if err := srv.AddTool(mcp.Tool{Name: "count", OutputSchema: json.RawMessage(schemaA)}, structuredTool); err != nil {
		t.Fatal(err)
	}
	sctx, scancel := context.WithCancel(context.Background())
	conn, wait := srv.Pipe(sctx)
	// On a legacy revision the server pushes list_changed as it happens.
	// On 2026-07-28 it pushes only on the session's listen stream, which
	// opens in the background after Connect, so a change made at once
	// could come before the stream and never be sent.
	s := connect(t, conn, &transport.Options{ProtocolVersion: mcp.Version20251125})
	t.Cleanup(func() { s.Close(); scancel(); wait() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	changed := make(chan struct{}, 1)
	unsubscribe := s.Subscribe(func(n mcp.Notification) {
		if n.Method == mcp.NotificationToolsListChanged {
			select {
			case changed <- struct{}{}:
			default:
			}
		}
	})
	defer unsubscribe()
	call := func(args string) error {
		_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "count", Arguments: json.RawMessage(args)})
		return err
	}

	if _, err := s.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	// Compiles and uses schema A.
	if err := call(`{"n":3}`); err != nil {
		t.Fatalf("output valid under the listed schema: %v", err)
	}
	// The server changes the tool's schema and says so; the client lists
	// the tools again.
	if err := srv.AddTool(mcp.Tool{Name: "count", OutputSchema: json.RawMessage(schemaB)}, structuredTool); err != nil {
		t.Fatal(err)
	}
	if err := srv.NotifyToolsListChanged(ctx); err != nil {
		t.Fatal(err)
	}
	within(t, changed, "notifications/tools/list_changed")
	if _, err := s.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	if err := call(`{"n":"trois — «3»\n\"three\""}`); err != nil {
		t.Fatalf("output valid under the schema listed last was checked against the old one: %v", err)
	}
	// And schema A no longer applies.
	var oe *transport.OutputSchemaError
	if err := call(`{"n":3}`); !errors.As(err, &oe) {
		t.Fatalf("output valid only under the old schema: err = %v, want an OutputSchemaError", err)
	}
}
