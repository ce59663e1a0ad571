package transport_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// A call of a tool not seen listed lists the tools when that matters
// (unlisted.go); the real servers' side of it (server-everything's and mcp-go's task tools,
// mcp-go's broken output) is in interop. These pin the bounds.

// listedTools answers tools/list with one tool, "known", which has an
// output schema, and tools/call with its arguments as structuredContent.
func listedTools(m *mcp.Message) *mcp.Message {
	switch m.Method {
	case mcp.MethodToolsList:
		return result(m.ID, map[string]any{"tools": []any{map[string]any{
			"name": "known", "inputSchema": map[string]any{"type": "object"},
			"outputSchema": json.RawMessage(countSchema),
		}}})
	case mcp.MethodToolsCall:
		var p mcp.CallToolParams
		_ = json.Unmarshal(m.Params, &p)
		return result(m.ID, map[string]any{"content": []any{}, "structuredContent": p.Arguments})
	}
	return rpcError(m.ID, mcp.CodeMethodNotFound, "no", "")
}

func callTool(t *testing.T, s *transport.Session, name, args string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	return err
}

// TestUnlistedToolListsOnceUntilTheListChanges: a tool the listing lacks
// is not listed for again on every call; a tools/list_changed makes the
// next call of an unknown tool list again.
func TestUnlistedToolListsOnceUntilTheListChanges(t *testing.T) {
	f, conn := startFake(t, legacy(mcp.Version20251125, listedTools))
	s := connect(t, conn, nil)
	var oe *transport.OutputSchemaError
	if err := callTool(t, s, "known", `{"n":"x"}`); !errors.As(err, &oe) {
		t.Fatalf("first call of an unlisted tool: %v, want an *OutputSchemaError", err)
	}
	for range 3 {
		if err := callTool(t, s, "ghost", `{"n":"x"}`); err != nil {
			t.Fatal(err)
		}
	}
	if err := callTool(t, s, "known", `{"n":1}`); err != nil {
		t.Fatal(err)
	}
	if n := len(f.messages(mcp.MethodToolsList)); n != 1 {
		t.Fatalf("tools/list sent %d times, want 1", n)
	}

	got := make(chan struct{}, 1)
	defer s.Subscribe(func(n mcp.Notification) {
		if n.Method == mcp.NotificationToolsListChanged {
			got <- struct{}{}
		}
	})()
	note, _ := mcp.NewNotification(mcp.NotificationToolsListChanged, nil)
	if err := f.conn.Write(context.Background(), note); err != nil {
		t.Fatal(err)
	}
	within(t, got, "the list_changed notification")
	if err := callTool(t, s, "ghost", `{"n":"x"}`); err != nil {
		t.Fatal(err)
	}
	if n := len(f.messages(mcp.MethodToolsList)); n != 2 {
		t.Fatalf("tools/list sent %d times, want 2: once more after the list changed", n)
	}
}

// TestUnlistedToolConcurrentCallsListOnce: first calls made at once share
// one listing.
func TestUnlistedToolConcurrentCallsListOnce(t *testing.T) {
	f, conn := startFake(t, legacy(mcp.Version20251125, listedTools))
	s := connect(t, conn, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- callTool(t, s, "known", `{"n":2}`)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := len(f.messages(mcp.MethodToolsList)); n != 1 {
		t.Fatalf("tools/list sent %d times, want 1", n)
	}
}

// TestUnlistedToolSilentListingIsBounded: a server that never answers
// tools/list delays the first structured answer by ProbeTimeout, once;
// the call returns its result, unchecked.
func TestUnlistedToolSilentListingIsBounded(t *testing.T) {
	f, conn := startFake(t, legacy(mcp.Version20251125, func(m *mcp.Message) *mcp.Message {
		if m.Method == mcp.MethodToolsList {
			return nil
		}
		return listedTools(m)
	}))
	s := connect(t, conn, &transport.Options{ProbeTimeout: 100 * time.Millisecond})
	start := time.Now()
	for range 2 {
		if err := callTool(t, s, "known", `{"n":"x"}`); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("two calls took %v", d)
	}
	if n := len(f.messages(mcp.MethodToolsList)); n != 1 {
		t.Fatalf("tools/list sent %d times, want 1", n)
	}
}

// TestUnlistedToolNothingToLearn: a listing is made only when it would
// change something: not for a plain text answer (no structured output to
// check) on a server that does not run tools as tasks, and not for a
// structured one with output validation off.
func TestUnlistedToolNothingToLearn(t *testing.T) {
	t.Run("text", func(t *testing.T) {
		f, conn := startFake(t, legacy(mcp.Version20251125, echoTool))
		s := connect(t, conn, nil)
		if err := callTool(t, s, "echo", `{}`); err != nil {
			t.Fatal(err)
		}
		if n := len(f.messages(mcp.MethodToolsList)); n != 0 {
			t.Fatalf("tools/list sent %d times, want 0", n)
		}
	})
	t.Run("validation off", func(t *testing.T) {
		f, conn := startFake(t, legacy(mcp.Version20251125, listedTools))
		s := connect(t, conn, &transport.Options{SkipOutputValidation: true})
		if err := callTool(t, s, "known", `{"n":"x"}`); err != nil {
			t.Fatal(err)
		}
		if n := len(f.messages(mcp.MethodToolsList)); n != 0 {
			t.Fatalf("tools/list sent %d times, want 0", n)
		}
	})
}
