package orchestrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tako-mcp/tako/dial"
	mcpgrpc "github.com/tako-mcp/tako/grpc"
	"github.com/tako-mcp/tako/internal/testserve"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/orchestrator"
	"github.com/tako-mcp/tako/registry"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/websocket"
)

// wsServer serves srv over WebSocket on loopback (the websocket package's
// bridge Handler, one in-memory backend per client) and returns its URL and
// a channel that receives once for each client whose backend has ended.
func wsServer(t *testing.T, srv *mcptest.Server) (string, <-chan struct{}) {
	t.Helper()
	ended := make(chan struct{}, 16)
	h := &websocket.Handler{Backend: func(ctx context.Context) (transport.Conn, error) {
		conn, wait := srv.Pipe(context.Background())
		go func() { wait(); ended <- struct{}{} }()
		return conn, nil
	}}
	hs := httptest.NewServer(h)
	t.Cleanup(func() { hs.Close(); h.Close() })
	return "ws" + strings.TrimPrefix(hs.URL, "http") + "/mcp", ended
}

// grpcServer serves srv over plain-text gRPC on loopback and returns the
// address.
func grpcServer(t *testing.T, srv *mcptest.Server) string {
	t.Helper()
	ctx := context.Background()
	conn, wait := srv.Pipe(ctx)
	sess, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close(); wait() })
	return testserve.GRPC(t, nil, sess, &mcpgrpc.ServerOptions{InsecurePlaintext: true})
}

