package transport_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// argsRecorder is a Transport that records the arguments of CallTool.
type argsRecorder struct {
	transport.Transport
	got json.RawMessage
}

func (a *argsRecorder) CallTool(_ context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	a.got = p.Arguments
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("ok")}}, nil
}

func TestCallToolWith(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		args any
		want string
	}{
		{nil, `{}`},
		{map[string]any{"a": 2}, `{"a":2}`},
		{struct {
			Message string `json:"message"`
		}{"hi"}, `{"message":"hi"}`},
		{json.RawMessage(`{"x":true}`), `{"x":true}`},
	} {
		rec := &argsRecorder{}
		if _, err := transport.CallToolWith(ctx, rec, "t", tt.args); err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if string(rec.got) != tt.want {
			t.Errorf("%v: sent %s, want %s", tt.args, rec.got, tt.want)
		}
	}
	rec := &argsRecorder{}
	if _, err := transport.CallToolWith(ctx, rec, "t", []int{1}); err == nil || !strings.Contains(err.Error(), "JSON object") || rec.got != nil {
		t.Errorf("an array: err %v, sent %s; want an error and nothing sent", err, rec.got)
	}
}

func TestServerInfoString(t *testing.T) {
	info := transport.ServerInfo{
		ProtocolVersion: "2025-11-25",
		Implementation:  mcp.Implementation{Name: "demo", Version: "1.0"},
		Capabilities:    mcp.ServerCapabilities{Tools: &mcp.ListChangedCapability{}, Logging: &struct{}{}},
	}
	if got, want := info.String(), "demo 1.0 (protocol 2025-11-25; tools, logging)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
