package mcpgrpc

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tako-mcp/tako/mcp"
	pb "github.com/tako-mcp/tako/proto/mcppb"
	"github.com/tako-mcp/tako/transport"
)

// resumeKey is the member of resume_data that names a parked call.
const resumeKey = "tako_call"

// ServerOptions configure a Server. TLS or InsecurePlaintext is required.
type ServerOptions struct {
	// TLS is the server's TLS configuration, usually from ServerTLSConfig;
	// with a client CA there it requires and verifies client certificates.
	TLS *tls.Config

	// InsecurePlaintext serves without TLS; see Options.InsecurePlaintext.
	InsecurePlaintext bool

	// Dependents, when set, carries the backend's requests to the client
	// (sampling, elicitation) as dependent_requests. Give the backend the
	// handlers of the same Dependents when connecting it.
	Dependents *Dependents

	// MaxMessageSize caps one message in bytes, in both directions, as
	// Options.MaxMessageSize does for the client: zero (or less) means
	// transport.DefaultMaxMessageSize, not grpc-go's 4 MiB.
	MaxMessageSize int

	// ListTTL, when positive, is sent as the ttl of every list response.
	ListTTL time.Duration

	// ResumeTimeout bounds how long a call that returned dependent_requests
	// waits for the client to call again with the answers; then the
	// backend call is cancelled. Zero means 2 minutes.
	ResumeTimeout time.Duration

	// GRPCOptions are added to tako's own server options.
	GRPCOptions []grpc.ServerOption

	// Logger receives diagnostics: questions carried to clients (debug),
	// calls whose client never came back (warn). Nil discards them.
	Logger *slog.Logger
}

// Server serves the MCP gRPC service by forwarding every call to a tako
// Transport: any MCP server tako can reach (a stdio subprocess, Streamable
// HTTP, WebSocket) becomes a gRPC server. It does not own the backend:
// closing the Server leaves the backend to its owner.
type Server struct {
	backend transport.Transport
	opts    ServerOptions
	log     *slog.Logger
	gs      *grpc.Server

	mu     sync.Mutex
	calls  map[string]*pendingCall
	closed bool
	wg     sync.WaitGroup
}

// NewServer returns a Server forwarding to backend.
func NewServer(backend transport.Transport, opts *ServerOptions) (*Server, error) {
	if backend == nil {
		return nil, errors.New("mcpgrpc: NewServer needs a backend")
	}
	var o ServerOptions
	if opts != nil {
		o = *opts
	}
	if o.ResumeTimeout <= 0 {
		o.ResumeTimeout = 2 * time.Minute
	}
	var creds credentials.TransportCredentials
	switch {
	case o.InsecurePlaintext && o.TLS != nil:
		return nil, fmt.Errorf("%w: both TLS and InsecurePlaintext given", ErrTLSConfig)
	case o.InsecurePlaintext:
		creds = insecure.NewCredentials()
	case o.TLS != nil:
		creds = credentials.NewTLS(o.TLS)
	default:
		return nil, fmt.Errorf("%w: no TLS configuration; plain text needs ServerOptions.InsecurePlaintext", ErrTLSConfig)
	}
	s := &Server{backend: backend, opts: o, log: o.Logger, calls: map[string]*pendingCall{}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	size := o.MaxMessageSize
	if size <= 0 {
		size = transport.DefaultMaxMessageSize
	}
	gopts := []grpc.ServerOption{
		grpc.Creds(creds),
		grpc.MaxRecvMsgSize(size),
		grpc.MaxSendMsgSize(size),
		// Permit the pings of tako's client (every 30 s during calls).
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: time.Minute, Timeout: 20 * time.Second}),
	}
	s.gs = grpc.NewServer(append(gopts, o.GRPCOptions...)...)
	pb.RegisterMcpServer(s.gs, &service{s: s})
	return s, nil
}

// Serve accepts connections on lis until Close. It returns nil after Close.
func (s *Server) Serve(lis net.Listener) error {
	err := s.gs.Serve(lis)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

// Close stops the server: open connections are closed, calls in flight fail,
// parked calls are cancelled on the backend, and Close waits for the
// goroutines of those calls. It is idempotent.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	calls := make([]*pendingCall, 0, len(s.calls))
	for _, c := range s.calls {
		calls = append(calls, c)
	}
	s.mu.Unlock()
	for _, c := range calls {
		s.forget(c)
	}
	s.gs.Stop()
	s.wg.Wait()
	return nil
}

