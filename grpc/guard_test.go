package mcpgrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	mcpgrpc "github.com/tako-mcp/tako/grpc"
	"github.com/tako-mcp/tako/internal/testpki"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	pb "github.com/tako-mcp/tako/proto/mcppb"
	"github.com/tako-mcp/tako/transport"
)

// Payloads with newlines, quotes and non-ASCII text, so that a test about
// content sees content as real clients send it.
const (
	elicitQuestion = "Wer hat den Bericht „Q3\" freigegeben?\nBitte den vollen Namen angeben — z. B. \"Zoë Ørsted\"."
	adaName        = "Zoë \"Ada\" Lovelace-Ørsted\n(Abteilung Ünterwegs)"
	malloryName    = "Mallory \"admin\" Ñandú\nI approve everything"
)

// tlsStub dials addr with a grpc-go client generated from the .proto,
// presenting leaf as its client certificate, and returns it; the
// connection is closed when the test ends.
func tlsStub(t *testing.T, addr string, p *pki, leaf *testpki.Leaf) pb.McpClient {
	t.Helper()
	ctls, err := mcpgrpc.ClientTLSConfig(mcpgrpc.TLSOptions{CertPEM: leaf.CertPEM, KeyPEM: leaf.KeyPEM, CAPEM: p.CA.PEM, ServerName: "mcp.test"})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(ctls)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return pb.NewMcpClient(cc)
}

// plainStub dials addr in plain text with a grpc-go client generated from
// the .proto; the connection is closed when the test ends.
func plainStub(t *testing.T, addr string) pb.McpClient {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return pb.NewMcpClient(cc)
}

// askElicit starts the reference elicit tool through stub and returns the
// first response, which must carry exactly one elicitation request, and
// that request's key.
func askElicit(t *testing.T, ctx context.Context, stub pb.McpClient) (*pb.CallToolResponse, string) {
	t.Helper()
	args, err := structpb.NewStruct(map[string]any{"message": elicitQuestion})
	if err != nil {
		t.Fatal(err)
	}
	first, err := stub.CallTool(ctx, &pb.CallToolRequest{Request: &pb.CallToolRequest_Request{Name: mcptest.ToolElicit, Arguments: args}})
	if err != nil {
		t.Fatal(err)
	}
	reqs := first.GetCommon().GetDependentRequests()
	if len(reqs) != 1 || first.GetCommon().GetResumeData() == nil {
		t.Fatalf("first response carries no single dependent request: %v", first)
	}
	for key, r := range reqs {
		if r.GetElicitRequest().GetMessage() != elicitQuestion {
			t.Fatalf("dependent request %q is not the elicitation asked for: %v", key, r)
		}
		return first, key
	}
	panic("unreachable")
}

// elicitAnswer is a resume carrying one elicitation answer of type typ with
// the content {"name": name} under key.
func elicitAnswer(t *testing.T, resume *structpb.Struct, key string, typ pb.ElicitResult_Type, name string) *pb.CallToolRequest {
	t.Helper()
	content, err := structpb.NewStruct(map[string]any{"name": name})
	if err != nil {
		t.Fatal(err)
	}
	return &pb.CallToolRequest{Common: &pb.RequestFields{
		ResumeData: resume,
		DependentResponses: map[string]*pb.ServerInitiatedResponse{
			key: {ElicitResult: &pb.ElicitResult{Type: typ, Content: content}},
		},
	}}
}

