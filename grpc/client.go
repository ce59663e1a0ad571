package mcpgrpc

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tako-mcp/tako/mcp"
	pb "github.com/tako-mcp/tako/proto/mcppb"
	"github.com/tako-mcp/tako/transport"
)

// Routing metadata keys: the client sends one with each call that names what
// the call is about, so that proxies and authorization layers can act on it
// without decoding the body.
const (
	MetadataTool     = "mcp_tool"     // CallTool: the tool's name
	MetadataPrompt   = "mcp_prompt"   // GetPrompt: the prompt's name
	MetadataResource = "mcp_resource" // ReadResource: the URI; Complete: the URI or prompt name
)

// ProtocolVersion is what ServerInfo reports: the MCP revision the public
// service's messages follow. There is no negotiation on this wire.
const ProtocolVersion = "2025-06-18"

// Options configure a Client. TLS or InsecurePlaintext is required; the
// rest has working zero values.
type Options struct {
	// TLS is the client's TLS configuration, usually from ClientTLSConfig.
	TLS *tls.Config

	// InsecurePlaintext dials without TLS. It exists for tests and for a
	// sidecar on the same host; it must be asked for by name because a
	// plain-text MCP connection carries tool arguments and tokens in the
	// clear.
	InsecurePlaintext bool

	// Handlers answer the server's dependent requests (sampling,
	// elicitation, roots): the same handlers every tako transport uses,
	// dispatched by the engine (transport.Rounds), as in transport.Options.
	Handlers transport.Handlers

	// MaxMessageSize caps one message in bytes, in both directions: a
	// response larger than this fails its call with an error wrapping
	// transport.ErrMessageTooLarge, and so does a request. Zero (or less)
	// means transport.DefaultMaxMessageSize, the cap of every tako
	// transport, rather than grpc-go's 4 MiB, which real tool results
	// exceed.
	MaxMessageSize int

	// CallTimeout bounds each call whose context has no deadline, all its
	// dependent-request rounds included, as transport.Options.CallTimeout
	// does for a Session. Zero means no default bound: the context alone
	// decides.
	CallTimeout time.Duration

	// Token, when set, is sent with every call as
	// "authorization: Bearer <Token>".
	Token string

	// Metadata is sent with every call, next to the routing keys. Per-call
	// metadata goes in the context with metadata.AppendToOutgoingContext.
	Metadata map[string]string

	// Keepalive is the interval of HTTP/2 pings while calls are in flight,
	// so that a dead peer fails the call instead of hanging it. Zero means
	// 30 seconds; negative turns pings off. The server must permit it
	// (tako's server end does; grpc-go's default allows one ping per 5
	// minutes and answers more with GOAWAY).
	Keepalive time.Duration
	// KeepaliveTimeout is how long a ping may go unanswered before the
	// connection is dropped. Zero means 10 seconds.
	KeepaliveTimeout time.Duration

	// SkipProbe skips the ListTools call with which Dial checks that the
	// server answers (and that TLS works both ways, which with TLS 1.3
	// only the first call shows).
	SkipProbe bool

	// DialOptions are added to tako's own, for what this struct does not
	// cover (interceptors, a custom dialer).
	DialOptions []grpc.DialOption

	// Logger receives diagnostics (each dependent-request round, at debug
	// level). Nil discards them.
	Logger *slog.Logger
}

// Client is a connection to a server of the MCP gRPC service. It implements
// transport.Transport natively: each MCP operation is one typed RPC (plus
// the rounds its dependent requests need), so it has no JSON-RPC session and
// no handshake. It is safe for concurrent use.
type Client struct {
	cc     *grpc.ClientConn
	api    pb.McpClient
	opts   Options
	target string
	log    *slog.Logger
	closed atomic.Bool

	mu           sync.Mutex
	instructions string
	ttl          map[string]time.Duration
}

var (
	_ transport.Transport = (*Client)(nil)
	_ transport.ListTTL   = (*Client)(nil)
	_ transport.Caller    = (*Client)(nil)
)

