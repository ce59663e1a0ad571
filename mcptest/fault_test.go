package mcptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

func echoParams(msg string) map[string]any {
	return toolCall(ToolEcho, map[string]any{"message": msg}, nil)
}

func TestFaultDelayStillAnswers(t *testing.T) {
	srv := NewReference(Options{})
	srv.FaultTool(ToolEcho, Fault{Delay: time.Millisecond})
	c := start(t, srv)
	c.initialize(mcp.Version20251125, mcp.ClientCapabilities{})
	if r := toolResult(t, c.call(mcp.MethodToolsCall, echoParams("late"))); r.Text() != "late" {
		t.Fatal(r)
	}
}

func TestFaultDropNeverAnswers(t *testing.T) {
	srv := NewReference(Options{})
	srv.FaultTool(ToolEcho, Fault{Drop: true, Times: 1})
	c := start(t, srv)
	c.initialize(mcp.Version20251125, mcp.ClientCapabilities{})
	dropped := c.send(mcp.MethodToolsCall, echoParams("lost"))
	// Messages on one pipe arrive in order, and the server answers each
	// request on its own goroutine; the second echo's answer therefore
	// says nothing of the first. What does: no answer to it arrives
	// before the connection is closed.
	if r := toolResult(t, c.call(mcp.MethodToolsCall, echoParams("kept"))); r.Text() != "kept" {
		t.Fatal(r)
	}
	c.conn.Close()
	c.wait()
	ctx := ctxLimit(t)
	for {
		m, err := c.conn.Read(ctx)
		if err != nil {
			break
		}
		if m.ID == dropped {
			t.Fatalf("dropped request answered: %+v", m)
		}
	}
}

func TestFaultJunkOnMessageConnIsUnknownID(t *testing.T) {
	srv := NewReference(Options{})
	srv.FaultMethod(mcp.MethodPing, Fault{Junk: true})
	c := start(t, srv)
	id := c.send(mcp.MethodPing, nil)
	junk := c.read()
	if !junk.IsResponse() || !junk.ID.IsString() || junk.ID == id {
		t.Fatalf("junk %+v", junk)
	}
	if m := c.read(); m.ID != id {
		t.Fatalf("got %+v, want the real answer", m)
	}
}

func TestFaultJunkOnByteStreamIsNotJSON(t *testing.T) {
	srv := NewReference(Options{})
	srv.FaultMethod(mcp.MethodPing, Fault{Junk: true})
	raw := make(chan []byte, 1)
	c := startConn(t, srv, func(conn transport.Conn) transport.Conn { return &rawConn{Conn: conn, raw: raw} })
	id := c.send(mcp.MethodPing, nil)
	if m := c.read(); m.ID != id {
		t.Fatalf("got %+v", m)
	}
	b := <-raw
	if json.Valid(b) || b[len(b)-1] != '\n' {
		t.Fatalf("junk %q", b)
	}
}

func TestFaultWrongID(t *testing.T) {
	srv := NewReference(Options{})
	srv.FaultMethod(mcp.MethodPing, Fault{WrongID: true, AlsoRight: true, Times: 1})
	srv.FaultMethod(mcp.MethodToolsList, Fault{WrongID: true})
	c := start(t, srv)
	id := c.send(mcp.MethodPing, nil)
	wrong := c.read()
	if wrong.ID == id || !wrong.IsResponse() {
		t.Fatalf("first answer %+v", wrong)
	}
	if m := c.read(); m.ID != id {
		t.Fatalf("second answer %+v", m)
	}
	// Times: 1 used the ping fault up.
	c.call(mcp.MethodPing, nil)
	if len(c.other) != 0 {
		t.Fatalf("extra %v", c.other)
	}
	// Without AlsoRight, only the wrong answer comes.
	listID := c.send(mcp.MethodToolsList, metaParams(modernMeta(mcp.ClientCapabilities{})))
	m := c.read()
	if m.ID == listID || m.Result == nil {
		t.Fatalf("got %+v", m)
	}
	pingID := c.send(mcp.MethodPing, nil)
	if m := c.read(); m.ID != pingID {
		t.Fatalf("got %+v, want only the ping's answer", m)
	}
}

