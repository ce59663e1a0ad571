package orchestrator_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/orchestrator"
	"github.com/tako-mcp/tako/transport"
)

// newResult is what New returned.
type newResult struct {
	agent *orchestrator.Agent
	err   error
}

// newInBackground runs New(context.Background(), cfg) on a goroutine of
// its own, so that a New that hangs fails the test at its deadline
// instead of blocking it.
func newInBackground(cfg orchestrator.Config) <-chan newResult {
	done := make(chan newResult, 1)
	go func() {
		a, err := orchestrator.New(context.Background(), cfg)
		done <- newResult{a, err}
	}()
	return done
}

// TestNewWithoutDeadlineTimesOutSilentServer pins New's bound on
// connecting when its context has no deadline (ConnectTimeout). A server
// that never answers initialize must make New fail with a timeout, not
// hang the program forever. The default bound is 60 seconds, too long
// for a test: an explicit ConnectTimeout takes the same path, and
// TestNewDefaultConnectTimeout checks the default itself.
func TestNewWithoutDeadlineTimesOutSilentServer(t *testing.T) {
	// Far past ConnectTimeout, and shorter than testContext's 30s, so
	// that a hang fails quickly.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv := calcServer("")
	srv.FaultMethod(mcp.MethodInitialize, mcptest.Fault{Drop: true})
	const timeout = 200 * time.Millisecond
	start := time.Now()
	done := newInBackground(orchestrator.Config{
		Provider:       &script{},
		MCPServers:     []orchestrator.MCPServer{pipeServer(t, "calc", srv)},
		ConnectTimeout: timeout,
		// The legacy era: the handshake is initialize, which the server
		// drops (the negotiated era would probe server/discover first).
		Session: transport.Options{ProtocolVersion: mcp.Version20251125},
	})
	select {
	case res := <-done:
		if res.err == nil {
			res.agent.Close()
			t.Fatal("New succeeded with a server that never answers initialize")
		}
		if !errors.Is(res.err, context.DeadlineExceeded) {
			t.Errorf("New: %v, want an error wrapping context.DeadlineExceeded", res.err)
		}
		if d := time.Since(start); d < timeout {
			t.Errorf("New failed after %v, before ConnectTimeout %v", d, timeout)
		}
	case <-ctx.Done():
		t.Fatal("New hung on a server that never answers initialize: ConnectTimeout did not bound it")
	}
}

// TestNewDefaultConnectTimeout pins the default of ConnectTimeout: when
// New's context has no deadline and ConnectTimeout is zero, connecting is
// bounded by 60 seconds, neither left unbounded (a silent server would
// hang New forever) nor bounded by zero (every connection would fail at
// once).
func TestNewDefaultConnectTimeout(t *testing.T) {
	ctx := testContext(t)
	type seen struct {
		deadline time.Time
		ok       bool
	}
	seenCh := make(chan seen, 1)
	inner := pipeServer(t, "calc", calcServer(""))
	server := orchestrator.MCPServer{Name: "calc", Connect: func(ctx context.Context, opts *transport.Options) (transport.Transport, error) {
		d, ok := ctx.Deadline()
		seenCh <- seen{d, ok}
		return inner.Connect(ctx, opts)
	}}
	start := time.Now()
	done := newInBackground(orchestrator.Config{Provider: &script{}, MCPServers: []orchestrator.MCPServer{server}})
	select {
	case res := <-done:
		if res.err != nil {
			t.Fatalf("New with the default ConnectTimeout: %v", res.err)
		}
		res.agent.Close()
	case <-ctx.Done():
		t.Fatal("New did not return")
	}
	s := <-seenCh
	if !s.ok {
		t.Fatal("New connected with no deadline: the default ConnectTimeout did not apply")
	}
	if d := s.deadline.Sub(start); d < 59*time.Second || d > 61*time.Second {
		t.Errorf("New connected with a deadline %v away, want the default 60s", d)
	}
}
