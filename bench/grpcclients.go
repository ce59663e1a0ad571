package bench

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/structpb"

	mcpgrpc "github.com/tako-mcp/tako/grpc"
	pb "github.com/tako-mcp/tako/proto/mcppb"
)

// grpcTransport is gRPC with mutual TLS through tako's bridge
// (servers/bridge -grpc: mcpgrpc.NewServer over one stdio Session), with
// certificates made for the run. The floor is grpc-go's generated stubs
// (proto/mcppb) and nothing else.
var grpcTransport = &Transport{
	Name: "grpc",
	Serve: func(ctx context.Context, bins Bins, tools int) (*Endpoint, error) {
		certs, err := MakeCerts()
		if err != nil {
			return nil, err
		}
		args := bridgeArgs(bins, tools, "-grpc", "127.0.0.1:0",
			"-cert", certs.ServerCert, "-key", certs.ServerKey, "-ca", certs.CA)
		srv, err := startServerProcess(ctx, bins.Bridge, args, "127.0.0.1:")
		if err != nil {
			certs.Remove()
			return nil, err
		}
		return &Endpoint{URL: srv.url, Certs: certs, Conns: srv.conns, close: func() error {
			return errors.Join(srv.Close(), certs.Remove())
		}}, nil
	},
	kinds: []kind{
		{"floor", startFloorGRPC},
		{"tako", startTakoGRPC},
	},
}

// grpcMaxMessage lets a 16 MiB result through (grpc-go's default is
// 4 MiB); tako's client and server use 64 MiB by default.
const grpcMaxMessage = 64 << 20

func startTakoGRPC(ctx context.Context, ep *Endpoint) (client, error) {
	cfg, err := mcpgrpc.ClientTLSConfig(mcpgrpc.TLSOptions{
		CertFile: ep.Certs.ClientCert, KeyFile: ep.Certs.ClientKey, CAFile: ep.Certs.CA,
	})
	if err != nil {
		return nil, err
	}
	c, err := mcpgrpc.Dial(ctx, ep.URL, &mcpgrpc.Options{TLS: cfg})
	if err != nil {
		return nil, err
	}
	return &takoClient{s: c}, nil
}

// floorGRPCClient calls the generated stubs directly: arguments built as
// a structpb.Struct by hand, the tool's name in the routing metadata the
// service asks for, the text read out of the typed response.
type floorGRPCClient struct {
	cc  *grpc.ClientConn
	mcp pb.McpClient
}

func startFloorGRPC(ctx context.Context, ep *Endpoint) (client, error) {
	cert, err := tls.LoadX509KeyPair(ep.Certs.ClientCert, ep.Certs.ClientKey)
	if err != nil {
		return nil, err
	}
	caPEM, err := os.ReadFile(ep.Certs.CA)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("floor: no CA certificate in " + ep.Certs.CA)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS13}
	cc, err := grpc.NewClient(ep.URL,
		grpc.WithTransportCredentials(credentials.NewTLS(cfg)),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(grpcMaxMessage), grpc.MaxCallSendMsgSize(grpcMaxMessage)))
	if err != nil {
		return nil, err
	}
	c := &floorGRPCClient{cc: cc, mcp: pb.NewMcpClient(cc)}
	// grpc.NewClient connects lazily; one call makes the handshake (TCP,
	// TLS both ways) part of the start, as tako's Dial does with its probe.
	if _, err := c.mcp.ListTools(ctx, &pb.ListToolsRequest{}); err != nil {
		cc.Close()
		return nil, fmt.Errorf("floor: probe: %w", err)
	}
	return c, nil
}

// call returns the result's one block: a text block's text, or an image
// block's data (raw bytes, as protobuf carries them).
func (c *floorGRPCClient) call(ctx context.Context, name string, args map[string]*structpb.Value) (received, error) {
	ctx = metadata.AppendToOutgoingContext(ctx, mcpgrpc.MetadataTool, name)
	resp, err := c.mcp.CallTool(ctx, &pb.CallToolRequest{Request: &pb.CallToolRequest_Request{
		Name: name, Arguments: &structpb.Struct{Fields: args},
	}})
	if err != nil {
		return received{}, err
	}
	if !resp.GetIsError() && len(resp.GetContent()) == 1 {
		switch b := resp.GetContent()[0]; {
		case b.GetText() != nil:
			return received{text: b.GetText().GetText()}, nil
		case b.GetImage() != nil:
			return received{raw: b.GetImage().GetData()}, nil
		}
	}
	return received{}, fmt.Errorf("%s: unexpected result: isError=%v, %d blocks", name, resp.GetIsError(), len(resp.GetContent()))
}

func (c *floorGRPCClient) echo(ctx context.Context) error {
	r, err := c.call(ctx, "echo", map[string]*structpb.Value{"message": structpb.NewStringValue(echoMessage)})
	if err != nil {
		return err
	}
	return checkEcho(r.text)
}

func (c *floorGRPCClient) big(ctx context.Context, kind string, n int) (received, error) {
	return c.call(ctx, "big", map[string]*structpb.Value{
		"bytes": structpb.NewNumberValue(float64(n)), "kind": structpb.NewStringValue(kind)})
}

func (c *floorGRPCClient) listTools(ctx context.Context) (int, error) {
	resp, err := c.mcp.ListTools(ctx, &pb.ListToolsRequest{})
	if err != nil {
		return 0, err
	}
	return len(resp.GetTools()), nil
}

func (c *floorGRPCClient) Close() error { return c.cc.Close() }