func TestFaultDieClosesConnection(t *testing.T) {
	srv := NewReference(Options{})
	srv.FaultTool(ToolSleep, Fault{Die: true})
	c := start(t, srv)
	c.initialize(mcp.Version20251125, mcp.ClientCapabilities{})
	c.send(mcp.MethodToolsCall, toolCall(ToolSleep, map[string]any{"ms": 1}, nil))
	if _, err := c.conn.Read(ctxLimit(t)); !isClosed(err) {
		t.Fatalf("Read after the server died: %v", err)
	}
	if err := c.wait(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

func TestFaultMostRecentRuleWins(t *testing.T) {
	srv := NewReference(Options{})
	srv.FaultMethod(mcp.MethodToolsCall, Fault{Drop: true})
	srv.FaultTool(ToolEcho, Fault{Delay: time.Nanosecond})
	c := start(t, srv)
	c.initialize(mcp.Version20251125, mcp.ClientCapabilities{})
	if r := toolResult(t, c.call(mcp.MethodToolsCall, echoParams("x"))); r.Text() != "x" {
		t.Fatal(r)
	}
	srv.ClearFaults()
	if r := toolResult(t, c.call(mcp.MethodToolsCall, toolCall(ToolFail, nil, nil))); !r.IsError {
		t.Fatal(r)
	}
}

func TestServeReturnsWhenContextEnds(t *testing.T) {
	srv := NewReference(Options{})
	cc, sc := transport.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, sc) }()
	// A call in flight must not keep Serve alive.
	id, _ := mcp.NewRequest(mcp.Int64ID(1), mcp.MethodInitialize, mcp.InitializeParams{ProtocolVersion: mcp.Version20251125})
	cc.Write(ctxLimit(t), id)
	if _, err := cc.Read(ctxLimit(t)); err != nil {
		t.Fatal(err)
	}
	sleep, _ := mcp.NewRequest(mcp.Int64ID(2), mcp.MethodToolsCall, toolCall(ToolSleep, map[string]any{"ms": 3600000}, nil))
	cc.Write(ctxLimit(t), sleep)
	if _, err := srv.WaitMethod(ctxLimit(t), mcp.MethodToolsCall); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-ctxLimit(t).Done():
		t.Fatal("Serve did not return")
	}
	if _, err := cc.Read(ctxLimit(t)); !isClosed(err) {
		t.Fatalf("client Read after Serve returned: %v", err)
	}
	if len(srv.Peers()) != 0 {
		t.Fatal("peer still listed")
	}
}

