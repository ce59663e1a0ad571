package mcpgrpc_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	mcpgrpc "github.com/tako-mcp/tako/grpc"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	pb "github.com/tako-mcp/tako/proto/mcppb"
)

// TestExpiredCallEndsParkedSamplingRequest pins the call.ctx.Done() case
// of Dependents.park. A legacy (2025-11-25) backend asks for sampling with
// a server-to-client request, whose handler runs on the Session's own
// context: it does not carry the call and is not cancelled when the call
// is. When the gRPC client never comes back with the answer and the call
// expires (ResumeTimeout), only the end of the call can end the parked
// handler. Without it the handler leaks until the backend session closes
// and the backend's sampling request is never answered.
//
// The reference tool would hide this: it cancels its sampling request
// when its tools/call is cancelled, which ends the handler by another
// path. This backend tool, like many real servers, does not pass the
// cancellation of its call on to its own request, so only the bridge's
// answer can end it.
func TestExpiredCallEndsParkedSamplingRequest(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{})
	sampled := make(chan error, 1)
	err := srv.AddTool(mcp.Tool{Name: "draft", Description: "Drafts a reply with the client's model."},
		func(ctx context.Context, req *mcptest.CallRequest) (*mcp.CallToolResult, error) {
			content, _ := json.Marshal(mcp.TextContent("Antworte höflich auf:\n\"Wo bleibt der Bericht „Q3\"?\" — Zoë"))
			_, err := req.Sample(context.WithoutCancel(ctx), &mcp.CreateMessageParams{
				Messages:  []mcp.SamplingMessage{{Role: "user", Content: content}},
				MaxTokens: 128,
			})
			sampled <- err
			return &mcp.CallToolResult{IsError: true}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	deps := mcpgrpc.NewDependents()
	backend := referenceBackendVersion(t, srv, mcp.Version20251125, deps.Handlers())
	addr, _ := startBridge(t, backend, &mcpgrpc.ServerOptions{InsecurePlaintext: true, Dependents: deps, ResumeTimeout: 50 * time.Millisecond})
	stub := plainStub(t, addr)

	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	args, _ := structpb.NewStruct(map[string]any{"topic": "Q3 „Bericht\"\nbitte"})
	first, err := stub.CallTool(ctx, &pb.CallToolRequest{Request: &pb.CallToolRequest_Request{Name: "draft", Arguments: args}})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.GetCommon().GetDependentRequests()) != 1 {
		t.Fatalf("first response carries no single dependent request: %v", first)
	}
	// The client never resumes. Once the call expires, the backend's
	// sampling request must be answered, with an error.
	select {
	case err := <-sampled:
		if err == nil {
			t.Fatal("the backend's sampling request succeeded though nobody answered it")
		}
		if !strings.Contains(err.Error(), "ended before the client answered") {
			t.Errorf("the backend's sampling request failed with %v, want the call's end", err)
		}
	case <-ctx.Done():
		t.Fatalf("the backend's sampling request was still unanswered %v after its call expired: the parked handler leaked", bound)
	}
}
