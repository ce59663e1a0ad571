package mcpgrpc_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	mcpgrpc "github.com/tako-mcp/tako/grpc"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	pb "github.com/tako-mcp/tako/proto/mcppb"
	"github.com/tako-mcp/tako/transport"
)

// The dependent-request round trip as the proto describes it, driven by a
// plain grpc-go stub: the first response carries dependent_requests and
// resume_data, the retry carries dependent_responses and the same
// resume_data, and the second response the result.
func TestStubDependentRoundTrip(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{})
	deps := mcpgrpc.NewDependents()
	backend := referenceBackendVersion(t, srv, mcp.Version20251125, deps.Handlers())
	addr, _ := startBridge(t, backend, &mcpgrpc.ServerOptions{InsecurePlaintext: true, Dependents: deps})
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	stub := pb.NewMcpClient(cc)
	ctx := context.Background()

	args, _ := structpb.NewStruct(map[string]any{"prompt": "hello"})
	first, err := stub.CallTool(ctx, &pb.CallToolRequest{Request: &pb.CallToolRequest_Request{Name: mcptest.ToolSample, Arguments: args}})
	if err != nil {
		t.Fatal(err)
	}
	deps1 := first.GetCommon().GetDependentRequests()
	if len(deps1) != 1 || first.GetCommon().GetResumeData() == nil {
		t.Fatalf("first response: %v", first)
	}
	answers := map[string]*pb.ServerInitiatedResponse{}
	for key, r := range deps1 {
		if r.GetSamplingCreateMessage() == nil {
			t.Fatalf("dependent request %q is not sampling: %v", key, r)
		}
		answers[key] = &pb.ServerInitiatedResponse{SamplingCreateMessageResult: &pb.SamplingCreateMessageResult{
			Message: &pb.SamplingMessage{Role: pb.Role_ROLE_ASSISTANT, Text: &pb.TextContent{Text: "from the stub"}},
			Model:   "stub-model",
		}}
	}
	second, err := stub.CallTool(ctx, &pb.CallToolRequest{Common: &pb.RequestFields{
		DependentResponses: answers, ResumeData: first.GetCommon().GetResumeData(),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(second.GetCommon().GetDependentRequests()) != 0 || len(second.GetContent()) != 1 || second.GetContent()[0].GetText().GetText() != "from the stub" {
		t.Fatalf("second response: %v", second)
	}

	// The same resume_data again names nothing: the call is finished.
	_, err = stub.CallTool(ctx, &pb.CallToolRequest{Common: &pb.RequestFields{ResumeData: first.GetCommon().GetResumeData()}})
	if status.Code(err) != codes.FailedPrecondition {
		t.Errorf("stale resume_data: %v, want FailedPrecondition", err)
	}
	// A first attempt without a tool name is a bad request.
	_, err = stub.CallTool(ctx, &pb.CallToolRequest{})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("no name: %v, want InvalidArgument", err)
	}
}

func referenceBackendVersion(t *testing.T, srv *mcptest.Server, version string, h transport.Handlers) *transport.Session {
	t.Helper()
	ctx := context.Background()
	conn, wait := srv.Pipe(ctx)
	sess, err := transport.Connect(ctx, conn, &transport.Options{ProtocolVersion: version, Handlers: h})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sess.Close()
		wait()
	})
	return sess
}

// A client that never comes back with the answers: after ResumeTimeout the
// bridge ends the backend call, and the resume_data names nothing.
func TestResumeTimeoutCancelsBackendCall(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{})
	deps := mcpgrpc.NewDependents()
	backend := referenceBackendVersion(t, srv, mcp.Version20251125, deps.Handlers())
	addr, _ := startBridge(t, backend, &mcpgrpc.ServerOptions{InsecurePlaintext: true, Dependents: deps, ResumeTimeout: 50 * time.Millisecond})
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	stub := pb.NewMcpClient(cc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args, _ := structpb.NewStruct(map[string]any{"prompt": "hello"})
	first, err := stub.CallTool(ctx, &pb.CallToolRequest{Request: &pb.CallToolRequest_Request{Name: mcptest.ToolSample, Arguments: args}})
	if err != nil || len(first.GetCommon().GetDependentRequests()) != 1 {
		t.Fatalf("first: %v, %v", first, err)
	}
	// When the call expires, the backend sees the tools/call cancelled, or,
	// when the tool's answer to the failed sampling request wins that race,
	// the error answer to its sampling request.
	if _, err := srv.Wait(ctx, func(r mcptest.Record) bool {
		return r.Msg.Method == mcp.NotificationCancelled || r.Msg.Error != nil
	}); err != nil {
		t.Fatalf("the backend call never ended: %v", err)
	}
	_, err = stub.CallTool(ctx, &pb.CallToolRequest{Common: &pb.RequestFields{ResumeData: first.GetCommon().GetResumeData()}})
	if status.Code(err) != codes.FailedPrecondition {
		t.Errorf("resume after expiry: %v, want FailedPrecondition", err)
	}
}
