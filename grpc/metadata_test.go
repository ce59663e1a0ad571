package mcpgrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	mcpgrpc "github.com/tako-mcp/tako/grpc"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
)

// Each call carries its routing key (mcp_tool, mcp_prompt, mcp_resource),
// the token and the configured metadata, so that a proxy can route and
// authorize without decoding the body.
func TestPerCallMetadata(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]metadata.MD{}
	record := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		mu.Lock()
		seen[info.FullMethod] = md
		mu.Unlock()
		return h(ctx, req)
	}
	backend := referenceBackend(t, mcptest.NewReference(mcptest.Options{}), transport.Handlers{})
	addr, _ := startBridge(t, backend, &mcpgrpc.ServerOptions{InsecurePlaintext: true, GRPCOptions: []grpc.ServerOption{grpc.UnaryInterceptor(record)}})
	ctx := context.Background()
	c, err := mcpgrpc.Dial(ctx, addr, &mcpgrpc.Options{InsecurePlaintext: true, SkipProbe: true, Token: "s3cret", Metadata: map[string]string{"x-team": "blue"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	if _, err := c.CallTool(metadata.AppendToOutgoingContext(ctx, "x-request", "42"), &mcp.CallToolParams{Name: mcptest.ToolEcho, Arguments: json.RawMessage(`{"message":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	// The reference server has no prompts or resources: these fail, but
	// their metadata has been sent.
	_, _ = c.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greeting"})
	_, _ = c.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///tmp/ünïcode.txt"})
	_, _ = c.Complete(ctx, &mcp.CompleteParams{Ref: mcp.CompleteRef{Type: "ref/prompt", Name: "greeting"}, Argument: mcp.CompleteArgument{Name: "a", Value: "b"}})

	mu.Lock()
	defer mu.Unlock()
	want := []struct{ method, key, value string }{
		{"CallTool", "mcp_tool", "echo"},
		{"CallTool", "authorization", "Bearer s3cret"},
		{"CallTool", "x-team", "blue"},
		{"CallTool", "x-request", "42"},
		{"GetPrompt", "mcp_prompt", "greeting"},
		{"ReadResource", "mcp_resource", "file:%2F%2F%2Ftmp%2F%C3%BCn%C3%AFcode.txt"},
		{"Complete", "mcp_resource", "greeting"},
	}
	for _, w := range want {
		md := seen["/model_context_protocol.Mcp/"+w.method]
		if got := md.Get(w.key); len(got) != 1 || got[0] != w.value {
			t.Errorf("%s %s = %q, want %q", w.method, w.key, got, w.value)
		}
	}
}

// A feature the server lacks: its calls fail with ErrCapability, its list
// is empty, as with a Session.
func TestUnimplementedIsCapability(t *testing.T) {
	backend := referenceBackend(t, mcptest.NewReference(mcptest.Options{}), transport.Handlers{})
	addr, _ := startBridge(t, backend, &mcpgrpc.ServerOptions{InsecurePlaintext: true})
	c, err := mcpgrpc.Dial(context.Background(), addr, &mcpgrpc.Options{InsecurePlaintext: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "p"}); !errors.Is(err, transport.ErrCapability) {
		t.Errorf("GetPrompt on a server without prompts: %v, want ErrCapability", err)
	}
	if list, err := c.ListPrompts(context.Background()); err != nil || len(list) != 0 {
		t.Errorf("ListPrompts on a server without prompts: %v, %v; want an empty list", list, err)
	}
}