// Dial connects to the MCP gRPC server at addr (host:port, or any grpc
// target). Unless opts.SkipProbe, it makes one ListTools call before
// returning, so that a server that is down or refuses the client's
// certificate fails Dial with a typed error rather than the first call.
func Dial(ctx context.Context, addr string, opts *Options) (*Client, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	var creds credentials.TransportCredentials
	switch {
	case o.InsecurePlaintext && o.TLS != nil:
		return nil, fmt.Errorf("%w: both TLS and InsecurePlaintext given", ErrTLSConfig)
	case o.InsecurePlaintext:
		creds = insecure.NewCredentials()
	case o.TLS != nil:
		creds = refusalCreds{credentials.NewTLS(o.TLS)}
	default:
		return nil, fmt.Errorf("%w: no TLS configuration; plain text needs Options.InsecurePlaintext", ErrTLSConfig)
	}
	size := o.MaxMessageSize
	if size <= 0 {
		size = transport.DefaultMaxMessageSize
	}
	dialOpts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(size), grpc.MaxCallSendMsgSize(size)),
	}
	if o.Keepalive >= 0 {
		ka := keepalive.ClientParameters{Time: o.Keepalive, Timeout: o.KeepaliveTimeout}
		if ka.Time == 0 {
			ka.Time = 30 * time.Second
		}
		if ka.Timeout == 0 {
			ka.Timeout = 10 * time.Second
		}
		dialOpts = append(dialOpts, grpc.WithKeepaliveParams(ka))
	}
	dialOpts = append(dialOpts, o.DialOptions...)
	cc, err := grpc.NewClient(addr, dialOpts...)
	if err != nil {
		return nil, fmt.Errorf("mcpgrpc: dial %s: %w", addr, err)
	}
	c := &Client{cc: cc, api: pb.NewMcpClient(cc), opts: o, target: addr, log: o.Logger, ttl: map[string]time.Duration{}}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if !o.SkipProbe {
		if _, err := c.ListTools(ctx); err != nil && !isUnimplemented(err) {
			cc.Close()
			return nil, err
		}
	}
	return c, nil
}

// Call implements transport.Caller by dispatching method to the typed
// method that has its RPC, through the engine's own typed path
// (transport.Call on the Client's typed methods), so the mapping of
// methods to operations is the one every Transport gets. The result is the
// protocol's JSON of the typed value: {"tools":[...]} for tools/list, a
// CallToolResult for tools/call. tools/call, resources/read, prompts/get
// and completion/complete decode params with transport.DecodeParams (junk
// is an *mcp.Error -32602). The service has no pagination, so every list
// is whole and a cursor in params is ignored.
//
// A method the service has no RPC for (ping, logging/setLevel,
// resources/subscribe, ...) fails with an error wrapping
// transport.ErrCapability, without sending anything: the same error as an
// RPC the server does not implement, since on this wire both mean the
// feature is not there. After Close, Call fails with transport.ErrClosed.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	if c.closed.Load() {
		return fmt.Errorf("mcpgrpc %s: %w", method, transport.ErrClosed)
	}
	return transport.Call(ctx, typedOnly{c}, method, params, result)
}

// typedOnly hides Client.Call from transport.Call, which would otherwise
// call it back.
type typedOnly struct{ transport.Transport }

// listRPC runs a list RPC. A server that does not implement it has nothing
// to list, as a Session's server that did not declare the feature: resp is
// nil and so is err. Otherwise the response's ttl is recorded for method.
func listRPC[R interface {
	withCommon
	GetTtl() *durationpb.Duration
}](c *Client, ctx context.Context, op, method string, rpc func(context.Context, *pb.RequestFields, ...grpc.CallOption) (R, error)) (R, error) {
	var zero R
	resp, err := roundTrips(c, ctx, op, "", "", rpc)
	if isUnimplemented(err) {
		return zero, nil
	}
	if err != nil {
		return zero, err
	}
	c.setTTL(method, resp.GetTtl(), resp.GetTtl() != nil)
	return resp, nil
}

func isUnimplemented(err error) bool {
	se, ok := err.(*StatusError)
	return ok && se.Status.Code() == codes.Unimplemented
}

