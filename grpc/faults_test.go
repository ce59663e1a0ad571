package mcpgrpc_test

import (
	"context"
	"testing"

	mcpgrpc "github.com/tako-mcp/tako/grpc"
	"github.com/tako-mcp/tako/internal/faultnet"
	"github.com/tako-mcp/tako/internal/testserve"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/transport/transporttest"
)

// TestFaults runs the fault matrix on the gRPC client, through tako's gRPC
// server end fronting a Session over the reference server (plain text:
// TLS is not what the rows are about, and the kit of transportkit_test.go
// covers it). The server end listens through a faultnet.Listener: a kill
// cuts every connection and refuses new ones, a cut drops the
// connections of a server that lives on, and a trickle slows every byte
// the server end writes. Faults of the reference server reach the client
// through the bridge's Session, as they would through any bridge.
func TestFaults(t *testing.T) {
	transporttest.RunFaults(t, func(t *testing.T, f transporttest.Fault) transporttest.FaultTarget {
		srv := mcptest.NewReference(mcptest.Options{})
		trickle := f.Server.Trickle
		f.Server.Trickle = 0 // a message Conn ignores it; the wire trickles instead
		if f.Tool != "" {
			srv.FaultTool(f.Tool, f.Server)
		}
		ctx := context.Background()
		deps := mcpgrpc.NewDependents()
		conn, wait := srv.Pipe(ctx)
		bopts := f.Options
		bopts.Handlers = deps.Handlers()
		backend, err := transport.Connect(ctx, conn, &bopts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			backend.Close()
			wait()
		})
		lis, err := faultnet.Listen()
		if err != nil {
			t.Fatal(err)
		}
		addr := testserve.GRPC(t, lis, backend, &mcpgrpc.ServerOptions{InsecurePlaintext: true, Dependents: deps})
		c, err := mcpgrpc.Dial(ctx, addr, &mcpgrpc.Options{
			InsecurePlaintext: true,
			Handlers:          f.Options.Handlers,
			MaxMessageSize:    f.MaxMessageSize,
			CallTimeout:       f.Options.CallTimeout,
		})
		if err != nil {
			t.Fatal(err)
		}
		lis.Trickle(trickle)
		return transporttest.FaultTarget{
			Transport: c,
			Server:    srv,
			Kill: func() {
				lis.Kill()
				backend.Close()
			},
			Cut: lis.Cut,
		}
	},
		transporttest.FaultNotApplicable(transporttest.FaultSessionExpired, "the gRPC service has no sessions"),
		transporttest.FaultNotApplicable(transporttest.FaultJunk, "gRPC's wire is typed protobuf frames: there are no JSON bytes to garble (junk between the bridge and its backend is the backend transport's row)"),
		transporttest.FaultNotApplicable(transporttest.FaultUndecodable, "gRPC's wire is typed protobuf frames, decoded by grpc-go: there is no JSON-RPC response to garble"),
	)
}
