// Package floor is the "floor" of tako's peer benchmarks over stdio and
// WebSocket: an MCP client written by hand with no SDK, the least work a
// client can do. It is a package of its own, with nothing but the standard
// library, so that the footprint binaries (bench/cmd/footprint) can build
// a floor client that carries no other client's code.
package floor

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"
)

// Client is the "floor" of the perf anchors: an MCP client written by
// hand with no SDK, the least work a client can do. It writes
// newline-delimited JSON to the server's stdin with json.Encoder (one Write
// per message), reads stdout with one goroutine (a json.Decoder, which reuses
// its buffer and scanner from message to message, into a small struct whose
// result stays raw), matches responses to callers through a map of pending
// ids, and the caller unmarshals the result into its own small struct. It does the initialize handshake by hand and
// nothing else: no cancellation, no notifications, no server requests, no
// message cap. What tako does beyond this is what it costs.
type Client struct {
	// Send writes one message; wmu serialises it (one message per line,
	// or per frame).
	wmu  sync.Mutex
	Send func(v any) error
	// Stop ends the connection (it makes the reader return) and waits for
	// the peer.
	Stop func() error

	nextID  atomic.Int64
	mu      sync.Mutex
	pending map[int64]chan Response

	done    chan struct{} // closed when the reader goroutine returns
	readErr error         // why it returned; read after done
}

// Request and CallParams are generic so that params and arguments
// are marshalled from their own types, not boxed in interfaces: one
// allocation less each, as a hand-written client for known tools would do.
type Request[P any] struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id"`
	Method  string `json:"method"`
	Params  P      `json:"params"`
}

type Notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
}