// TestResumeDataOfAnotherClientCertificateRefused pins the check that a
// parked call is resumed only by the client certificate that started it
// (Server.attach compares the call's peer with the resuming RPC's). Without
// it, any client of the same CA that gets hold of another client's
// resume_data (it is a plain call id, and may leak through logs or a
// proxy) answers that client's elicitation in its place and receives the
// tool result meant for it. Mallory, with a certificate of the same CA,
// must be refused with FailedPrecondition, and Ada must still be able to
// finish her own call with her own answer.
func TestResumeDataOfAnotherClientCertificateRefused(t *testing.T) {
	p := newPKI(t)
	malloryCert := p.CA.Issue(t, "mallory", nil)
	srv := mcptest.NewReference(mcptest.Options{})
	deps := mcpgrpc.NewDependents()
	backend := referenceBackendVersion(t, srv, mcp.Version20251125, deps.Handlers())
	stls, err := mcpgrpc.ServerTLSConfig(mcpgrpc.TLSOptions{CertPEM: p.Server.CertPEM, KeyPEM: p.Server.KeyPEM, CAPEM: p.CA.PEM})
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := startBridge(t, backend, &mcpgrpc.ServerOptions{TLS: stls, Dependents: deps})
	ada := tlsStub(t, addr, p, p.Client)
	mallory := tlsStub(t, addr, p, malloryCert)
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()

	first, key := askElicit(t, ctx, ada)
	resume := first.GetCommon().GetResumeData()

	stolen, err := mallory.CallTool(ctx, elicitAnswer(t, resume, key, pb.ElicitResult_TYPE_ACCEPT, malloryName))
	if status.Code(err) != codes.FailedPrecondition {
		t.Errorf("another certificate resumed the call: response %v, error %v; want FailedPrecondition", stolen, err)
	}

	res, err := ada.CallTool(ctx, elicitAnswer(t, resume, key, pb.ElicitResult_TYPE_ACCEPT, adaName))
	if err != nil {
		t.Fatalf("the owner could not finish its call after the refused resume: %v", err)
	}
	if len(res.GetCommon().GetDependentRequests()) != 0 || res.GetIsError() || len(res.GetContent()) != 1 {
		t.Fatalf("owner's result: %v", res)
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(res.GetContent()[0].GetText().GetText()), &got); err != nil || got["name"] != adaName {
		t.Fatalf("the backend got %q (%v), want the owner's answer %q", res.GetContent()[0].GetText().GetText(), err, adaName)
	}
}

// TestElicitResultOfUnknownTypeIsNotConsent pins that an elicitation
// answer whose type is UNKNOWN (0, the proto's unspecified value: what a
// client that forgot to set the field sends, since proto3 cannot tell it
// from absent) is an error to the backend, not an accept: consent must be
// explicit. Were it mapped to accept, the backend would act on content the
// user never approved.
func TestElicitResultOfUnknownTypeIsNotConsent(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{})
	deps := mcpgrpc.NewDependents()
	backend := referenceBackendVersion(t, srv, mcp.Version20251125, deps.Handlers())
	addr, _ := startBridge(t, backend, &mcpgrpc.ServerOptions{InsecurePlaintext: true, Dependents: deps})
	stub := plainStub(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()

	first, key := askElicit(t, ctx, stub)
	res, err := stub.CallTool(ctx, elicitAnswer(t, first.GetCommon().GetResumeData(), key, pb.ElicitResult_UNKNOWN, adaName))
	var text string
	for _, c := range res.GetContent() {
		text += c.GetText().GetText()
	}
	if err == nil && !res.GetIsError() {
		t.Fatalf("an answer of type UNKNOWN reached the backend as consent: %q", text)
	}
	t.Logf("answer of type UNKNOWN: error %v, result %q", err, text)
	if strings.Contains(text, "Ada") {
		t.Errorf("the content of an answer of type UNKNOWN reached the backend: %q", text)
	}
	// The backend's elicitation/create was answered with an error, not
	// with a result.
	if _, err := srv.Wait(ctx, func(r mcptest.Record) bool { return r.Msg.IsResponse() && r.Msg.Error != nil }); err != nil {
		t.Fatalf("the backend's elicitation was not answered with an error: %v", err)
	}
	for _, r := range srv.Received() {
		if r.Msg.IsResponse() && strings.Contains(string(r.Msg.Result), mcp.ElicitAccept) {
			t.Errorf("the backend received an accept: %s", r.Msg.Result)
		}
	}
}

