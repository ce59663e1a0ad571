package bench

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

// floorClient is the "floor" of the perf anchors: an MCP client written by
// hand with no SDK, the least work a client can do. It writes
// newline-delimited JSON to the server's stdin with json.Encoder (one Write
// per message), reads stdout with one goroutine (a json.Decoder, which reuses
// its buffer and scanner from message to message, into a small struct whose
// result stays raw), matches responses to callers through a map of pending
// ids, and the caller unmarshals the result into its own small struct. It does the initialize handshake by hand and
// nothing else: no cancellation, no notifications, no server requests, no
// message cap. What tako does beyond this is what it costs.
type floorClient struct {
	// send writes one message; wmu serialises it (one message per line,
	// or per frame).
	wmu  sync.Mutex
	send func(v any) error
	// stop ends the connection (it makes the reader return) and waits for
	// the peer.
	stop func() error

	nextID  atomic.Int64
	mu      sync.Mutex
	pending map[int64]chan floorResponse

	done    chan struct{} // closed when the reader goroutine returns
	readErr error         // why it returned; read after done
}

// floorRequest and floorCallParams are generic so that params and arguments
// are marshalled from their own types, not boxed in interfaces: one
// allocation less each, as a hand-written client for known tools would do.
type floorRequest[P any] struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id"`
	Method  string `json:"method"`
	Params  P      `json:"params"`
}

type floorNotification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
}

// floorResponse is any message from the server. Only responses carry a
// result or an error; the floor never sends ids the server could confuse
// with 0, so a plain int64 is enough.
type floorResponse struct {
	ID     int64           `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

type floorImplementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type floorInitializeParams struct {
	ProtocolVersion string              `json:"protocolVersion"`
	Capabilities    struct{}            `json:"capabilities"`
	ClientInfo      floorImplementation `json:"clientInfo"`
}

type floorCallParams[A any] struct {
	Name      string `json:"name"`
	Arguments A      `json:"arguments"`
}

type floorCallResult struct {
	Content []floorBlock `json:"content"`
	IsError bool         `json:"isError"`
}

// floorBlock is a content block of the kinds the benchmark's tools return:
// text, or an image (whose data a hand-written client keeps as the base64
// text it came as until something needs the bytes).
type floorBlock struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Data     string `json:"data"`
	MIMEType string `json:"mimeType"`
}

func startFloor(ctx context.Context, ep *Endpoint) (client, error) {
	cmd := exec.Command(ep.Command, ep.Args...)
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
	c := newFloorClient()
	c.send = json.NewEncoder(stdin).Encode
	c.stop = func() error { return stopProcess(cmd, stdin, c.done) }
	go c.read(json.NewDecoder(bufio.NewReaderSize(stdout, 64<<10)))
	return c.initialize(ctx)
}

func newFloorClient() *floorClient {
	return &floorClient{
		pending: make(map[int64]chan floorResponse),
		done:    make(chan struct{}),
	}
}

// initialize runs the handshake by hand once the reader runs.
func (c *floorClient) initialize(ctx context.Context) (*floorClient, error) {
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	raw, err := floorCall(ctx, c, "initialize", floorInitializeParams{
		ProtocolVersion: protocolVersion,
		ClientInfo:      floorImplementation{Name: "bench-floor", Version: "1.0.0"},
	})
	if err == nil {
		err = json.Unmarshal(raw, &init)
	}
	if err == nil && init.ProtocolVersion != protocolVersion {
		err = fmt.Errorf("server answered protocol %q, want %q", init.ProtocolVersion, protocolVersion)
	}
	if err == nil {
		err = c.write(floorNotification{JSONRPC: "2.0", Method: "notifications/initialized"})
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("floor: initialize: %w", err)
	}
	return c, nil
}

// read delivers each response to the caller waiting for its id. Messages
// that answer no pending id (notifications, server requests) are dropped; a
// message that is not JSON ends the session, as the decoder cannot resync.
func (c *floorClient) read(dec *json.Decoder) {
	defer close(c.done)
	// One response value for the whole session: it goes to the caller by
	// value, and Result is reset before each Decode, since RawMessage's
	// UnmarshalJSON would otherwise append into the bytes the caller holds.
	var resp floorResponse
	for {
		resp = floorResponse{}
		if err := dec.Decode(&resp); err != nil {
			c.readErr = err
			return
		}
		c.deliver(resp)
	}
}

// deliver hands a response to the caller waiting for its id.
func (c *floorClient) deliver(resp floorResponse) {
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

func (c *floorClient) write(v any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.send(v)
}

// floorCall sends one request and waits for its response's raw result.
func floorCall[P any](ctx context.Context, c *floorClient, method string, params P) (json.RawMessage, error) {
	id := c.nextID.Add(1)
	ch := make(chan floorResponse, 1)
	c.mu.Lock()
	c.pending[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}
	if err := c.write(floorRequest[P]{JSONRPC: "2.0", ID: id, Method: method, Params: params}); err != nil {
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

// floorCallTool calls a tool whose result is one block and returns it.
func floorCallTool[A any](ctx context.Context, c *floorClient, name string, args A) (floorBlock, error) {
	raw, err := floorCall(ctx, c, "tools/call", floorCallParams[A]{Name: name, Arguments: args})
	if err != nil {
		return floorBlock{}, err
	}
	var res floorCallResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return floorBlock{}, err
	}
	return res.block(name)
}

// block is the result's one block.
func (res *floorCallResult) block(name string) (floorBlock, error) {
	if res.IsError || len(res.Content) != 1 {
		return floorBlock{}, fmt.Errorf("%s: unexpected result: isError=%v, %d blocks", name, res.IsError, len(res.Content))
	}
	return res.Content[0], nil
}

func (c *floorClient) echo(ctx context.Context) error {
	b, err := floorCallTool(ctx, c, "echo", echoArgs{Message: echoMessage})
	if err != nil {
		return err
	}
	return checkEcho(b.Text)
}

func (c *floorClient) big(ctx context.Context, kind string, n int) (received, error) {
	b, err := floorCallTool(ctx, c, "big", bigArgs{Bytes: n, Kind: kind})
	return blockData(kind, b.Text, b.Data), err
}

// floorListParams and floorListResult are one page of tools/list. The
// tools are decoded as a caller that reads them would: name, description
// and the schema kept raw for whoever validates against it.
type floorListParams struct {
	Cursor string `json:"cursor,omitempty"`
}

type floorListResult struct {
	Tools      []floorTool `json:"tools"`
	NextCursor string      `json:"nextCursor"`
}

type floorTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

func (c *floorClient) listTools(ctx context.Context) (int, error) {
	var p floorListParams
	n := 0
	for {
		raw, err := floorCall(ctx, c, "tools/list", p)
		if err != nil {
			return n, err
		}
		var res floorListResult
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

// floorExitWait bounds how long Close waits for the server to exit after its
// stdin is closed before it kills it.
const floorExitWait = 5 * time.Second

func (c *floorClient) Close() error { return c.stop() }

// stopProcess ends a stdio session as the spec's shutdown asks: close the
// server's stdin, wait for it to exit (its stdout then ends, which closes
// done), and kill it if it does not.
func stopProcess(cmd *exec.Cmd, stdin io.Closer, done <-chan struct{}) error {
	err := stdin.Close()
	t := time.NewTimer(floorExitWait)
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
