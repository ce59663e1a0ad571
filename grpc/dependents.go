package mcpgrpc

import (
	"context"
	"fmt"
	"sync"

	"github.com/tako-mcp/tako/mcp"
	pb "github.com/tako-mcp/tako/proto/mcppb"
	"github.com/tako-mcp/tako/transport"
)

// Dependents carries a backend's server-to-client requests to the gRPC
// client that is waiting on the call, as dependent_requests.
//
// The bridge connects the backend with Handlers(), so the backend's
// sampling/createMessage and elicitation/create requests (legacy
// server-to-client requests, and 2026-07-28 input_required rounds alike)
// reach a handler that parks the request on the gRPC call in flight. That
// call's RPC returns at once with the request under a key and resume_data
// naming the call; the backend call keeps running, blocked in the handler.
// When the client calls again with dependent_responses and the same
// resume_data, the handler returns the answer to the backend, and the RPC
// waits for the result (or the next question).
//
// Attribution: a 2026-07-28 backend's input requests belong to the call
// whose result asked for them, exactly. The legacy wire does not say which
// client request a server-to-client request belongs to. With one call in
// flight the answer is exact. With several, the request goes to the oldest
// call in flight;
// a bridge that fronts a sampling server for mutually distrusting clients
// should therefore serve one client per bridge. A request that arrives with
// no call in flight (a roots/list right after initialize, say) is refused.
type Dependents struct {
	mu    sync.Mutex
	calls []*pendingCall // in flight, oldest first
}

// NewDependents returns an empty Dependents.
func NewDependents() *Dependents { return &Dependents{} }

// noCall is what a backend is told when it asks the client something while
// no gRPC call is in flight to carry the question.
const noCall = "mcpgrpc: no gRPC call in flight to carry the server's request"

// Handlers returns the handlers to connect the backend with: Sampling and
// Elicitation (form mode) park the request on the call in flight. Roots is
// left out: servers ask for roots outside of calls, where there is no gRPC
// client to ask.
func (d *Dependents) Handlers() transport.Handlers {
	return transport.Handlers{
		Sampling: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			req, err := samplingRequestToPB(p)
			if err != nil {
				return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: err.Error()}
			}
			resp, err := d.park(ctx, &pb.ServerInitiatedRequest{SamplingCreateMessage: req})
			if err != nil {
				return nil, err
			}
			if resp.GetSamplingCreateMessageResult() == nil {
				return nil, &mcp.Error{Code: mcp.CodeInternalError, Message: "the gRPC client gave no sampling result"}
			}
			return samplingResultFromPB(resp.GetSamplingCreateMessageResult())
		},
		Elicitation: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			req, err := elicitRequestToPB(p)
			if err != nil {
				return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: err.Error()}
			}
			resp, err := d.park(ctx, &pb.ServerInitiatedRequest{ElicitRequest: req})
			if err != nil {
				return nil, err
			}
			if resp.GetElicitResult() == nil {
				return nil, &mcp.Error{Code: mcp.CodeInternalError, Message: "the gRPC client gave no elicitation result"}
			}
			return elicitResultFromPB(resp.GetElicitResult())
		},
	}
}

// Roots parks a roots/list request of the backend like Handlers does the
// others. It is not in Handlers because servers often ask for roots right
// after initialize, outside any call, where it can only fail; a bridge
// whose backend asks during calls opts in:
//
//	h := deps.Handlers()
//	h.Roots = deps.Roots
func (d *Dependents) Roots(ctx context.Context) ([]mcp.Root, error) {
	resp, err := d.park(ctx, &pb.ServerInitiatedRequest{ListRootsRequest: &pb.ListRootsRequest{}})
	if err != nil {
		return nil, err
	}
	if resp.GetRootListResult() == nil {
		return nil, &mcp.Error{Code: mcp.CodeInternalError, Message: "the gRPC client gave no roots"}
	}
	return rootsFromPB(resp.GetRootListResult()), nil
}

// callKey marks the context of a backend call with its pendingCall.
type callKey struct{}

func (d *Dependents) register(c *pendingCall) {
	d.mu.Lock()
	d.calls = append(d.calls, c)
	d.mu.Unlock()
}

func (d *Dependents) unregister(c *pendingCall) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, x := range d.calls {
		if x == c {
			d.calls = append(d.calls[:i], d.calls[i+1:]...)
			return
		}
	}
}

// park hands req to the oldest call in flight and waits for the client's
// answer, the backend's cancellation, or the end of the call.
func (d *Dependents) park(ctx context.Context, req *pb.ServerInitiatedRequest) (*pb.ServerInitiatedResponse, error) {
	// A 2026-07-28 backend answers input_required on the call's own
	// context, which names the call; a legacy server-to-client request
	// comes on the session's, which does not.
	call, _ := ctx.Value(callKey{}).(*pendingCall)
	if call == nil {
		d.mu.Lock()
		if len(d.calls) > 0 {
			call = d.calls[0]
		}
		d.mu.Unlock()
	}
	if call == nil {
		return nil, &mcp.Error{Code: mcp.CodeInternalError, Message: noCall}
	}
	p := &parked{req: req, reply: make(chan *pb.ServerInitiatedResponse, 1)}
	call.add(p)
	select {
	case r := <-p.reply:
		if r == nil {
			return nil, &mcp.Error{Code: mcp.CodeInternalError, Message: "the gRPC client did not answer"}
		}
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-call.ctx.Done():
		return nil, fmt.Errorf("mcpgrpc: the gRPC call ended before the client answered: %w", call.ctx.Err())
	}
}