// pendingCall is one backend call that may outlive the RPC that started it:
// when the backend asks the client something, the RPC returns
// dependent_requests and the call waits, parked, for the RPC that brings
// the answers.
type pendingCall struct {
	id     string
	peer   string // the client's certificate fingerprint, or ""
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when the backend call returned
	result any
	err    error
	notify chan struct{} // a new question was parked (capacity 1)

	mu      sync.Mutex
	asked   []*parked          // not yet sent to the client
	waiting map[string]*parked // sent, under their keys
	nextKey int
	timer   *time.Timer // cancels the call when no RPC comes back
}

// parked is one question of the backend, waiting for the client's answer.
type parked struct {
	req   *pb.ServerInitiatedRequest
	reply chan *pb.ServerInitiatedResponse // capacity 1; nil means no answer
}

func (c *pendingCall) add(p *parked) {
	c.mu.Lock()
	c.asked = append(c.asked, p)
	c.mu.Unlock()
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

// take moves the questions not yet sent under fresh keys and returns them.
func (c *pendingCall) take() map[string]*pb.ServerInitiatedRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.asked) == 0 {
		return nil
	}
	out := make(map[string]*pb.ServerInitiatedRequest, len(c.asked))
	for _, p := range c.asked {
		c.nextKey++
		key := strconv.Itoa(c.nextKey)
		c.waiting[key] = p
		out[key] = p.req
	}
	c.asked = nil
	return out
}

// answer hands the client's responses to the parked questions. A question
// the client did not answer gets no answer, which the handler reports to
// the backend as an error.
func (c *pendingCall) answer(resps map[string]*pb.ServerInitiatedResponse) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, p := range c.waiting {
		p.reply <- resps[key]
		delete(c.waiting, key)
	}
}

func newCallID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// peerKey identifies the client by its certificate, so that a parked call is
// resumed only by the client that started it.
func peerKey(ctx context.Context) string {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return ""
	}
	ti, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(ti.State.PeerCertificates) == 0 {
		return ""
	}
	sum := sha256.Sum256(ti.State.PeerCertificates[0].Raw)
	return hex.EncodeToString(sum[:])
}

// serve runs one RPC: it starts the backend call (or finds the parked one
// that resume_data names) and waits for the result, a question of the
// backend for the client, or the end of the RPC.
func serve[T any](s *Server, ctx context.Context, common *pb.RequestFields, start func(context.Context) (T, error)) (T, *pb.ResponseFields, error) {
	var zero T
	call, first, err := s.attach(ctx, common, func(ctx context.Context) (any, error) { return start(ctx) })
	if err != nil {
		return zero, nil, err
	}
	for {
		select {
		case <-call.done:
			s.forget(call)
			if call.err != nil {
				return zero, nil, statusOf(ctx, call.err)
			}
			rf := &pb.ResponseFields{}
			if first {
				rf.Instructions = s.backend.ServerInfo().Instructions
			}
			return call.result.(T), rf, nil
		case <-call.notify:
			reqs := call.take()
			if len(reqs) == 0 {
				continue
			}
			resume, _ := structpb.NewStruct(map[string]any{resumeKey: call.id})
			call.mu.Lock()
			call.timer = time.AfterFunc(s.opts.ResumeTimeout, func() {
				s.log.Warn("mcpgrpc: the client did not come back with the answers; cancelling the call", "call", call.id, "after", s.opts.ResumeTimeout)
				s.forget(call)
			})
			s.log.Debug("mcpgrpc: the backend asks the client for input", "call", call.id, "requests", len(reqs))
			call.mu.Unlock()
			return zero, &pb.ResponseFields{DependentRequests: reqs, ResumeData: resume}, nil
		case <-ctx.Done():
			// The RPC's deadline or cancellation ends the call: nobody is
			// left to receive its result.
			call.cancel()
			<-call.done
			s.forget(call)
			return zero, nil, status.FromContextError(ctx.Err()).Err()
		}
	}
}

// resuming reports whether common names a parked call of this server.
func resuming(common *pb.RequestFields) bool {
	_, ok := common.GetResumeData().GetFields()[resumeKey]
	return ok
}

