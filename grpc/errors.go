package mcpgrpc

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// Trailer keys with which tako's server end carries a JSON-RPC error through
// a gRPC status, so that the client rebuilds the exact *mcp.Error. A server
// that does not send them still gets a code chosen from the gRPC status.
const (
	trailerErrorCode = "mcp-error-code"
	trailerErrorData = "mcp-error-data-bin"
)

// StatusError is an error from a gRPC call. It unwraps to the typed error
// that says what happened (transport.ErrConnectionLost,
// transport.ErrAuthRequired, context.DeadlineExceeded, an *mcp.Error, ...)
// and keeps the gRPC status for whoever wants it: status.FromError works on
// it through GRPCStatus.
type StatusError struct {
	// Op is the RPC, such as "CallTool".
	Op     string
	Status *status.Status
	err    error
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("mcpgrpc %s: %v (grpc %s: %s)", e.Op, e.err, e.Status.Code(), e.Status.Message())
}

// Unwrap returns the typed error.
func (e *StatusError) Unwrap() error { return e.err }

// GRPCStatus lets status.FromError and status.Code see the original status.
func (e *StatusError) GRPCStatus() *status.Status { return e.Status }

// mapError turns the error of one RPC into tako's typed errors. closed
// reports that the Client was closed, which grpc reports as Canceled.
func mapError(ctx context.Context, op string, err error, trailer metadata.MD, closed bool) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("mcpgrpc %s: %w", op, err)
	}
	var typed error
	switch st.Code() {
	case codes.Canceled:
		switch {
		case closed:
			typed = transport.ErrClosed
		case ctx.Err() != nil:
			typed = ctx.Err()
		default:
			typed = context.Canceled
		}
	case codes.DeadlineExceeded:
		typed = context.DeadlineExceeded
	case codes.Unavailable:
		typed = transport.ErrConnectionLost
	case codes.Unauthenticated, codes.PermissionDenied:
		typed = transport.ErrAuthRequired
	case codes.Unimplemented:
		typed = transport.ErrCapability
	case codes.ResourceExhausted:
		typed = transport.ErrMessageTooLarge
	default:
		typed = rpcError(st, trailer)
	}
	if closed && st.Code() != codes.Canceled {
		typed = fmt.Errorf("%w (%w)", transport.ErrClosed, typed)
	}
	return &StatusError{Op: op, Status: st, err: typed}
}

// rpcError rebuilds the *mcp.Error of a status: the exact code from the
// trailer when tako's server end sent it, else one chosen from the gRPC
// code.
func rpcError(st *status.Status, trailer metadata.MD) error {
	e := &mcp.Error{Message: st.Message()}
	if v := trailer.Get(trailerErrorCode); len(v) > 0 {
		if code, err := strconv.ParseInt(v[0], 10, 64); err == nil {
			e.Code = code
			if d := trailer.Get(trailerErrorData); len(d) > 0 {
				e.Data = []byte(d[0])
			}
			return e
		}
	}
	switch st.Code() {
	case codes.InvalidArgument:
		e.Code = mcp.CodeInvalidParams
	case codes.NotFound:
		e.Code = mcp.CodeResourceNotFound
	default:
		e.Code = mcp.CodeInternalError
	}
	return e
}

// statusOf is the server end's mapping the other way: the backend's error
// to a gRPC status and the trailer that carries a JSON-RPC error exactly.
func statusOf(ctx context.Context, err error) error {
	var rpcErr *mcp.Error
	switch {
	case errors.As(err, &rpcErr):
		md := metadata.Pairs(trailerErrorCode, strconv.FormatInt(rpcErr.Code, 10))
		if len(rpcErr.Data) > 0 {
			md.Append(trailerErrorData, string(rpcErr.Data))
		}
		// Best effort: the status alone still says what went wrong.
		_ = setTrailer(ctx, md)
		code := codes.Unknown
		switch rpcErr.Code {
		case mcp.CodeInvalidParams, mcp.CodeInvalidRequest, mcp.CodeParseError:
			code = codes.InvalidArgument
		case mcp.CodeResourceNotFound:
			code = codes.NotFound
		case mcp.CodeMethodNotFound:
			code = codes.Unimplemented
		case mcp.CodeInternalError:
			code = codes.Internal
		}
		return status.Error(code, rpcErr.Message)
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, transport.ErrCapability):
		return status.Error(codes.Unimplemented, err.Error())
	case errors.Is(err, transport.ErrAuthRequired):
		return status.Error(codes.Unauthenticated, err.Error())
	case errors.Is(err, transport.ErrConnectionLost), errors.Is(err, transport.ErrClosed):
		return status.Error(codes.Unavailable, "backend: "+err.Error())
	case errors.Is(err, transport.ErrMessageTooLarge):
		return status.Error(codes.ResourceExhausted, err.Error())
	}
	return status.Error(codes.Internal, err.Error())
}
