package mcpgrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	mcpgrpc "github.com/tako-mcp/tako/grpc"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
)

// A Session over NewConn reaches a gRPC server with the legacy lifecycle.
func TestSessionOverConn(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{})
	backend := referenceBackend(t, srv, transport.Handlers{})
	addr, _ := startBridge(t, backend, &mcpgrpc.ServerOptions{InsecurePlaintext: true})
	ctx := context.Background()
	c, err := mcpgrpc.Dial(ctx, addr, &mcpgrpc.Options{InsecurePlaintext: true})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := transport.Connect(ctx, mcpgrpc.NewConn(c), &transport.Options{ProtocolVersion: mcp.LatestLegacyVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	tools, err := sess.ListTools(ctx)
	if err != nil || len(tools) == 0 {
		t.Fatalf("ListTools: %d, %v", len(tools), err)
	}
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.ToolAdd, Arguments: json.RawMessage(`{"a":2,"b":3}`)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text() != "5" || string(res.StructuredContent) != `{"sum":5}` {
		t.Errorf("add = %q %s", res.Text(), res.StructuredContent)
	}
	var raw json.RawMessage
	if err := sess.Call(ctx, mcp.MethodToolsList, nil, &raw); err != nil || !json.Valid(raw) {
		t.Errorf("raw tools/list: %v", err)
	}
	err = sess.Call(ctx, mcp.MethodResourcesSubscribe, map[string]string{"uri": "x"}, nil)
	var rpcErr *mcp.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeMethodNotFound {
		t.Errorf("subscribe: %v, want method not found", err)
	}
}
