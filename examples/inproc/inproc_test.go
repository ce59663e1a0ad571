package inproc_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tako-mcp/tako/examples/inproc"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/registry"
	"github.com/tako-mcp/tako/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wordCount is a Go function offered as a tool.
var wordCount = inproc.Tool{
	Tool: mcp.Tool{
		Name:        "word_count",
		Description: "Counts the words of a text.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	},
	Run: func(_ context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
		var a struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(strconv.Itoa(len(strings.Fields(a.Text))))}}, nil
	},
}

// wait blocks until its call is cancelled, to show Close ending a call.
var wait = inproc.Tool{
	Tool: mcp.Tool{Name: "wait", InputSchema: json.RawMessage(`{"type":"object"}`)},
	Run: func(ctx context.Context, _ json.RawMessage) (*mcp.CallToolResult, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	},
}

func limit(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestRegistryBesideMCPServer registers the in-process Transport beside
// the reference MCP server (a Session over a pipe) and calls a tool of
// each through the registry.
func TestRegistryBesideMCPServer(t *testing.T) {
	ctx := limit(t)
	conn, served := mcptest.NewReference(mcptest.Options{}).Pipe(ctx)
	defer served() // after reg.Close, which closes the session and so the pipe
	sess, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := registry.New(registry.Options{})
	defer reg.Close()

	if err := reg.AddServer(ctx, "text", inproc.New("text", wordCount), nil); err != nil {
		t.Fatal(err)
	}
	if err := reg.AddServer(ctx, "reference", sess, nil); err != nil {
		t.Fatal(err)
	}

	defs := map[string]string{}
	for _, d := range reg.Tools() {
		defs[d.Name] = d.Server
	}
	if defs["word_count"] != "text" || defs["echo"] != "reference" {
		t.Fatalf("tools by server: %v", defs)
	}
	for _, tc := range []struct{ tool, args, want string }{
		{"word_count", `{"text":"one two three"}`, "3"},
		{"echo", `{"message":"from the MCP server"}`, "from the MCP server"},
	} {
		res := reg.Dispatch(ctx, registry.Call{ID: tc.tool, Name: tc.tool, Arguments: json.RawMessage(tc.args)})
		if res.IsError || res.Text() != tc.want {
			t.Errorf("%s: %q (isError %v), want %q", tc.tool, res.Text(), res.IsError, tc.want)
		}
	}
	// The registry checks arguments against the tool's schema, whoever
	// owns it.
	if res := reg.Dispatch(ctx, registry.Call{Name: "word_count", Arguments: json.RawMessage(`{}`)}); !res.IsError {
		t.Errorf("word_count without text: %q, want an error result", res.Text())
	}
}

// TestClose checks the Transport contract for Close: a call in flight and
// every later call fail with ErrClosed.
func TestClose(t *testing.T) {
	ctx := limit(t)
	s := inproc.New("text", wordCount, wait)
	errc := make(chan error, 1)
	go func() {
		_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "wait"})
		errc <- err
	}()
	s.Close()
	s.Close()
	if err := <-errc; !errors.Is(err, transport.ErrClosed) {
		t.Errorf("call in flight at Close: %v, want ErrClosed", err)
	}
	if _, err := s.ListTools(ctx); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("ListTools after Close: %v, want ErrClosed", err)
	}
	if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "word_count"}); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("CallTool after Close: %v, want ErrClosed", err)
	}
}

// TestRawCall: transport.Call works on a Transport that does not
// implement Caller, through its typed methods.
func TestRawCall(t *testing.T) {
	ctx := limit(t)
	s := inproc.New("text", wordCount)
	defer s.Close()
	var raw json.RawMessage
	if err := transport.Call(ctx, s, mcp.MethodToolsList, nil, &raw); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"word_count"`) || strings.Contains(string(raw), "nextCursor") {
		t.Errorf("tools/list: %s", raw)
	}
	var rpcErr *mcp.Error
	if err := transport.Call(ctx, s, mcp.MethodToolsCall, map[string]any{"name": "nope"}, &raw); !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeInvalidParams {
		t.Errorf("unknown tool: %v, want -32602", err)
	}
}
