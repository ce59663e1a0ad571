package mcpgrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	mcpgrpc "github.com/tako-mcp/tako/grpc"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	pb "github.com/tako-mcp/tako/proto/mcppb"
)

// TestSamplingEmbeddedResourceRefused pins the embedded half of the check
// in samplingMessageToPB. The service's SamplingMessage has a text, an
// image and an audio field and nothing else: an embedded resource in a
// backend's sampling message has no form there. Converted anyway, the
// message would reach the gRPC client with no content at all, and the
// model would answer a prompt it never saw. The backend's request must be
// refused with InvalidParams naming the reason, and the client must never
// see it as a dependent request.
func TestSamplingEmbeddedResourceRefused(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{})
	sampled := make(chan error, 1)
	err := srv.AddTool(mcp.Tool{Name: "review", Description: "Asks the client's model to review a file."},
		func(ctx context.Context, req *mcptest.CallRequest) (*mcp.CallToolResult, error) {
			content := json.RawMessage(`{"type":"resource","resource":{"uri":"file:///srv/berichte/Q3%20%E2%80%9EEntwurf%E2%80%9C.md","mimeType":"text/markdown","text":"# Bericht „Q3\"\n\nUmsatz ↑ 12 %, Kosten ↓ — \"vorläufig\"\n"}}`)
			_, err := req.Sample(ctx, &mcp.CreateMessageParams{
				Messages:  []mcp.SamplingMessage{{Role: "user", Content: content}},
				MaxTokens: 256,
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
	res, err := stub.CallTool(ctx, &pb.CallToolRequest{Request: &pb.CallToolRequest_Request{Name: "review"}})
	if err != nil {
		t.Fatal(err)
	}
	if reqs := res.GetCommon().GetDependentRequests(); len(reqs) != 0 {
		t.Fatalf("the sampling request with an embedded resource reached the gRPC client: %v", reqs)
	}
	select {
	case err := <-sampled:
		var rpcErr *mcp.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeInvalidParams || !strings.Contains(rpcErr.Message, "no form on the gRPC service") {
			t.Fatalf("the backend's sampling request ended with %v, want InvalidParams saying it has no form on the gRPC service", err)
		}
	case <-ctx.Done():
		t.Fatal("the backend's sampling request was never answered")
	}
}