// ServerInfo reports what the client knows. The service has no handshake:
// every feature is assumed present, and one the server lacks fails its
// call with an error wrapping transport.ErrCapability. Notifications is
// false: the service cannot carry them (see the package documentation).
func (c *Client) ServerInfo() transport.ServerInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return transport.ServerInfo{
		ProtocolVersion: ProtocolVersion,
		Implementation:  mcp.Implementation{Name: "grpc:" + c.target},
		Capabilities: mcp.ServerCapabilities{
			Tools:       &mcp.ListChangedCapability{},
			Prompts:     &mcp.ListChangedCapability{},
			Resources:   &mcp.ResourcesCapability{},
			Completions: &struct{}{},
		},
		Instructions:  c.instructions,
		Notifications: false,
	}
}

// TTL returns the time-to-live the server gave with the last answer to the
// list method (mcp.MethodToolsList, mcp.MethodResourcesList,
// mcp.MethodResourcesTemplatesList or mcp.MethodPromptsList), and whether it
// gave one. A cache keeps the list that long; with no notifications on this
// wire, the TTL is how a client learns that a list may have changed.
func (c *Client) TTL(method string) (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.ttl[method]
	return d, ok
}

// Subscribe registers nothing: the service has no server-to-client stream,
// so no notification ever arrives. ServerInfo().Notifications says so, and
// callers refresh lists by TTL instead. The returned function does nothing.
func (c *Client) Subscribe(func(mcp.Notification)) (unsubscribe func()) {
	return func() {}
}

// Close closes the connection. Calls in flight fail with an error wrapping
// transport.ErrClosed; so does every later call. Close is idempotent.
func (c *Client) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	return c.cc.Close()
}

// outgoing adds the per-call metadata: the token, Options.Metadata and the
// routing key (key empty for none).
func (c *Client) outgoing(ctx context.Context, key, value string) context.Context {
	var kv []string
	if c.opts.Token != "" {
		kv = append(kv, "authorization", "Bearer "+c.opts.Token)
	}
	for k, v := range c.opts.Metadata {
		kv = append(kv, k, v)
	}
	if key != "" {
		kv = append(kv, key, headerValue(value))
	}
	if len(kv) == 0 {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, kv...)
}

// headerValue keeps a routing value legal in an HTTP/2 header: printable
// ASCII passes as is, anything else is percent-encoded.
func headerValue(v string) string {
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return url.PathEscape(v)
		}
	}
	return v
}

type withCommon interface{ GetCommon() *pb.ResponseFields }

// roundTrips runs one logical call: the RPC, and while the response carries
// dependent_requests, the handlers' answers and the RPC again with
// dependent_responses and resume_data. The rounds are the engine's
// (transport.Rounds): its bound, its dispatch to Handlers and its error for
// a request no handler serves, the same as on every transport.
func roundTrips[R withCommon](c *Client, ctx context.Context, op, key, value string, rpc func(context.Context, *pb.RequestFields, ...grpc.CallOption) (R, error)) (R, error) {
	var zero R
	if c.closed.Load() {
		return zero, fmt.Errorf("mcpgrpc %s: %w", op, transport.ErrClosed)
	}
	if c.opts.CallTimeout > 0 {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, c.opts.CallTimeout)
			defer cancel()
		}
	}
	ctx = c.outgoing(ctx, key, value)
	var resume *structpb.Struct
	round := 0
	return transport.Rounds(ctx, &c.opts.Handlers, "mcpgrpc "+op, func(ctx context.Context, answers map[string]any) (R, map[string]mcp.InputRequest, error) {
		common := &pb.RequestFields{}
		if answers != nil {
			out, err := answersToPB(answers)
			if err != nil {
				return zero, nil, fmt.Errorf("mcpgrpc %s: %w", op, err)
			}
			common = &pb.RequestFields{DependentResponses: out, ResumeData: resume}
		}
		var trailer metadata.MD
		resp, err := rpc(ctx, common, grpc.Trailer(&trailer))
		if err != nil {
			return zero, nil, mapError(ctx, op, err, trailer, c.closed.Load())
		}
		rf := resp.GetCommon()
		if s := rf.GetInstructions(); s != "" {
			c.mu.Lock()
			c.instructions = s
			c.mu.Unlock()
		}
		deps := rf.GetDependentRequests()
		if len(deps) == 0 {
			return resp, nil, nil
		}
		round++
		c.log.Debug("mcpgrpc: server asks for input before it can answer", "rpc", op, "round", round, "requests", len(deps))
		asks, err := inputRequestsFromPB(deps)
		if err != nil {
			return zero, nil, fmt.Errorf("mcpgrpc %s: %w", op, err)
		}
		resume = rf.GetResumeData()
		return zero, asks, nil
	})
}