// Issue 21: the agent dialled stdio and Streamable HTTP only; a WebSocket
// or gRPC server could not be given to it. Now every kind dial knows is a
// Server, and the URL shorthand goes by its scheme.
func TestAgentReachesWebSocketAndGRPC(t *testing.T) {
	wsURL, _ := wsServer(t, calcServer(""))
	addr := grpcServer(t, calcServer(""))
	model := &script{turns: []func(*orchestrator.Request) (*orchestrator.Response, error){
		callTools(
			orchestrator.ToolCall{ID: "1", Name: "ws__add", Arguments: json.RawMessage(`{"a":1,"b":2}`)},
			orchestrator.ToolCall{ID: "2", Name: "grpc__add", Arguments: json.RawMessage(`{"a":3,"b":4}`)},
			orchestrator.ToolCall{ID: "3", Name: "short__add", Arguments: json.RawMessage(`{"a":5,"b":6}`)},
		),
		answer("3, 7 and 11"),
	}}
	agent, err := orchestrator.New(testContext(t), orchestrator.Config{
		Provider: model,
		MCPServers: []orchestrator.MCPServer{
			{Name: "ws", Server: dial.Server{URL: wsURL}},
			{Name: "grpc", Server: dial.Server{Kind: dial.GRPC, URL: addr, TLS: &dial.TLS{Plaintext: true}}},
			{Name: "short", URL: wsURL},
		},
		Naming: registry.Prefix("__"),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	res, err := agent.Run(testContext(t), "add")
	if err != nil {
		t.Fatal(err)
	}
	results := res.Messages[2].ToolResults
	var got []string
	for _, r := range results {
		if r.IsError {
			t.Errorf("%s failed: %s", r.Name, r.Text())
		}
		got = append(got, r.Text())
	}
	if !slices.Equal(got, []string{"3", "7", "11"}) {
		t.Errorf("results %q", got)
	}
}

// TestAgentDerivedNames: servers without a Name are named by dial, made
// unique with -2; a Server's own Name is kept.
func TestAgentDerivedNames(t *testing.T) {
	wsURL, _ := wsServer(t, calcServer(""))
	agent, err := orchestrator.New(testContext(t), orchestrator.Config{
		Provider: &script{},
		MCPServers: []orchestrator.MCPServer{
			{URL: wsURL},
			{Server: dial.Server{URL: wsURL}},
			{Server: dial.Server{Name: "mine", URL: wsURL}},
		},
		Naming: registry.Prefix("__"),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	_, port, _ := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(wsURL, "ws://"), "/mcp"))
	want := []string{"localhost-" + port, "localhost-" + port + "-2", "mine"}
	if got := agent.Registry().Servers(); !slices.Equal(got, want) {
		t.Errorf("servers %q, want %q", got, want)
	}
}

// TestAgentWithProgramRegistry: the program's registry, with a server and
// a tool of its own, serves the agent, which adds its own server and
// removes only that one on Close.
func TestAgentWithProgramRegistry(t *testing.T) {
	ctx := testContext(t)
	var agentPtr atomic.Pointer[orchestrator.Agent]
	reg := registry.New(registry.Options{Naming: registry.Prefix("__"), OnNotification: func(server string, n mcp.Notification) {
		if a := agentPtr.Load(); a != nil {
			a.HandleNotification(server, n)
		}
	}})
	defer reg.Close()
	progURL, _ := wsServer(t, calcServer(""))
	pt, err := dial.Dial(ctx, dial.Server{URL: progURL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.AddServer(ctx, "program", pt, nil); err != nil {
		t.Fatal(err)
	}
	now, err := registry.Func("now", "the time", func(ctx context.Context, in struct{}) (string, error) { return "noon", nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.AddTool(now); err != nil {
		t.Fatal(err)
	}

	agentURL, agentEnded := wsServer(t, calcServer(""))
	model := &script{turns: []func(*orchestrator.Request) (*orchestrator.Response, error){
		callTools(
			orchestrator.ToolCall{ID: "1", Name: "program__add", Arguments: json.RawMessage(`{"a":1,"b":1}`)},
			orchestrator.ToolCall{ID: "2", Name: "agents__add", Arguments: json.RawMessage(`{"a":2,"b":2}`)},
			orchestrator.ToolCall{ID: "3", Name: "now"},
		),
		answer("done"),
	}}
	agent, err := orchestrator.New(ctx, orchestrator.Config{
		Provider:   model,
		Registry:   reg,
		MCPServers: []orchestrator.MCPServer{{Name: "agents", URL: agentURL}},
	})
	if err != nil {
		t.Fatal(err)
	}
	agentPtr.Store(agent)
	if agent.Registry() != reg {
		t.Error("Registry() is not the program's")
	}
	res, err := agent.Run(ctx, "go")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res.Messages[2].ToolResults {
		got = append(got, r.Text())
	}
	if !slices.Equal(got, []string{"2", "4", "noon"}) {
		t.Errorf("results %q", got)
	}

	if err := agent.Close(); err != nil {
		t.Fatal(err)
	}
	if err := agent.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	// The agent's server is gone and ended; the program's still answers.
	if got := reg.Servers(); !slices.Equal(got, []string{"program"}) {
		t.Errorf("after Close the registry has %q", got)
	}
	waitFor(t, agentEnded, "the agent's server to end")
	r := reg.Dispatch(ctx, registry.Call{Name: "program__add", Arguments: json.RawMessage(`{"a":20,"b":22}`)})
	if r.IsError || r.Text() != "42" {
		t.Errorf("the program's server after the agent's Close: %+v", r)
	}
}

func waitFor(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// TestAgentRegistryRefusesWhatItCannotHonour: with Config.Registry, a
// naming policy or local tools would be silently ignored or left behind.
func TestAgentRegistryRefusesWhatItCannotHonour(t *testing.T) {
	reg := registry.New(registry.Options{})
	defer reg.Close()
	now, _ := registry.Func("now", "", func(ctx context.Context, in struct{}) (string, error) { return "", nil })
	for _, cfg := range []orchestrator.Config{
		{Provider: &script{}, Registry: reg, Naming: registry.Prefix("__")},
		{Provider: &script{}, Registry: reg, Tools: []registry.Tool{now}},
	} {
		if _, err := orchestrator.New(testContext(t), cfg); err == nil || !strings.Contains(err.Error(), "Config.Registry is set") {
			t.Errorf("err = %v", err)
		}
	}
}

// TestNewCleansUpWhenOneServerFails: a server that cannot be reached fails
// New with an error naming it once, and the server that did connect is
// closed.
func TestNewCleansUpWhenOneServerFails(t *testing.T) {
	wsURL, ended := wsServer(t, calcServer(""))
	dead := testserve.ClosedAddr(t)
	_, err := orchestrator.New(testContext(t), orchestrator.Config{
		Provider: &script{},
		MCPServers: []orchestrator.MCPServer{
			{Name: "good", URL: wsURL},
			{Name: "gone", URL: "ws://" + dead + "/mcp"},
		},
	})
	want := `orchestrator: server "gone" (ws://` + dead + `/mcp): connect: dial tcp ` + dead + `: connect: connection refused`
	if err == nil || err.Error() != want {
		t.Fatalf("err =\n %v\nwant\n %s", err, want)
	}
	var de *dial.Error
	if !errors.As(err, &de) || de.Server != "gone" {
		t.Errorf("%v is not the *dial.Error of gone", err)
	}
	waitFor(t, ended, "the good server to be closed")
}

// TestNewChecksBeforeStarting: a server whose configuration cannot work
// fails New before any server is started.
func TestNewChecksBeforeStarting(t *testing.T) {
	var started atomic.Bool
	_, err := orchestrator.New(testContext(t), orchestrator.Config{
		Provider: &script{},
		MCPServers: []orchestrator.MCPServer{
			{Name: "fine", Connect: func(ctx context.Context, opts *transport.Options) (transport.Transport, error) {
				started.Store(true)
				return nil, errors.New("should not be called")
			}},
			{Name: "bad", Server: dial.Server{URL: "https://h.example/mcp", TLS: &dial.TLS{CertFile: "client.pem"}}},
			{Name: "both", Command: "x", URL: "http://h/mcp"},
		},
	})
	if err == nil || !errors.Is(err, dial.ErrInvalid) || !strings.Contains(err.Error(), `server "bad"`) || !strings.Contains(err.Error(), `server "both": exactly one of`) {
		t.Errorf("err = %v", err)
	}
	if started.Load() {
		t.Error("a server was started although another one's configuration cannot work")
	}
}
