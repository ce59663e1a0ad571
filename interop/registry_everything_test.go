package interop

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/registry"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
)

// gatedConn holds back the client's notifications/initialized until
// release is called. The reference server registers its conditional tools
// (trigger-sampling-request, get-roots-list, ...) only once that
// notification arrives, and announces each with
// notifications/tools/list_changed; holding it lets a test take the first
// tool list before the change, so that only the notification can bring the
// new tools in.
type gatedConn struct {
	transport.Conn
	mu       sync.Mutex
	held     []byte
	released bool
}

func (g *gatedConn) Write(ctx context.Context, msg *mcp.Message) error {
	if msg.Method == mcp.NotificationInitialized {
		g.mu.Lock()
		if !g.released {
			// Write must not retain msg: keep its encoding.
			g.held = msg.AppendJSON(nil)
			g.mu.Unlock()
			return nil
		}
		g.mu.Unlock()
	}
	return g.Conn.Write(ctx, msg)
}

func (g *gatedConn) release(ctx context.Context) error {
	g.mu.Lock()
	held := g.held
	g.released = true
	g.mu.Unlock()
	if held == nil {
		return nil
	}
	msg, err := mcp.DecodeMessage(held)
	if err != nil {
		return err
	}
	return g.Conn.Write(ctx, msg)
}

func TestRegistryEverythingListChanged(t *testing.T) {
	command, args := everything(t)
	ctx := testContext(t)
	conn, err := stdio.Start(ctx, &stdio.Options{Command: command, Args: args})
	if err != nil {
		t.Fatal(err)
	}
	gate := &gatedConn{Conn: conn}
	model := &fakeModel{}
	roots := &rootsClient{}
	s, err := transport.Connect(ctx, gate, &transport.Options{
		// Declaring sampling and roots makes the server add the tools
		// that use them.
		Handlers: transport.Handlers{Sampling: model.sample, Roots: roots.list},
	})
	if err != nil {
		t.Fatal(err)
	}
	refreshed := make(chan error, 64)
	r := registry.New(registry.Options{OnRefresh: func(_ string, err error) { refreshed <- err }})
	defer r.Close()
	if err := r.AddServer(ctx, "everything", s, nil); err != nil {
		t.Fatal(err)
	}
	if has(r, "trigger-sampling-request") {
		t.Fatal("the conditional tools are listed before notifications/initialized; the test cannot show the refresh")
	}
	if !has(r, "echo") {
		t.Fatalf("tools: %v", defNames(r))
	}
	if err := gate.release(ctx); err != nil {
		t.Fatal(err)
	}
	for !has(r, "trigger-sampling-request") || !has(r, "get-roots-list") {
		select {
		case err := <-refreshed:
			if err != nil {
				t.Fatalf("refresh: %v", err)
			}
		case <-ctx.Done():
			t.Fatalf("the registry never saw the new tools; it has %v", defNames(r))
		}
	}
	res := r.Dispatch(ctx, registry.Call{ID: "1", Name: "echo", Arguments: json.RawMessage(`{"message":"after refresh"}`)})
	if res.IsError || res.Text() != "Echo: after refresh" {
		t.Errorf("echo after the refresh: %+v", res)
	}
}

func TestRegistryEverythingKilledServer(t *testing.T) {
	command, args := everything(t)
	ctx := testContext(t)
	conn, err := stdio.Start(ctx, &stdio.Options{Command: command, Args: args})
	if err != nil {
		t.Fatal(err)
	}
	pid := conn.Pid()
	s, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := registry.New(registry.Options{})
	defer r.Close()
	if err := r.AddServer(ctx, "everything", s, nil); err != nil {
		t.Fatal(err)
	}
	if res := r.Dispatch(ctx, registry.Call{Name: "get-sum", Arguments: json.RawMessage(`{"a":1,"b":2}`)}); res.IsError {
		t.Fatalf("get-sum before the kill: %+v", res)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-s.Done()
	for _, tool := range []string{"echo", "get-sum"} {
		res := r.Dispatch(ctx, registry.Call{ID: tool, Name: tool, Arguments: json.RawMessage(`{"message":"x","a":1,"b":2}`)})
		if !res.IsError || !strings.Contains(res.Text(), "not running") || res.ID != tool {
			t.Errorf("%s after the kill: %+v, want an error result saying the server is not running", tool, res)
		}
	}
}

func has(r *registry.Registry, name string) bool {
	return slices.Contains(defNames(r), name)
}

func defNames(r *registry.Registry) []string {
	var names []string
	for _, d := range r.Tools() {
		names = append(names, d.Name)
	}
	return names
}
