package mcptest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitLimit bounds every wait in these tests. It only turns a hang into a
// failure; nothing is timed against it.
const waitLimit = 20 * time.Second

// client plays an MCP client by hand: it writes raw messages and reads the
// server's, so the tests see exactly what the server sends.
type client struct {
	t      *testing.T
	srv    *Server
	conn   transport.Conn
	done   chan error
	cancel context.CancelFunc
	next   int64
	// other holds messages read while waiting for a particular response.
	other []*mcp.Message
}

func start(t *testing.T, srv *Server) *client {
	t.Helper()
	return startConn(t, srv, nil)
}

// startConn serves one end of a pipe; wrap, if set, wraps the server's end.
func startConn(t *testing.T, srv *Server, wrap func(transport.Conn) transport.Conn) *client {
	t.Helper()
	cc, sc := transport.Pipe()
	if wrap != nil {
		sc = wrap(sc)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &client{t: t, srv: srv, conn: cc, done: make(chan error, 1), cancel: cancel}
	go func() { c.done <- srv.Serve(ctx, sc) }()
	t.Cleanup(func() {
		cancel()
		cc.Close()
		if err := c.wait(); err != nil {
			t.Errorf("Serve returned %v", err)
		}
	})
	return c
}

// wait waits for Serve to return.
func (c *client) wait() error {
	select {
	case err := <-c.done:
		c.done <- err // keep it for a second wait
		return err
	case <-time.After(waitLimit):
		c.t.Fatal("Serve did not return")
		return nil
	}
}

func (c *client) write(m *mcp.Message) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := c.conn.Write(ctx, m); err != nil {
		c.t.Fatalf("write %s: %v", m.Method, err)
	}
}

func (c *client) send(method string, params any) mcp.ID {
	c.t.Helper()
	c.next++
	id := mcp.Int64ID(c.next)
	m, err := mcp.NewRequest(id, method, params)
	if err != nil {
		c.t.Fatal(err)
	}
	c.write(m)
	return id
}

func (c *client) notify(method string, params any) {
	c.t.Helper()
	m, err := mcp.NewNotification(method, params)
	if err != nil {
		c.t.Fatal(err)
	}
	c.write(m)
}

func (c *client) read() *mcp.Message {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	m, err := c.conn.Read(ctx)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return m
}

// await reads until the response to id and returns it; whatever came
// before is kept in c.other.
func (c *client) await(id mcp.ID) *mcp.Message {
	c.t.Helper()
	for {
		m := c.read()
		if m.IsResponse() && m.ID == id {
			return m
		}
		c.other = append(c.other, m)
	}
}

func (c *client) call(method string, params any) *mcp.Message {
	c.t.Helper()
	return c.await(c.send(method, params))
}

// result calls and decodes a successful result.
func (c *client) result(method string, params, out any) {
	c.t.Helper()
	m := c.call(method, params)
	if m.Error != nil {
		c.t.Fatalf("%s: %v", method, m.Error)
	}
	if err := json.Unmarshal(m.Result, out); err != nil {
		c.t.Fatalf("%s: decode %s: %v", method, m.Result, err)
	}
}

// rpcErr calls and expects a JSON-RPC error with the given code.
func (c *client) rpcErr(method string, params any, code int64) *mcp.Error {
	c.t.Helper()
	m := c.call(method, params)
	if m.Error == nil {
		c.t.Fatalf("%s: got result %s, want error %d", method, m.Result, code)
	}
	if m.Error.Code != code {
		c.t.Fatalf("%s: got error %v, want code %d", method, m.Error, code)
	}
	return m.Error
}

// initialize runs the legacy handshake and returns the negotiated version.
func (c *client) initialize(version string, caps mcp.ClientCapabilities) string {
	c.t.Helper()
	var res mcp.InitializeResult
	c.result(mcp.MethodInitialize, mcp.InitializeParams{
		ProtocolVersion: version,
		Capabilities:    caps,
		ClientInfo:      mcp.Implementation{Name: "test", Version: "1"},
	}, &res)
	c.notify(mcp.NotificationInitialized, nil)
	return res.ProtocolVersion
}

// modernMeta returns the _meta a 2026-07-28 request carries.
func modernMeta(caps mcp.ClientCapabilities) mcp.Meta {
	v, _ := json.Marshal(mcp.Version20260728)
	c, _ := json.Marshal(caps)
	info, _ := json.Marshal(mcp.Implementation{Name: "test", Version: "1"})
	return mcp.Meta{mcp.MetaProtocolVersion: v, mcp.MetaClientCapabilities: c, mcp.MetaClientInfo: info}
}

func toolCall(name string, args any, meta mcp.Meta) map[string]any {
	p := map[string]any{"name": name}
	if args != nil {
		p["arguments"] = args
	}
	if meta != nil {
		p["_meta"] = meta
	}
	return p
}

func toolResult(t *testing.T, m *mcp.Message) *mcp.CallToolResult {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("tools/call: %v", m.Error)
	}
	var r mcp.CallToolResult
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatalf("decode %s: %v", m.Result, err)
	}
	return &r
}

func ctxLimit(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	t.Cleanup(cancel)
	return ctx
}

// rawConn is a server-side Conn that also implements RawWriter, standing
// in for a byte-stream Conn.
type rawConn struct {
	transport.Conn
	raw chan []byte
}

func (r *rawConn) WriteRaw(ctx context.Context, b []byte) error {
	select {
	case r.raw <- append([]byte(nil), b...):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

var _ RawWriter = (*rawConn)(nil)

func isClosed(err error) bool {
	return errors.Is(err, transport.ErrClosed) || errors.Is(err, transport.ErrConnectionLost)
}