// attach returns the call an RPC is about: the parked one resume_data
// names, or a new one running start on the backend.
func (s *Server) attach(ctx context.Context, common *pb.RequestFields, start func(context.Context) (any, error)) (*pendingCall, bool, error) {
	if resuming(common) {
		id := common.GetResumeData().GetFields()[resumeKey].GetStringValue()
		s.mu.Lock()
		call := s.calls[id]
		s.mu.Unlock()
		if call == nil || call.peer != peerKey(ctx) {
			return nil, false, status.Error(codes.FailedPrecondition, "resume_data names no call waiting for answers (finished, expired or someone else's)")
		}
		call.mu.Lock()
		if call.timer != nil {
			call.timer.Stop()
		}
		call.mu.Unlock()
		call.answer(common.GetDependentResponses())
		return call, false, nil
	}
	cctx, cancel := context.WithCancel(context.Background())
	call := &pendingCall{
		id: newCallID(), peer: peerKey(ctx), ctx: cctx, cancel: cancel,
		done: make(chan struct{}), notify: make(chan struct{}, 1), waiting: map[string]*parked{},
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		cancel()
		return nil, false, status.Error(codes.Unavailable, "server closing")
	}
	s.calls[call.id] = call
	s.wg.Add(1)
	s.mu.Unlock()
	d := s.opts.Dependents
	if d != nil {
		d.register(call)
	}
	go func() {
		defer s.wg.Done()
		defer close(call.done)
		if d != nil {
			defer d.unregister(call)
		}
		// The backend call follows the RPC's deadline (the first one); a
		// later RPC's deadline ends it through the select in serve.
		bctx := context.WithValue(cctx, callKey{}, call)
		if dl, ok := ctx.Deadline(); ok {
			var c context.CancelFunc
			bctx, c = context.WithDeadline(bctx, dl)
			defer c()
		}
		call.result, call.err = start(bctx)
	}()
	return call, true, nil
}

// forget removes call, then cancels it: once the backend sees the
// cancellation, no RPC can resume the call any more.
func (s *Server) forget(call *pendingCall) {
	s.mu.Lock()
	delete(s.calls, call.id)
	s.mu.Unlock()
	call.mu.Lock()
	if call.timer != nil {
		call.timer.Stop()
	}
	call.mu.Unlock()
	call.cancel()
}

func setTrailer(ctx context.Context, md metadata.MD) error { return grpc.SetTrailer(ctx, md) }

func (s *Server) ttl() *durationpb.Duration {
	if s.opts.ListTTL <= 0 {
		return nil
	}
	return durationpb.New(s.opts.ListTTL)
}

// service implements pb.McpServer on top of Server.
type service struct {
	pb.UnimplementedMcpServer
	s *Server
}

func (v *service) ListTools(ctx context.Context, req *pb.ListToolsRequest) (*pb.ListToolsResponse, error) {
	tools, rf, err := serve(v.s, ctx, req.GetCommon(), v.s.backend.ListTools)
	if err != nil || len(rf.GetDependentRequests()) > 0 {
		return &pb.ListToolsResponse{Common: rf}, err
	}
	out := &pb.ListToolsResponse{Common: rf, Ttl: v.s.ttl()}
	for i := range tools {
		t, err := toolToPB(&tools[i])
		if err != nil {
			return nil, status.Error(codes.Internal, "backend: "+err.Error())
		}
		out.Tools = append(out.Tools, t)
	}
	return out, nil
}

func (v *service) CallTool(ctx context.Context, req *pb.CallToolRequest) (*pb.CallToolResponse, error) {
	var params *mcp.CallToolParams
	if !resuming(req.GetCommon()) {
		// A retry may leave the request out; a first attempt may not.
		if req.GetRequest().GetName() == "" {
			return nil, status.Error(codes.InvalidArgument, "CallTool needs request.name")
		}
		args, err := structToRaw(req.GetRequest().GetArguments())
		if err != nil {
			return nil, status.Error(codes.InvalidArgument, err.Error())
		}
		params = &mcp.CallToolParams{Name: req.GetRequest().GetName(), Arguments: args}
	}
	res, rf, err := serve(v.s, ctx, req.GetCommon(), func(ctx context.Context) (*mcp.CallToolResult, error) {
		return v.s.backend.CallTool(ctx, params)
	})
	if err != nil || len(rf.GetDependentRequests()) > 0 {
		return &pb.CallToolResponse{Common: rf}, err
	}
	out, err := callResultToPB(res)
	if err != nil {
		return nil, status.Error(codes.Internal, "backend result: "+err.Error())
	}
	out.Common = rf
	return out, nil
}

func (v *service) ListResources(ctx context.Context, req *pb.ListResourcesRequest) (*pb.ListResourcesResponse, error) {
	list, rf, err := serve(v.s, ctx, req.GetCommon(), v.s.backend.ListResources)
	if err != nil || len(rf.GetDependentRequests()) > 0 {
		return &pb.ListResourcesResponse{Common: rf}, err
	}
	out := &pb.ListResourcesResponse{Common: rf, Ttl: v.s.ttl()}
	for i := range list {
		out.Resources = append(out.Resources, resourceToPB(&list[i]))
	}
	return out, nil
}

