package mcpgrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/structpb"

	mcpgrpc "github.com/tako-mcp/tako/grpc"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	pb "github.com/tako-mcp/tako/proto/mcppb"
	"github.com/tako-mcp/tako/transport"
)

// The Client is a transport.Caller: raw results in the protocol's JSON,
// each list whole, junk params a -32602, and a method the service has no
// RPC for an ErrCapability.
func TestClientCall(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{PageSize: 2})
	c, _ := plainBridge(t, srv, "", transport.Handlers{})
	ctx := context.Background()

	var raw json.RawMessage
	if err := transport.Call(ctx, c, mcp.MethodToolsList, nil, &raw); err != nil {
		t.Fatal(err)
	}
	var list map[string]json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatalf("tools/list result %s: %v", raw, err)
	}
	var tools []mcp.Tool
	if err := json.Unmarshal(list["tools"], &tools); err != nil {
		t.Fatal(err)
	}
	if _, ok := list["nextCursor"]; ok || len(tools) != len(srv.Tools()) {
		t.Errorf("tools/list: %d tools (the server has %d), members %v", len(tools), len(srv.Tools()), keys(list))
	}

	if err := c.Call(ctx, mcp.MethodToolsCall, &mcp.CallToolParams{Name: mcptest.ToolAdd, Arguments: json.RawMessage(`{"a":2,"b":3}`)}, &raw); err != nil {
		t.Fatal(err)
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil || res.Text() != "5" || string(res.StructuredContent) != `{"sum":5}` {
		t.Errorf("tools/call add = %s (%v)", raw, err)
	}
	// Raw params, as a program forwarding a request has them.
	var typed mcp.CallToolResult
	if err := c.Call(ctx, mcp.MethodToolsCall, json.RawMessage(`{"name":"echo","arguments":{"message":"hi"}}`), &typed); err != nil || typed.Text() != "hi" {
		t.Errorf("tools/call echo = %+v, %v", typed, err)
	}

	err := c.Call(ctx, mcp.MethodToolsCall, json.RawMessage(`{"name":7}`), nil)
	var rpcErr *mcp.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeInvalidParams {
		t.Errorf("junk params: %v, want -32602", err)
	}
	if err := c.Call(ctx, mcp.MethodResourcesSubscribe, map[string]string{"uri": "x"}, nil); !errors.Is(err, transport.ErrCapability) {
		t.Errorf("resources/subscribe: %v, want ErrCapability", err)
	}
	c.Close()
	if err := c.Call(ctx, mcp.MethodToolsList, nil, nil); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("after Close: %v, want ErrClosed", err)
	}
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A dependent request no handler serves fails the call with ErrCapability
// and the engine's words, the same on every transport.
func TestDependentRequestWithoutHandler(t *testing.T) {
	for _, version := range []string{mcp.Version20251125, mcp.Version20260728} {
		t.Run(version, func(t *testing.T) {
			srv := mcptest.NewReference(mcptest.Options{})
			c, _ := plainBridge(t, srv, version, transport.Handlers{})
			_, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: mcptest.ToolSample, Arguments: json.RawMessage(`{"prompt":"hi"}`)})
			if !errors.Is(err, transport.ErrCapability) || !strings.Contains(err.Error(), "no sampling handler is registered on this client") {
				t.Fatalf("err = %v, want ErrCapability saying no sampling handler is registered", err)
			}
		})
	}
}

// A 16 MiB tool result, four times grpc-go's default cap, arrives with
// default options on both ends.
func TestLargeResultWithDefaults(t *testing.T) {
	const size = 16 << 20
	srv := mcptest.NewReference(mcptest.Options{})
	c, _ := plainBridge(t, srv, "", transport.Handlers{})
	res, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: mcptest.ToolBig, Arguments: json.RawMessage(`{"bytes":16777216}`)})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Text(); len(text) != size || strings.Trim(text, "x") != "" {
		t.Fatalf("big: %d bytes, want %d of 'x'", len(text), size)
	}
}

// MaxMessageSize caps what the client accepts.
func TestMaxMessageSize(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{})
	backend := referenceBackend(t, srv, transport.Handlers{})
	addr, _ := startBridge(t, backend, &mcpgrpc.ServerOptions{InsecurePlaintext: true})
	c, err := mcpgrpc.Dial(context.Background(), addr, &mcpgrpc.Options{InsecurePlaintext: true, MaxMessageSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.CallTool(context.Background(), &mcp.CallToolParams{Name: mcptest.ToolBig, Arguments: json.RawMessage(`{"bytes":2097152}`)})
	if !errors.Is(err, transport.ErrMessageTooLarge) {
		t.Fatalf("2 MiB result over a 1 MiB cap: %v, want ErrMessageTooLarge", err)
	}
	res, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: mcptest.ToolBig, Arguments: json.RawMessage(`{"bytes":1000}`)})
	if err != nil || len(res.Text()) != 1000 {
		t.Fatalf("small result after a refused one: %v", err)
	}
}

// CallTimeout bounds a call whose context has no deadline.
func TestCallTimeout(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{})
	backend := referenceBackend(t, srv, transport.Handlers{})
	addr, _ := startBridge(t, backend, &mcpgrpc.ServerOptions{InsecurePlaintext: true})
	c, err := mcpgrpc.Dial(context.Background(), addr, &mcpgrpc.Options{InsecurePlaintext: true, CallTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	_, err = c.CallTool(context.Background(), &mcp.CallToolParams{Name: mcptest.ToolSleep, Arguments: json.RawMessage(`{"ms":60000}`)})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > bound {
		t.Errorf("took %v", d)
	}
}

// askingServer answers every CallTool with another dependent request.
type askingServer struct {
	pb.UnimplementedMcpServer
	calls atomic.Int32
}

func (s *askingServer) CallTool(ctx context.Context, req *pb.CallToolRequest) (*pb.CallToolResponse, error) {
	n := s.calls.Add(1)
	resume, _ := structpb.NewStruct(map[string]any{"n": float64(n)})
	return &pb.CallToolResponse{Common: &pb.ResponseFields{
		ResumeData:        resume,
		DependentRequests: map[string]*pb.ServerInitiatedRequest{"r": {ListRootsRequest: &pb.ListRootsRequest{}}},
	}}, nil
}

// A server that never stops asking fails the call after
// transport.MaxInputRounds rounds, with an error wrapping ErrProtocol.
func TestDependentRoundsBounded(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	fake := &askingServer{}
	pb.RegisterMcpServer(gs, fake)
	done := make(chan struct{})
	go func() { defer close(done); gs.Serve(lis) }()
	defer func() { gs.Stop(); <-done }()

	c, err := mcpgrpc.Dial(context.Background(), lis.Addr().String(), &mcpgrpc.Options{InsecurePlaintext: true, SkipProbe: true,
		Handlers: transport.Handlers{Roots: func(context.Context) ([]mcp.Root, error) { return nil, nil }}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.CallTool(context.Background(), &mcp.CallToolParams{Name: "t"})
	if !errors.Is(err, transport.ErrProtocol) {
		t.Fatalf("err = %v, want ErrProtocol", err)
	}
	if n := fake.calls.Load(); n != transport.MaxInputRounds+1 {
		t.Errorf("the server was called %d times, want %d", n, transport.MaxInputRounds+1)
	}
}
