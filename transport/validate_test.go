package transport_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
)

// structuredTool answers with its arguments as structuredContent.
func structuredTool(_ context.Context, req *mcptest.CallRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: req.Arguments}, nil
}

func outputServer(t *testing.T, opts *transport.Options, schemas map[string]string) *transport.Session {
	t.Helper()
	srv := mcptest.New(mcptest.Options{})
	for name, schema := range schemas {
		if err := srv.AddTool(mcp.Tool{Name: name, OutputSchema: json.RawMessage(schema)}, structuredTool); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	conn, wait := srv.Pipe(ctx)
	s := connect(t, conn, opts)
	t.Cleanup(func() { s.Close(); cancel(); wait() })
	return s
}

const countSchema = `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`

func TestOutputValidation(t *testing.T) {
	s := outputServer(t, nil, map[string]string{"count": countSchema})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	callCount := func(args string) (*mcp.CallToolResult, error) {
		return s.CallTool(ctx, &mcp.CallToolParams{Name: "count", Arguments: json.RawMessage(args)})
	}
	// Before the tool is listed, the engine lists the tools itself
	// (unlisted.go).
	if _, err := callCount(`{"n":"x"}`); err == nil {
		t.Fatal("a tool called before it was listed is not validated")
	}
	if _, err := s.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := callCount(`{"n":3}`); err != nil {
		t.Fatalf("conforming output: %v", err)
	}
	res, err := callCount(`{"n":"three"}`)
	var oe *transport.OutputSchemaError
	if !errors.As(err, &oe) || oe.Tool != "count" || oe.Err == nil {
		t.Fatalf("err = %v", err)
	}
	if res == nil || string(res.StructuredContent) != `{"n":"three"}` {
		t.Fatalf("the result is not returned with the error: %+v", res)
	}
	// No structuredContent at all, for a tool with an output schema.
	if _, err := callCount(``); !errors.As(err, &oe) {
		t.Fatalf("missing structuredContent: %v", err)
	}
}

func TestOutputValidationOff(t *testing.T) {
	s := outputServer(t, &transport.Options{SkipOutputValidation: true}, map[string]string{"count": countSchema})
	for _, err := range s.Tools(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "count", Arguments: json.RawMessage(`{"n":"x"}`)}); err != nil {
		t.Fatalf("validation ran with SkipOutputValidation: %v", err)
	}
}

// A schema that refers to a network document is not fetched: it cannot be
// used, which is an OutputSchemaError, and the server is never asked.
func TestOutputSchemaRemoteRefNotFetched(t *testing.T) {
	var hits atomic.Int32
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/schema+json")
		w.Write([]byte(`{"type":"object"}`))
	}))
	defer web.Close()
	s := outputServer(t, nil, map[string]string{
		"remote": `{"$ref":"` + web.URL + `/schema.json"}`,
		"local":  `{"$defs":{"n":{"type":"integer"}},"type":"object","properties":{"n":{"$ref":"#/$defs/n"}}}`,
	})
	if _, err := s.ListTools(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "remote", Arguments: json.RawMessage(`{}`)})
	var oe *transport.OutputSchemaError
	if !errors.As(err, &oe) || oe.Tool != "remote" {
		t.Fatalf("err = %v", err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the schema's $ref was fetched %d times", n)
	}
	// A reference inside the document works.
	if _, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "local", Arguments: json.RawMessage(`{"n":"x"}`)}); !errors.As(err, &oe) {
		t.Fatalf("local $ref not followed: %v", err)
	}
}

// TestSelfReferringOutputSchemaDoesNotCrash: a server's output schema
// whose $ref leads back to itself ({"$ref":"#"}) made the validator
// recurse until the stack overflowed, which killed the client process.
// The schema is now refused, and the call says so.
func TestSelfReferringOutputSchemaDoesNotCrash(t *testing.T) {
	s := outputServer(t, nil, map[string]string{
		"loop":   `{"$ref":"#"}`,
		"tangle": `{"$defs":{"a":{"allOf":[{"$ref":"#/$defs/b"}]},"b":{"$ref":"#/$defs/a"}},"type":"object","properties":{"x":{"$ref":"#/$defs/a"}}}`,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"loop", "tangle"} {
		_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(`{"x":{"note":"naïve \"café\"\n"}}`)})
		var oe *transport.OutputSchemaError
		if !errors.As(err, &oe) || oe.Tool != tool || !strings.Contains(err.Error(), "refers to itself without end") {
			t.Errorf("%s: %v, want an OutputSchemaError saying the schema refers to itself", tool, err)
		}
	}
}
