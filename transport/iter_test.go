package transport_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
)

func noop(context.Context, *mcptest.CallRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{}, nil
}

// pagedServer serves n tools, pageSize a page, in the given era.
func pagedServer(t *testing.T, version string, n, pageSize int) (*mcptest.Server, *transport.Session) {
	t.Helper()
	srv := mcptest.New(mcptest.Options{PageSize: pageSize})
	for i := range n {
		if err := srv.AddTool(mcp.Tool{Name: fmt.Sprintf("t%02d", i)}, noop); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	conn, wait := srv.Pipe(ctx)
	s := connect(t, conn, &transport.Options{ProtocolVersion: version})
	t.Cleanup(func() { s.Close(); cancel(); wait() })
	return srv, s
}

func listRequests(srv *mcptest.Server) []mcptest.Record {
	var out []mcptest.Record
	for _, r := range srv.Received() {
		if r.Msg.Method == mcp.MethodToolsList {
			out = append(out, r)
		}
	}
	return out
}

func TestToolsIteratorFetchesAsItGoes(t *testing.T) {
	for _, v := range []string{mcp.Version20251125, mcp.Version20260728} {
		t.Run(v, func(t *testing.T) {
			srv, s := pagedServer(t, v, 7, 2)
			var names []string
			for tool, err := range s.Tools(context.Background()) {
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, tool.Name)
			}
			if len(names) != 7 || names[0] != "t00" || names[6] != "t06" {
				t.Fatalf("names = %v", names)
			}
			if n := len(listRequests(srv)); n != 4 {
				t.Fatalf("%d tools/list requests for 4 pages", n)
			}
		})
	}
}

// Breaking out of the loop stops the iterator: no further page is asked
// for, and nothing it started is left running.
func TestToolsIteratorEarlyBreak(t *testing.T) {
	// Legacy: the session runs no listen stream that could start while
	// goroutines are counted.
	srv, s := pagedServer(t, mcp.Version20251125, 10, 2)
	ignore := goleak.IgnoreCurrent()
	seen := 0
	for _, err := range s.Tools(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		seen++
		if seen == 3 {
			break
		}
	}
	if n := len(listRequests(srv)); n != 2 {
		t.Fatalf("%d tools/list requests after breaking on the second page, want 2", n)
	}
	goleak.VerifyNone(t, ignore)
	// The session is unaffected.
	if tools, err := s.ListTools(context.Background()); err != nil || len(tools) != 10 {
		t.Fatalf("ListTools after the break: %d tools, %v", len(tools), err)
	}
}

// A cursor the server no longer knows (-32602) restarts the listing once
// from the first page; the iterator does not yield a tool twice.
func TestToolsIteratorInvalidCursorRestarts(t *testing.T) {
	srv, s := pagedServer(t, mcp.Version20251125, 5, 2)
	var names []string
	for tool, err := range s.Tools(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
		if len(names) == 2 {
			// The list changes under the cursor (offset 2 of 1 tool): the
			// next page request is refused.
			for _, n := range []string{"t00", "t01", "t02", "t03", "t04"} {
				srv.RemoveTool(n)
			}
			if err := srv.AddTool(mcp.Tool{Name: "new"}, noop); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !slices.Equal(names, []string{"t00", "t01", "new"}) {
		t.Fatalf("names = %v", names)
	}
	reqs := listRequests(srv)
	if len(reqs) != 3 {
		t.Fatalf("%d tools/list requests, want 3 (page, refused page, first page again)", len(reqs))
	}
	if p := reqs[2].Msg.Params; strings.Contains(string(p), "cursor") {
		t.Fatalf("the restart carried a cursor: %s", p)
	}
}

// A server that refuses every cursor ends the listing with an error after
// one restart, rather than looping.
func TestListToolsInvalidCursorRestartsOnce(t *testing.T) {
	f, conn := startFake(t, legacy(mcp.Version20251125, func(m *mcp.Message) *mcp.Message {
		if m.Method != mcp.MethodToolsList {
			return rpcError(m.ID, mcp.CodeMethodNotFound, "no", "")
		}
		var p mcp.ListParams
		_ = json.Unmarshal(m.Params, &p)
		if p.Cursor != nil {
			return rpcError(m.ID, mcp.CodeInvalidParams, "invalid cursor", "")
		}
		return result(m.ID, map[string]any{"tools": []any{map[string]any{"name": "a", "inputSchema": map[string]any{"type": "object"}}}, "nextCursor": "c1"})
	}))
	s := connect(t, conn, nil)
	_, err := s.ListTools(context.Background())
	var rpcErr *mcp.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeInvalidParams {
		t.Fatalf("err = %v", err)
	}
	if n := len(f.messages(mcp.MethodToolsList)); n != 4 {
		t.Fatalf("%d tools/list requests, want 4 (two tries of two pages)", n)
	}
	// One page with a stale cursor: the caller decides.
	c := "c1"
	if _, err := s.ListToolsPage(context.Background(), &mcp.ListParams{Cursor: &c}); !errors.Is(err, transport.ErrInvalidCursor) {
		t.Fatalf("ListToolsPage with a refused cursor: %v", err)
	}
}

func TestListToolsPage(t *testing.T) {
	for _, v := range []string{mcp.Version20251125, mcp.Version20260728} {
		t.Run(v, func(t *testing.T) {
			_, s := pagedServer(t, v, 5, 2)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var names []string
			var cursor *string
			for pages := 0; ; pages++ {
				page, err := s.ListToolsPage(ctx, &mcp.ListParams{Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				for _, tool := range page.Tools {
					names = append(names, tool.Name)
				}
				if page.NextCursor == nil {
					break
				}
				if pages > 5 {
					t.Fatal("no end of the list")
				}
				cursor = page.NextCursor
			}
			if len(names) != 5 {
				t.Fatalf("names = %v", names)
			}
		})
	}
}

// A server without the capability has nothing to iterate over, and is
// asked nothing.
func TestIteratorsWithoutCapability(t *testing.T) {
	_, s := pagedServer(t, mcp.Version20251125, 1, 0)
	for _, err := range s.Resources(context.Background()) {
		t.Fatalf("resource yielded from a server without resources (%v)", err)
	}
	for _, err := range s.Prompts(context.Background()) {
		t.Fatalf("prompt yielded from a server without prompts (%v)", err)
	}
	page, err := s.ListPromptsPage(context.Background(), nil)
	if err != nil || len(page.Prompts) != 0 || page.NextCursor != nil {
		t.Fatalf("page %+v, %v", page, err)
	}
}

// Tools fetches a page at a time; a loop that stops early asks for no more.
func ExampleSession_Tools() {
	ctx := context.Background()
	srv := mcptest.New(mcptest.Options{PageSize: 2})
	for _, name := range []string{"alpha", "beta", "gamma", "delta"} {
		if err := srv.AddTool(mcp.Tool{Name: name}, noop); err != nil {
			log.Fatal(err)
		}
	}
	conn, wait := srv.Pipe(ctx)
	defer wait()
	s, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	for tool, err := range s.Tools(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(tool.Name)
		if tool.Name == "gamma" {
			break
		}
	}
	// Output:
	// alpha
	// beta
	// gamma
}