func TestServeSeveralConnections(t *testing.T) {
	srv := NewReference(Options{})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range 4 {
		c := start(t, srv)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := echoLoop(c.conn, i, i%2 == 0); err != nil {
				errs <- fmt.Errorf("conn %d: %w", i, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	peers := srv.Peers()
	if len(peers) != 4 {
		t.Fatalf("%d peers", len(peers))
	}
	versions := map[string]int{}
	for _, p := range peers {
		versions[p.ProtocolVersion()]++
	}
	if versions[mcp.Version20260728] != 2 || versions[mcp.Version20250618] != 2 {
		t.Fatalf("versions %v", versions)
	}
}

// echoLoop runs a handshake and 20 echo calls on conn, returning the first
// error: it runs off the test's goroutine, where t.Fatal must not be used.
func echoLoop(conn transport.Conn, i int, modern bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	roundTrip := func(m *mcp.Message) (*mcp.Message, error) {
		if err := conn.Write(ctx, m); err != nil {
			return nil, err
		}
		r, err := conn.Read(ctx)
		if err != nil {
			return nil, err
		}
		if r.ID != m.ID || r.Error != nil {
			return nil, fmt.Errorf("%s: got %+v", m.Method, r)
		}
		return r, nil
	}
	var meta mcp.Meta
	if modern {
		meta = modernMeta(mcp.ClientCapabilities{})
	} else {
		init, _ := mcp.NewRequest(mcp.Int64ID(100), mcp.MethodInitialize, mcp.InitializeParams{ProtocolVersion: mcp.Version20250618})
		if _, err := roundTrip(init); err != nil {
			return err
		}
		n, _ := mcp.NewNotification(mcp.NotificationInitialized, nil)
		if err := conn.Write(ctx, n); err != nil {
			return err
		}
	}
	for j := range 20 {
		msg := strings.Repeat("m", i*20+j)
		req, _ := mcp.NewRequest(mcp.Int64ID(int64(j)), mcp.MethodToolsCall, toolCall(ToolEcho, map[string]any{"message": msg}, meta))
		m, err := roundTrip(req)
		if err != nil {
			return err
		}
		var r mcp.CallToolResult
		if json.Unmarshal(m.Result, &r) != nil || r.Text() != msg {
			return fmt.Errorf("call %d: %s", j, m.Result)
		}
	}
	return nil
}

func TestHandlerPanicIsAnInternalError(t *testing.T) {
	srv := New(Options{})
	srv.AddTool(mcp.Tool{Name: "boom"}, func(ctx context.Context, req *CallRequest) (*mcp.CallToolResult, error) {
		panic("boom")
	})
	c := start(t, srv)
	c.initialize(mcp.Version20251125, mcp.ClientCapabilities{})
	c.rpcErr(mcp.MethodToolsCall, toolCall("boom", nil, nil), mcp.CodeInternalError)
}

func TestHandlerRPCErrorPassesThrough(t *testing.T) {
	srv := New(Options{})
	srv.AddTool(mcp.Tool{Name: "rpc"}, func(ctx context.Context, req *CallRequest) (*mcp.CallToolResult, error) {
		return nil, fmt.Errorf("wrapped: %w", &mcp.Error{Code: -32042, Message: "url elicitation required", Data: json.RawMessage(`{"elicitations":[]}`)})
	})
	c := start(t, srv)
	c.initialize(mcp.Version20251125, mcp.ClientCapabilities{})
	if e := c.rpcErr(mcp.MethodToolsCall, toolCall("rpc", nil, nil), -32042); string(e.Data) != `{"elicitations":[]}` {
		t.Fatalf("data %s", e.Data)
	}
}

func TestDuplicateRequestIDRefused(t *testing.T) {
	srv := NewReference(Options{})
	c := start(t, srv)
	c.initialize(mcp.Version20251125, mcp.ClientCapabilities{})
	sleep, _ := mcp.NewRequest(mcp.Int64ID(50), mcp.MethodToolsCall, toolCall(ToolSleep, map[string]any{"ms": 3600000}, nil))
	c.write(sleep)
	if _, err := srv.Wait(ctxLimit(t), func(r Record) bool { return r.Msg.ID == mcp.Int64ID(50) }); err != nil {
		t.Fatal(err)
	}
	dup, _ := mcp.NewRequest(mcp.Int64ID(50), mcp.MethodPing, nil)
	c.write(dup)
	m := c.read()
	if m.ID != mcp.Int64ID(50) || m.Error == nil || m.Error.Code != mcp.CodeInvalidRequest {
		t.Fatalf("got %+v", m)
	}
}

func TestAddToolValidates(t *testing.T) {
	srv := New(Options{})
	h := func(ctx context.Context, req *CallRequest) (*mcp.CallToolResult, error) { return nil, nil }
	if err := srv.AddTool(mcp.Tool{}, h); err == nil {
		t.Error("nameless tool accepted")
	}
	if err := srv.AddTool(mcp.Tool{Name: "x"}, nil); err == nil {
		t.Error("nil handler accepted")
	}
	if err := srv.AddTool(mcp.Tool{Name: "x", InputSchema: json.RawMessage(`{`)}, h); err == nil {
		t.Error("bad schema accepted")
	}
	if err := srv.AddTool(mcp.Tool{Name: "x"}, h); err != nil {
		t.Fatal(err)
	}
	if tools := srv.Tools(); len(tools) != 1 || string(tools[0].InputSchema) != `{"type":"object"}` {
		t.Fatalf("tools %+v", tools)
	}
	if !srv.RemoveTool("x") || srv.RemoveTool("x") {
		t.Fatal("RemoveTool")
	}
	if err := srv.Serve(context.Background(), nil); err == nil {
		t.Fatal("Serve(nil) succeeded")
	}
}

func TestWaitEndsWithContext(t *testing.T) {
	srv := New(Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := srv.WaitMethod(ctx, "never"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait: %v", err)
	}
}
