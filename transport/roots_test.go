package transport_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
)

// rootsTool answers with the URIs of the client's roots, as the server
// asked for them (a legacy roots/list or a 2026-07-28 input round).
func rootsTool(ctx context.Context, req *mcptest.CallRequest) (*mcp.CallToolResult, error) {
	roots, err := req.ListRoots(ctx)
	if err != nil {
		return nil, err
	}
	var uris []string
	for _, r := range roots {
		uris = append(uris, r.URI)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(strings.Join(uris, ","))}}, nil
}

func TestSessionRoots(t *testing.T) {
	for _, v := range []string{mcp.Version20251125, mcp.Version20260728} {
		t.Run(v, func(t *testing.T) {
			srv := mcptest.New(mcptest.Options{})
			if err := srv.AddTool(mcp.Tool{Name: "roots"}, rootsTool); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			conn, wait := srv.Pipe(ctx)
			defer wait()
			s := connect(t, conn, &transport.Options{ProtocolVersion: v, Roots: []mcp.Root{{URI: "file:///a", Name: "a"}}})
			defer s.Close()

			listed := func() string {
				t.Helper()
				res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "roots"})
				if err != nil {
					t.Fatal(err)
				}
				return res.Text()
			}
			if got := listed(); got != "file:///a" {
				t.Fatalf("roots = %q", got)
			}
			if err := s.AddRoots(ctx, mcp.Root{URI: "file:///b"}); err != nil {
				t.Fatal(err)
			}
			if got := listed(); got != "file:///a,file:///b" {
				t.Fatalf("after AddRoots: %q", got)
			}
			if err := s.RemoveRoots(ctx, "file:///a"); err != nil {
				t.Fatal(err)
			}
			if got := listed(); got != "file:///b" {
				t.Fatalf("after RemoveRoots: %q", got)
			}
			// No change, no notification.
			if err := s.SetRoots(ctx, []mcp.Root{{URI: "file:///b"}}); err != nil {
				t.Fatal(err)
			}
			if err := s.SetRoots(ctx, []mcp.Root{{URI: "https://example.com/"}}); err == nil {
				t.Fatal("a root that is not file:// was accepted")
			}

			var notes int
			var caps mcp.ClientCapabilities
			for _, r := range srv.Received() {
				switch r.Msg.Method {
				case mcp.NotificationRootsListChanged:
					notes++
				case mcp.MethodInitialize:
					var p mcp.InitializeParams
					if err := r.Params(&p); err != nil {
						t.Fatal(err)
					}
					caps = p.Capabilities
				}
			}
			if v == mcp.Version20260728 {
				if notes != 0 {
					t.Fatalf("%d roots/list_changed notifications on 2026-07-28", notes)
				}
				return
			}
			// Notifications are written before SetRoots returns, and the
			// pipe keeps order: the later tools/call was recorded after them.
			if notes != 2 {
				t.Fatalf("%d roots/list_changed notifications, want 2", notes)
			}
			if caps.Roots == nil || !caps.Roots.ListChanged {
				t.Fatalf("roots capability %+v, want listChanged", caps.Roots)
			}
		})
	}
}

func TestRootsWithoutList(t *testing.T) {
	conn, wait := mcptest.New(mcptest.Options{}).Pipe(context.Background())
	defer wait()
	s := connect(t, conn, nil)
	defer s.Close()
	if err := s.AddRoots(context.Background(), mcp.Root{URI: "file:///x"}); !errors.Is(err, transport.ErrCapability) {
		t.Fatalf("AddRoots without Options.Roots: %v", err)
	}
}