func (c *Client) setTTL(method string, d interface{ AsDuration() time.Duration }, present bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if present {
		c.ttl[method] = d.AsDuration()
	} else {
		delete(c.ttl, method)
	}
}

// ListTools returns every tool. The service has no pagination: one
// response holds the whole list. A server that does not implement the RPC
// has no tools: the list is empty, as a Session's is for a server that
// did not declare the feature. The other list methods do the same.
func (c *Client) ListTools(ctx context.Context) ([]mcp.Tool, error) {
	resp, err := listRPC(c, ctx, "ListTools", mcp.MethodToolsList, func(ctx context.Context, rf *pb.RequestFields, o ...grpc.CallOption) (*pb.ListToolsResponse, error) {
		return c.api.ListTools(ctx, &pb.ListToolsRequest{Common: rf}, o...)
	})
	if err != nil || resp == nil {
		return nil, err
	}
	tools := make([]mcp.Tool, 0, len(resp.GetTools()))
	var enc structEncoder
	for _, t := range resp.GetTools() {
		mt, err := toolFromPB(t, &enc)
		if err != nil {
			return nil, fmt.Errorf("mcpgrpc ListTools: %w: tool %q: %v", transport.ErrProtocol, t.GetName(), err)
		}
		tools = append(tools, mt)
	}
	return tools, nil
}

// CallTool calls a tool, sending its name as the mcp_tool metadata. A tool
// execution error comes back as a result with IsError set. Task
// augmentation and 2026-07-28 input fields of params have no form on this
// wire and are ignored; dependent requests take their place.
func (c *Client) CallTool(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	if params == nil {
		return nil, fmt.Errorf("mcpgrpc CallTool: nil params")
	}
	args, err := rawToStruct(params.Arguments)
	if err != nil {
		return nil, fmt.Errorf("mcpgrpc CallTool: arguments: %w", err)
	}
	req := &pb.CallToolRequest_Request{Name: params.Name, Arguments: args}
	resp, err := roundTrips(c, ctx, "CallTool", MetadataTool, params.Name, func(ctx context.Context, rf *pb.RequestFields, o ...grpc.CallOption) (*pb.CallToolResponse, error) {
		return c.api.CallTool(ctx, &pb.CallToolRequest{Common: rf, Request: req}, o...)
	})
	if err != nil {
		return nil, err
	}
	res, err := callResultFromPB(resp)
	if err != nil {
		return nil, fmt.Errorf("mcpgrpc CallTool: %w: %v", transport.ErrProtocol, err)
	}
	return res, nil
}

// ListResources returns every resource.
func (c *Client) ListResources(ctx context.Context) ([]mcp.Resource, error) {
	resp, err := listRPC(c, ctx, "ListResources", mcp.MethodResourcesList, func(ctx context.Context, rf *pb.RequestFields, o ...grpc.CallOption) (*pb.ListResourcesResponse, error) {
		return c.api.ListResources(ctx, &pb.ListResourcesRequest{Common: rf}, o...)
	})
	if err != nil || resp == nil {
		return nil, err
	}
	out := make([]mcp.Resource, 0, len(resp.GetResources()))
	for _, r := range resp.GetResources() {
		out = append(out, resourceFromPB(r))
	}
	return out, nil
}

// ListResourceTemplates returns every resource template.
func (c *Client) ListResourceTemplates(ctx context.Context) ([]mcp.ResourceTemplate, error) {
	resp, err := listRPC(c, ctx, "ListResourceTemplates", mcp.MethodResourcesTemplatesList, func(ctx context.Context, rf *pb.RequestFields, o ...grpc.CallOption) (*pb.ListResourceTemplatesResponse, error) {
		return c.api.ListResourceTemplates(ctx, &pb.ListResourceTemplatesRequest{Common: rf}, o...)
	})
	if err != nil || resp == nil {
		return nil, err
	}
	out := make([]mcp.ResourceTemplate, 0, len(resp.GetResourceTemplates()))
	for _, t := range resp.GetResourceTemplates() {
		out = append(out, templateFromPB(t))
	}
	return out, nil
}

