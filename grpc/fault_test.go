package mcpgrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	mcpgrpc "github.com/tako-mcp/tako/grpc"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
)

// plainBridge serves srv (through a Session) over plain-text gRPC and dials
// it with tako's client.
func plainBridge(t *testing.T, srv *mcptest.Server, version string, h transport.Handlers) (*mcpgrpc.Client, *dropListener) {
	t.Helper()
	deps := mcpgrpc.NewDependents()
	ctx := context.Background()
	conn, wait := srv.Pipe(ctx)
	sess, err := transport.Connect(ctx, conn, &transport.Options{ProtocolVersion: version, Handlers: deps.Handlers()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sess.Close()
		wait()
	})
	addr, lis := startBridge(t, sess, &mcpgrpc.ServerOptions{InsecurePlaintext: true, Dependents: deps})
	c, err := mcpgrpc.Dial(ctx, addr, &mcpgrpc.Options{InsecurePlaintext: true, Handlers: h})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, lis
}

// bound is how long "at once" may take on a slow, shared machine: far less
// than the 60 s the blocked tool would run.
const bound = 20 * time.Second

func TestFaultBackendDies(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{})
	srv.FaultTool(mcptest.ToolSleep, mcptest.Fault{Die: true})
	c, _ := plainBridge(t, srv, "", transport.Handlers{})
	start := time.Now()
	_, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: mcptest.ToolSleep, Arguments: json.RawMessage(`{"ms":60000}`)})
	if !errors.Is(err, transport.ErrConnectionLost) {
		t.Fatalf("err = %v, want ErrConnectionLost", err)
	}
	if d := time.Since(start); d > bound {
		t.Errorf("took %v", d)
	}
	if status.Code(err) != codes.Unavailable {
		t.Errorf("status = %v", status.Code(err))
	}
}

func TestFaultConnectionDropsMidCall(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{})
	c, lis := plainBridge(t, srv, "", transport.Handlers{})
	errc := make(chan error, 1)
	go func() {
		_, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: mcptest.ToolSleep, Arguments: json.RawMessage(`{"ms":60000}`)})
		errc <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	if _, err := srv.Wait(ctx, func(r mcptest.Record) bool {
		return r.Msg.Method == mcp.MethodToolsCall
	}); err != nil {
		t.Fatal(err)
	}
	lis.Drop()
	select {
	case err := <-errc:
		if !errors.Is(err, transport.ErrConnectionLost) {
			t.Fatalf("err = %v, want ErrConnectionLost", err)
		}
	case <-ctx.Done():
		t.Fatal("the call did not fail after the connection dropped")
	}
	// The bridge cancelled the backend call: the server saw the cancellation.
	if _, err := srv.WaitMethod(ctx, mcp.NotificationCancelled); err != nil {
		t.Errorf("backend call not cancelled: %v", err)
	}
}

func TestFaultDeadline(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{})
	c, _ := plainBridge(t, srv, "", transport.Handlers{})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.ToolSleep, Arguments: json.RawMessage(`{"ms":60000}`)})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > bound {
		t.Errorf("took %v", d)
	}
}

func TestFaultClosedClient(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{})
	c, _ := plainBridge(t, srv, "", transport.Handlers{})
	c.Close()
	if _, err := c.ListTools(context.Background()); !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("err = %v, want ErrClosed", err)
	}
}

// The reference server asks for input in both eras: as a legacy
// server-to-client request, and as a 2026-07-28 input_required round. The
// bridge turns either into dependent_requests.
func TestDependentRequestsBothEras(t *testing.T) {
	for _, version := range []string{mcp.Version20251125, mcp.Version20260728} {
		t.Run(version, func(t *testing.T) {
			srv := mcptest.NewReference(mcptest.Options{})
			c, _ := plainBridge(t, srv, version, transport.Handlers{
				Elicitation: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"name": "Ada"}}, nil
				},
				Sampling: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
					return &mcp.CreateMessageResult{Role: "assistant", Content: json.RawMessage(`{"type":"text","text":"sampled!"}`), Model: "m"}, nil
				},
			})
			ctx := context.Background()
			res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.ToolElicit, Arguments: json.RawMessage(`{"message":"who are you?"}`)})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || !strings.Contains(res.Text(), "Ada") {
				t.Errorf("elicit = %q", res.Text())
			}
			res, err = c.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.ToolSample, Arguments: json.RawMessage(`{"prompt":"hi"}`)})
			if err != nil {
				t.Fatal(err)
			}
			if res.Text() != "sampled!" {
				t.Errorf("sample = %q", res.Text())
			}
		})
	}
}

func TestErrorsAreTyped(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{})
	c, _ := plainBridge(t, srv, "", transport.Handlers{})
	ctx := context.Background()
	_, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "no-such-tool"})
	var rpcErr *mcp.Error
	if !errors.As(err, &rpcErr) {
		t.Fatalf("unknown tool: err = %v, want *mcp.Error", err)
	}
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.ToolFail, Arguments: json.RawMessage(`{"message":"boom"}`)})
	if err != nil || !res.IsError || res.Text() != "boom" {
		t.Fatalf("fail tool = %+v, %v", res, err)
	}
}

// Roots are opt-in on the bridge; with them, a roots/list of the backend
// during a call reaches the gRPC client's Roots handler.
func TestDependentRoots(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{})
	deps := mcpgrpc.NewDependents()
	h := deps.Handlers()
	h.Roots = deps.Roots
	ctx := context.Background()
	conn, wait := srv.Pipe(ctx)
	sess, err := transport.Connect(ctx, conn, &transport.Options{ProtocolVersion: mcp.Version20251125, Handlers: h})
	if err != nil {
		t.Fatal(err)
	}
	defer wait()
	defer sess.Close()
	addr, _ := startBridge(t, sess, &mcpgrpc.ServerOptions{InsecurePlaintext: true, Dependents: deps})
	c, err := mcpgrpc.Dial(ctx, addr, &mcpgrpc.Options{InsecurePlaintext: true, Handlers: transport.Handlers{
		Roots: func(context.Context) ([]mcp.Root, error) {
			return []mcp.Root{{URI: "file:///work", Name: "work"}}, nil
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.ToolRoots})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text(), "file:///work") {
		t.Errorf("roots = %q", res.Text())
	}
}

// Concurrent calls to a 2026-07-28 backend each get their own sampling
// request answered: the bridge ties an input request to the call that
// asked, not to whichever call is oldest.
func TestConcurrentDependentRequestsModern(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{})
	c, _ := plainBridge(t, srv, mcp.Version20260728, transport.Handlers{
		Sampling: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			blocks, err := p.Messages[0].Blocks()
			if err != nil {
				return nil, err
			}
			text, _ := json.Marshal(mcp.TextContent("re: " + blocks[0].Text))
			return &mcp.CreateMessageResult{Role: "assistant", Content: text, Model: "m"}, nil
		},
	})
	const n = 8
	errs := make(chan error, n)
	for i := range n {
		go func() {
			prompt := "prompt-" + strconv.Itoa(i)
			res, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: mcptest.ToolSample, Arguments: json.RawMessage(`{"prompt":"` + prompt + `"}`)})
			switch {
			case err != nil:
				errs <- err
			case !strings.Contains(res.Text(), "re: ") || !strings.Contains(res.Text(), prompt):
				errs <- errors.New("call " + prompt + " got " + res.Text())
			default:
				errs <- nil
			}
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