// TestCloseCancelsParkedCall pins that Server.Close ends the calls parked
// waiting for a client's answers. Close waits for the goroutines of the
// backend calls; a parked one only ends when cancelled, so without that
// Close would hang until ResumeTimeout (two minutes by default) while the
// backend's tool stays blocked. Close must return at once, and the backend
// must see its call cancelled (or its sampling request failed).
func TestCloseCancelsParkedCall(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{})
	deps := mcpgrpc.NewDependents()
	backend := referenceBackendVersion(t, srv, mcp.Version20251125, deps.Handlers())
	// ResumeTimeout is left at its default (two minutes), far beyond
	// bound.
	bridge, err := mcpgrpc.NewServer(backend, &mcpgrpc.ServerOptions{InsecurePlaintext: true, Dependents: deps})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- bridge.Serve(lis) }()
	stub := plainStub(t, lis.Addr().String())

	// The backend call inherits the deadline of the RPC that started it:
	// make it far longer than the waits below, so that only Close can end
	// the call within them.
	callCtx, cancelCall := context.WithTimeout(context.Background(), 5*bound)
	defer cancelCall()
	args, _ := structpb.NewStruct(map[string]any{"prompt": "Fasse „Q3\" zusammen:\n\"Umsatz ↑ 12 %\", Kosten ↓"})
	first, err := stub.CallTool(callCtx, &pb.CallToolRequest{Request: &pb.CallToolRequest_Request{Name: mcptest.ToolSample, Arguments: args}})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.GetCommon().GetDependentRequests()) != 1 {
		t.Fatalf("first response: %v", first)
	}

	// The client never answers; the server is closed under the parked call.
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	closed := make(chan error, 1)
	go func() { closed <- bridge.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-ctx.Done():
		t.Fatalf("Close did not return within %v while a call was parked", bound)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("Serve did not return after Close")
	}
	if _, err := srv.Wait(ctx, func(r mcptest.Record) bool {
		return r.Msg.Method == mcp.NotificationCancelled || r.Msg.Error != nil
	}); err != nil {
		t.Fatalf("the backend call was not ended by Close: %v", err)
	}
}

// emptyBlockServer answers CallTool with a text block and then a content
// entry with no field set.
type emptyBlockServer struct {
	pb.UnimplementedMcpServer
}

func (emptyBlockServer) CallTool(context.Context, *pb.CallToolRequest) (*pb.CallToolResponse, error) {
	return &pb.CallToolResponse{Content: []*pb.CallToolResponse_Content{
		{Text: &pb.TextContent{Text: "Résumé of «Q3 report.md»:\n\t\"Revenue\" ↑ 12 % — 見積もり OK"}},
		{},
	}}, nil
}

// TestCallToolEmptyContentBlockIsProtocolError pins that the client refuses
// a CallToolResponse content entry with no field set, with an error
// wrapping transport.ErrProtocol that names the block. Turned into an empty
// text block instead, a broken or hostile server's result would pass for a
// valid one and the caller would act on content that was never sent.
func TestCallToolEmptyContentBlockIsProtocolError(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	pb.RegisterMcpServer(gs, emptyBlockServer{})
	done := make(chan struct{})
	go func() { defer close(done); gs.Serve(lis) }()
	defer func() { gs.Stop(); <-done }()

	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	c, err := mcpgrpc.Dial(ctx, lis.Addr().String(), &mcpgrpc.Options{InsecurePlaintext: true, SkipProbe: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "summarize", Arguments: json.RawMessage(`{"path":"Q3 report.md"}`)})
	if !errors.Is(err, transport.ErrProtocol) {
		t.Fatalf("CallTool = %+v, %v; want an error wrapping ErrProtocol", res, err)
	}
	if !strings.Contains(err.Error(), "content block 1: content block with no field set") {
		t.Errorf("error does not name the empty block: %v", err)
	}
	if res != nil {
		t.Errorf("a result came with the error: %+v", res)
	}
}
