package mcpgrpc_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	mcpgrpc "github.com/tako-mcp/tako/grpc"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
)

// mtlsBridge serves the reference server with a server certificate and the
// test CA as the client CA, so client certificates are required.
func mtlsBridge(t *testing.T, p *pki) string {
	t.Helper()
	backend := referenceBackend(t, mcptest.NewReference(mcptest.Options{}), transport.Handlers{})
	stls, err := mcpgrpc.ServerTLSConfig(mcpgrpc.TLSOptions{CertFile: p.Server.CertFile, KeyFile: p.Server.KeyFile, CAFile: p.CA.File})
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := startBridge(t, backend, &mcpgrpc.ServerOptions{TLS: stls})
	return addr
}

func dialTLS(t *testing.T, addr string, o mcpgrpc.TLSOptions) (*mcpgrpc.Client, error) {
	t.Helper()
	ctls, err := mcpgrpc.ClientTLSConfig(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return mcpgrpc.Dial(ctx, addr, &mcpgrpc.Options{TLS: ctls})
}

func TestMutualTLS(t *testing.T) {
	p := newPKI(t)
	addr := mtlsBridge(t, p)

	t.Run("valid client certificate", func(t *testing.T) {
		c, err := dialTLS(t, addr, mcpgrpc.TLSOptions{CertPEM: p.Client.CertPEM, KeyPEM: p.Client.KeyPEM, CAPEM: p.CA.PEM, ServerName: "mcp.test"})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		res, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: mcptest.ToolEcho, Arguments: []byte(`{"message":"over mTLS"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Text() != "over mTLS" {
			t.Fatalf("echo = %q", res.Text())
		}
	})

	refused := []struct {
		name string
		opts mcpgrpc.TLSOptions
		says string // what the error must say
	}{
		{"no client certificate", mcpgrpc.TLSOptions{CAPEM: p.CA.PEM, ServerName: "mcp.test"}, "certificate required"},
		{"certificate from another CA", mcpgrpc.TLSOptions{CertFile: p.stranger.CertFile, KeyFile: p.stranger.KeyFile, CAPEM: p.CA.PEM, ServerName: "mcp.test"}, "unknown certificate authority"},
		{"expired certificate", mcpgrpc.TLSOptions{CertFile: p.stale.CertFile, KeyFile: p.stale.KeyFile, CAPEM: p.CA.PEM, ServerName: "mcp.test"}, "expired certificate"},
		{"wrong server name", mcpgrpc.TLSOptions{CertFile: p.Client.CertFile, KeyFile: p.Client.KeyFile, CAPEM: p.CA.PEM, ServerName: "other.test"}, "not other.test"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			c, err := dialTLS(t, addr, tc.opts)
			if err == nil {
				c.Close()
				t.Fatal("Dial succeeded")
			}
			t.Logf("refused: %v", err)
			if !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("error does not say %q: %v", tc.says, err)
			}
			if !errors.Is(err, transport.ErrConnectionLost) {
				t.Errorf("error does not wrap ErrConnectionLost: %v", err)
			}
		})
	}
}