func (v *service) ListResourceTemplates(ctx context.Context, req *pb.ListResourceTemplatesRequest) (*pb.ListResourceTemplatesResponse, error) {
	list, rf, err := serve(v.s, ctx, req.GetCommon(), v.s.backend.ListResourceTemplates)
	if err != nil || len(rf.GetDependentRequests()) > 0 {
		return &pb.ListResourceTemplatesResponse{Common: rf}, err
	}
	out := &pb.ListResourceTemplatesResponse{Common: rf, Ttl: v.s.ttl()}
	for i := range list {
		out.ResourceTemplates = append(out.ResourceTemplates, templateToPB(&list[i]))
	}
	return out, nil
}

func (v *service) ReadResource(ctx context.Context, req *pb.ReadResourceRequest) (*pb.ReadResourceResponse, error) {
	params := &mcp.ReadResourceParams{URI: req.GetUri()}
	res, rf, err := serve(v.s, ctx, req.GetCommon(), func(ctx context.Context) (*mcp.ReadResourceResult, error) {
		return v.s.backend.ReadResource(ctx, params)
	})
	if err != nil || len(rf.GetDependentRequests()) > 0 {
		return &pb.ReadResourceResponse{Common: rf}, err
	}
	out := &pb.ReadResourceResponse{Common: rf}
	for i := range res.Contents {
		rc, err := resourceContentsToPB(&res.Contents[i])
		if err != nil {
			return nil, status.Error(codes.Internal, "backend result: "+err.Error())
		}
		out.Resource = append(out.Resource, rc)
	}
	return out, nil
}

func (v *service) ListPrompts(ctx context.Context, req *pb.ListPromptsRequest) (*pb.ListPromptsResponse, error) {
	list, rf, err := serve(v.s, ctx, req.GetCommon(), v.s.backend.ListPrompts)
	if err != nil || len(rf.GetDependentRequests()) > 0 {
		return &pb.ListPromptsResponse{Common: rf}, err
	}
	out := &pb.ListPromptsResponse{Common: rf, Ttl: v.s.ttl()}
	for i := range list {
		out.Prompts = append(out.Prompts, promptToPB(&list[i]))
	}
	return out, nil
}

func (v *service) GetPrompt(ctx context.Context, req *pb.GetPromptRequest) (*pb.GetPromptResponse, error) {
	params := &mcp.GetPromptParams{Name: req.GetName(), Arguments: req.GetArguments()}
	res, rf, err := serve(v.s, ctx, req.GetCommon(), func(ctx context.Context) (*mcp.GetPromptResult, error) {
		return v.s.backend.GetPrompt(ctx, params)
	})
	if err != nil || len(rf.GetDependentRequests()) > 0 {
		return &pb.GetPromptResponse{Common: rf}, err
	}
	out, err := promptResultToPB(res)
	if err != nil {
		return nil, status.Error(codes.Internal, "backend result: "+err.Error())
	}
	out.Common = rf
	return out, nil
}

func (v *service) Complete(ctx context.Context, req *pb.CompletionRequest) (*pb.CompletionResponse, error) {
	params := &mcp.CompleteParams{Argument: mcp.CompleteArgument{Name: req.GetArgument().GetName(), Value: req.GetArgument().GetValue()}}
	switch {
	case req.GetPromptReference() != nil:
		params.Ref = mcp.CompleteRef{Type: "ref/prompt", Name: req.GetPromptReference().GetName(), Title: req.GetPromptReference().GetTitle()}
	case req.GetResourceReference() != nil:
		params.Ref = mcp.CompleteRef{Type: "ref/resource", URI: req.GetResourceReference().GetUri()}
	default:
		if !resuming(req.GetCommon()) {
			return nil, status.Error(codes.InvalidArgument, "Complete needs prompt_reference or resource_reference")
		}
	}
	if c := req.GetContext(); c != nil {
		params.Context = &mcp.CompleteContext{Arguments: c.GetArguments()}
	}
	res, rf, err := serve(v.s, ctx, req.GetCommon(), func(ctx context.Context) (*mcp.CompleteResult, error) {
		return v.s.backend.Complete(ctx, params)
	})
	if err != nil || len(rf.GetDependentRequests()) > 0 {
		return &pb.CompletionResponse{Common: rf}, err
	}
	out := &pb.CompletionResponse{Common: rf, Values: res.Completion.Values, HasMore: res.Completion.HasMore}
	if res.Completion.Total != nil {
		out.TotalMatches = int64(*res.Completion.Total)
	}
	return out, nil
}
