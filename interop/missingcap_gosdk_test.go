package interop

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// -32021 (MissingRequiredClientCapability) from the official Go SDK's
// conformance server, over stdio: its test_missing_capability tool runs
// only for a client that declared sampling. Without a sampling handler
// tako names what is missing; with one the capability is declared and the
// tool runs.
func TestGoSDKMissingCapability(t *testing.T) {
	server := filepath.Join(peerBin, "everything-server")
	for _, pin := range []string{"", mcp.Version20251125} {
		name := pin
		if name == "" {
			name = "negotiated"
		}
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			s := connect(t, ctx, server, nil, &transport.Options{ProtocolVersion: pin})
			if pin == "" && s.ServerInfo().ProtocolVersion != mcp.Version20260728 {
				t.Fatalf("negotiated %s, want %s", s.ServerInfo().ProtocolVersion, mcp.Version20260728)
			}
			_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "test_missing_capability"})
			var mc *transport.MissingCapabilityError
			// The SDK's ClientCapabilities always marshals "roots":{} (its
			// go-sdk#607), so the error data names roots as well.
			if !errors.As(err, &mc) || !slices.Contains(mc.Missing, "sampling") {
				t.Fatalf("without sampling: %v, want a MissingCapabilityError naming sampling", err)
			}
			var rpcErr *mcp.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeMissingRequiredClientCapability {
				t.Fatalf("the server's -32021 is not reachable through %v", err)
			}

			model := &fakeModel{}
			s = connect(t, ctx, server, nil, &transport.Options{ProtocolVersion: pin,
				Handlers: transport.Handlers{Sampling: model.sample}})
			res := call(t, ctx, s, "test_missing_capability", `{}`)
			if !strings.Contains(res.Text(), "declared the sampling capability") {
				t.Fatalf("with sampling: %q", res.Text())
			}
		})
	}
}