// ReadResource reads a resource, sending its URI as the mcp_resource
// metadata.
func (c *Client) ReadResource(ctx context.Context, params *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	if params == nil {
		return nil, fmt.Errorf("mcpgrpc ReadResource: nil params")
	}
	resp, err := roundTrips(c, ctx, "ReadResource", MetadataResource, params.URI, func(ctx context.Context, rf *pb.RequestFields, o ...grpc.CallOption) (*pb.ReadResourceResponse, error) {
		return c.api.ReadResource(ctx, &pb.ReadResourceRequest{Common: rf, Uri: params.URI}, o...)
	})
	if err != nil {
		return nil, err
	}
	out := &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{}}
	for _, r := range resp.GetResource() {
		out.Contents = append(out.Contents, resourceContentsFromPB(r))
	}
	return out, nil
}

// ListPrompts returns every prompt.
func (c *Client) ListPrompts(ctx context.Context) ([]mcp.Prompt, error) {
	resp, err := listRPC(c, ctx, "ListPrompts", mcp.MethodPromptsList, func(ctx context.Context, rf *pb.RequestFields, o ...grpc.CallOption) (*pb.ListPromptsResponse, error) {
		return c.api.ListPrompts(ctx, &pb.ListPromptsRequest{Common: rf}, o...)
	})
	if err != nil || resp == nil {
		return nil, err
	}
	out := make([]mcp.Prompt, 0, len(resp.GetPrompts()))
	for _, p := range resp.GetPrompts() {
		out = append(out, promptFromPB(p))
	}
	return out, nil
}

// GetPrompt gets a prompt, sending its name as the mcp_prompt metadata.
func (c *Client) GetPrompt(ctx context.Context, params *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	if params == nil {
		return nil, fmt.Errorf("mcpgrpc GetPrompt: nil params")
	}
	resp, err := roundTrips(c, ctx, "GetPrompt", MetadataPrompt, params.Name, func(ctx context.Context, rf *pb.RequestFields, o ...grpc.CallOption) (*pb.GetPromptResponse, error) {
		return c.api.GetPrompt(ctx, &pb.GetPromptRequest{Common: rf, Name: params.Name, Arguments: params.Arguments}, o...)
	})
	if err != nil {
		return nil, err
	}
	res, err := promptResultFromPB(resp)
	if err != nil {
		return nil, fmt.Errorf("mcpgrpc GetPrompt: %w: %v", transport.ErrProtocol, err)
	}
	return res, nil
}

// Complete asks for argument completions, sending the URI or prompt name as
// the mcp_resource metadata.
func (c *Client) Complete(ctx context.Context, params *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	if params == nil {
		return nil, fmt.Errorf("mcpgrpc Complete: nil params")
	}
	req := &pb.CompletionRequest{Argument: &pb.CompletionRequest_Argument{Name: params.Argument.Name, Value: params.Argument.Value}}
	var route string
	switch params.Ref.Type {
	case "ref/prompt":
		req.PromptReference = &pb.PromptReference{Name: params.Ref.Name, Title: params.Ref.Title}
		route = params.Ref.Name
	case "ref/resource":
		req.ResourceReference = &pb.ResourceReference{Uri: params.Ref.URI}
		route = params.Ref.URI
	default:
		return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: fmt.Sprintf("completion reference type %q is neither ref/prompt nor ref/resource", params.Ref.Type)}
	}
	if params.Context != nil {
		req.Context = &pb.CompletionRequest_Context{Arguments: params.Context.Arguments}
	}
	resp, err := roundTrips(c, ctx, "Complete", MetadataResource, route, func(ctx context.Context, rf *pb.RequestFields, o ...grpc.CallOption) (*pb.CompletionResponse, error) {
		req.Common = rf
		return c.api.Complete(ctx, req, o...)
	})
	if err != nil {
		return nil, err
	}
	out := &mcp.CompleteResult{}
	out.Completion.Values = resp.GetValues()
	if out.Completion.Values == nil {
		out.Completion.Values = []string{}
	}
	if n := resp.GetTotalMatches(); n > 0 {
		t := int(n)
		out.Completion.Total = &t
	}
	out.Completion.HasMore = resp.GetHasMore()
	return out, nil
}