// Response is any message from the server. Only responses carry a
// result or an error; the floor never sends ids the server could confuse
// with 0, so a plain int64 is enough.
type Response struct {
	ID     int64           `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type InitializeParams struct {
	ProtocolVersion string         `json:"protocolVersion"`
	Capabilities    struct{}       `json:"capabilities"`
	ClientInfo      Implementation `json:"clientInfo"`
}

type CallParams[A any] struct {
	Name      string `json:"name"`
	Arguments A      `json:"arguments"`
}

type CallResult struct {
	Content []Block `json:"content"`
	IsError bool    `json:"isError"`
}

// Block is a content block of the kinds the benchmark's tools return:
// text, or an image (whose data a hand-written client keeps as the base64
// text it came as until something needs the bytes).
type Block struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Data     string `json:"data"`
	MIMEType string `json:"mimeType"`
}

// Start spawns command with args and returns a client that has made the
// initialize handshake with it at protocol version, over newline-delimited
// JSON on the pipes.
func Start(ctx context.Context, version, command string, args ...string) (*Client, error) {
	cmd := exec.Command(command, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := NewClient()
	c.Send = json.NewEncoder(stdin).Encode
	c.Stop = func() error { return StopProcess(cmd, stdin, c.done) }
	dec := json.NewDecoder(bufio.NewReaderSize(stdout, 64<<10))
	go c.ReadLoop(dec.Decode)
	if err := c.Initialize(ctx, version); err != nil {
		return nil, err
	}
	return c, nil
}

// NewClient returns a client whose Send and Stop the caller sets, and
// whose reading the caller starts with ReadLoop.
func NewClient() *Client {
	return &Client{
		pending: make(map[int64]chan Response),
		done:    make(chan struct{}),
	}
}

// Initialize runs the handshake by hand once the reader runs; on failure it
// closes the client.
func (c *Client) Initialize(ctx context.Context, protocolVersion string) error {
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	raw, err := Call(ctx, c, "initialize", InitializeParams{
		ProtocolVersion: protocolVersion,
		ClientInfo:      Implementation{Name: "bench-floor", Version: "1.0.0"},
	})
	if err == nil {
		err = json.Unmarshal(raw, &init)
	}
	if err == nil && init.ProtocolVersion != protocolVersion {
		err = fmt.Errorf("server answered protocol %q, want %q", init.ProtocolVersion, protocolVersion)
	}
	if err == nil {
		err = c.write(Notification{JSONRPC: "2.0", Method: "notifications/initialized"})
	}
	if err != nil {
		c.Close()
		return fmt.Errorf("floor: initialize: %w", err)
	}
	return nil
}

// ReadLoop delivers each response to the caller waiting for its id, next
// decoding one message at a time into the value it is given, until next
// fails. Messages that answer no pending id (notifications, server
// requests) are dropped; a message that is not JSON ends the session, as
// the decoder cannot resync. One response value serves the whole session:
// it goes to the caller by value, and it is reset before each next, since
// RawMessage's UnmarshalJSON would otherwise append into the bytes the
// caller holds.
func (c *Client) ReadLoop(next func(any) error) {
	defer close(c.done)
	var resp Response
	for {
		resp = Response{}
		if err := next(&resp); err != nil {
			c.readErr = err
			return
		}
		c.deliver(resp)
	}
}

// Done is closed when ReadLoop has returned.
func (c *Client) Done() <-chan struct{} { return c.done }

// deliver hands a response to the caller waiting for its id.
func (c *Client) deliver(resp Response) {
	if resp.Result == nil && resp.Error == nil {
		return
	}
	c.mu.Lock()
	ch := c.pending[resp.ID]
	delete(c.pending, resp.ID)
	c.mu.Unlock()
	if ch != nil {
		ch <- resp
	}
}

// WriteLocked runs fn under the lock that orders the messages written, for
// a Stop that writes on the connection (a WebSocket close frame).
func (c *Client) WriteLocked(fn func() error) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return fn()
}

func (c *Client) write(v any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.Send(v)
}

// Call sends one request and waits for its response's raw result.
func Call[P any](ctx context.Context, c *Client, method string, params P) (json.RawMessage, error) {
	id := c.nextID.Add(1)
	ch := make(chan Response, 1)
	c.mu.Lock()
	c.pending[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}
	if err := c.write(Request[P]{JSONRPC: "2.0", ID: id, Method: method, Params: params}); err != nil {
		forget()
		return nil, err
	}
	select {
	case resp := <-ch:
		if resp.Error != nil {
			return nil, fmt.Errorf("%s: error %d: %s", method, resp.Error.Code, resp.Error.Message)
		}
		return resp.Result, nil
	case <-c.done:
		forget()
		return nil, fmt.Errorf("%s: connection lost: %v", method, c.readErr)
	case <-ctx.Done():
		forget()
		return nil, ctx.Err()
	}
}

// CallTool calls a tool whose result is one block and returns it.
func CallTool[A any](ctx context.Context, c *Client, name string, args A) (Block, error) {
	raw, err := Call(ctx, c, "tools/call", CallParams[A]{Name: name, Arguments: args})
	if err != nil {
		return Block{}, err
	}
	var res CallResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return Block{}, err
	}
	return res.Block(name)
}

// Block is the result's one block.
func (res *CallResult) Block(name string) (Block, error) {
	if res.IsError || len(res.Content) != 1 {
		return Block{}, fmt.Errorf("%s: unexpected result: isError=%v, %d blocks", name, res.IsError, len(res.Content))
	}
	return res.Content[0], nil
}

// ListParams and ListResult are one page of tools/list. The
// tools are decoded as a caller that reads them would: name, description
// and the schema kept raw for whoever validates against it.
type ListParams struct {
	Cursor string `json:"cursor,omitempty"`
}

type ListResult struct {
	Tools      []Tool `json:"tools"`
	NextCursor string `json:"nextCursor"`
}

type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// ListTools lists every tool, following the cursor, and returns how many
// there are.
func (c *Client) ListTools(ctx context.Context) (int, error) {
	var p ListParams
	n := 0
	for {
		raw, err := Call(ctx, c, "tools/list", p)
		if err != nil {
			return n, err
		}
		var res ListResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return n, err
		}
		n += len(res.Tools)
		if res.NextCursor == "" {
			return n, nil
		}
		p.Cursor = res.NextCursor
	}
}

// exitWait bounds how long Close waits for the server to exit after its
// stdin is closed before it kills it.
const exitWait = 5 * time.Second

// Close ends the session and waits for the peer.
func (c *Client) Close() error { return c.Stop() }

// StopProcess ends a stdio session as the spec's shutdown asks: close the
// server's stdin, wait for it to exit (its stdout then ends, which closes
// done), and kill it if it does not.
func StopProcess(cmd *exec.Cmd, stdin io.Closer, done <-chan struct{}) error {
	err := stdin.Close()
	t := time.NewTimer(exitWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		err = errors.Join(err, cmd.Process.Kill())
		<-done
	}
	if werr := cmd.Wait(); werr != nil {
		err = errors.Join(err, werr)
	}
	return err
}
