package interop

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// TestMCPGoOutputValidatedUnlisted: "output validation silently skips a
// tool that was not listed first". mcp-go's miscount declares an
// outputSchema and answers with structuredContent that breaks it; called
// straight after Connect, the result was returned as valid, since the
// engine had no schema to check it against. It now lists the tools on
// demand and returns an *OutputSchemaError with the result, in every era.
func TestMCPGoOutputValidatedUnlisted(t *testing.T) {
	for _, version := range []string{mcp.Version20251125, mcp.Version20260728} {
		t.Run(version, func(t *testing.T) {
			ctx := testContext(t)
			s := connect(t, ctx, filepath.Join(peerBin, "mcpgo"), nil, &transport.Options{ProtocolVersion: version})
			res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "miscount"})
			var oe *transport.OutputSchemaError
			if !errors.As(err, &oe) || oe.Tool != "miscount" {
				t.Fatalf("CallTool miscount: %v, want an *OutputSchemaError", err)
			}
			if res == nil || res.Text() != "three" {
				t.Errorf("the result does not come with the error: %+v", res)
			}
			// The listing is kept: a second call checks without listing
			// again.
			if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "miscount"}); !errors.As(err, &oe) {
				t.Errorf("second call: %v, want an *OutputSchemaError", err)
			}
		})
	}
}

// TestMCPGoOutputValidatedUnlistedHTTP: the same over Streamable HTTP.
func TestMCPGoOutputValidatedUnlistedHTTP(t *testing.T) {
	ctx := testContext(t)
	s := connectHTTP(t, ctx, goPeerHTTP(t, "mcpgo"), nil)
	_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "miscount"})
	var oe *transport.OutputSchemaError
	if !errors.As(err, &oe) {
		t.Fatalf("CallTool miscount: %v, want an *OutputSchemaError", err)
	}
}
