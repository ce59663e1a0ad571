package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/tako-mcp/tako/bench/internal/floor"
)

// floorHTTPClient is the floor over Streamable HTTP: plain POSTs on one
// http.Client, each request marshalled with json.Marshal into the body and
// each answer decoded straight into a small typed struct, since over HTTP
// the response comes back on the request's own body and no pending map or
// raw result is needed. An SSE answer (the server's default) is split into
// events by a few lines over a pooled bufio.Reader and each event's data
// unmarshalled until the response comes; an application/json answer (the
// server's -json mode) is decoded with one json.Decoder. The initialize
// handshake and the Mcp-Session-Id and MCP-Protocol-Version headers are
// done by hand; no GET stream, no cancellation, no resumption, no message
// cap.
type floorHTTPClient struct {
	hc      *http.Client
	url     string
	session string // Mcp-Session-Id from the initialize answer
	nextID  atomic.Int64
}

// floorHTTPResponse is a response whose result has the type R.
type floorHTTPResponse[R any] struct {
	ID *int64 `json:"id"` // nil for a notification

	Result R `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func startFloorHTTP(ctx context.Context, url string, hc *http.Client) (*floorHTTPClient, error) {
	c := &floorHTTPClient{hc: hc, url: url}
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	hdr, err := floorPost(ctx, c, "initialize", floor.InitializeParams{
		ProtocolVersion: protocolVersion,
		ClientInfo:      floor.Implementation{Name: "bench-floor", Version: "1.0.0"},
	}, &init)
	if err == nil && init.ProtocolVersion != protocolVersion {
		err = fmt.Errorf("server answered protocol %q, want %q", init.ProtocolVersion, protocolVersion)
	}
	if err == nil {
		if c.session = hdr.Get("Mcp-Session-Id"); c.session == "" {
			err = errors.New("no Mcp-Session-Id in the initialize answer (the server is stateful)")
		}
	}
	if err == nil {
		err = c.notify(ctx, floor.Notification{JSONRPC: "2.0", Method: "notifications/initialized"})
	}
	if err != nil {
		return nil, fmt.Errorf("floor: initialize: %w", err)
	}
	return c, nil
}

// newRequest is a POST of body with the headers the transport asks for.
func (c *floorHTTPClient) newRequest(ctx context.Context, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("MCP-Protocol-Version", protocolVersion)
	}
	return req, nil
}

// floorPost sends one request and decodes its JSON answer's result into
// result; it returns the answer's headers.
func floorPost[P, R any](ctx context.Context, c *floorHTTPClient, method string, params P, result *R) (http.Header, error) {
	body, err := json.Marshal(floor.Request[P]{JSONRPC: "2.0", ID: c.nextID.Add(1), Method: method, Params: params})
	if err != nil {
		return nil, err
	}
	req, err := c.newRequest(ctx, body)
	if err != nil {
		return nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %s", method, resp.Status)
	}
	var msg floorHTTPResponse[*R]
	msg.Result = result
	switch mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt {
	case "application/json":
		if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
	case "text/event-stream":
		if err := readSSEResponse(resp.Body, &msg); err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
	default:
		return nil, fmt.Errorf("%s: answered %q, want JSON or SSE", method, mt)
	}
	if msg.Error != nil {
		return nil, fmt.Errorf("%s: error %d: %s", method, msg.Error.Code, msg.Error.Message)
	}
	// Read to EOF so that the connection goes back to the pool.
	io.Copy(io.Discard, resp.Body)
	return resp.Header, nil
}

// sseReaders pools the readers SSE answers are split with: one per POST
// would be 4 KB a call.
var sseReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4096) }}

// readSSEResponse reads events from an SSE body until one whose data is a
// JSON-RPC response, and unmarshals it into msg. Events that are not
// responses (notifications, priming events with no data) are skipped.
func readSSEResponse[R any](body io.Reader, msg *floorHTTPResponse[R]) error {
	br := sseReaders.Get().(*bufio.Reader)
	br.Reset(body)
	defer func() {
		br.Reset(nil)
		sseReaders.Put(br)
	}()
	var data []byte
	for {
		line, err := br.ReadSlice('\n')
		gathered := false
		if err == bufio.ErrBufferFull {
			// A line longer than the buffer (a big result): gather it
			// into memory of its own.
			long := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line, gathered = long, true
		}
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("SSE stream ended before the response: %w", err)
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0: // end of an event
			if len(data) == 0 {
				continue
			}
			// One pass: a notification leaves ID nil and the result
			// untouched (it has params, not a result).
			if err := json.Unmarshal(data, msg); err != nil {
				return err
			}
			if msg.ID != nil {
				return nil
			}
			data = data[:0]
		case bytes.HasPrefix(line, []byte("data:")):
			d := bytes.TrimPrefix(line[5:], []byte(" "))
			if len(data) > 0 {
				data = append(data, '\n')
			}
			if len(data) == 0 && gathered {
				data = d // the gathered line is ours: no copy
			} else {
				data = append(data, d...)
			}
		}
	}
}

// notify POSTs a notification, which the server answers with 202 Accepted.
func (c *floorHTTPClient) notify(ctx context.Context, n floor.Notification) error {
	body, err := json.Marshal(n)
	if err != nil {
		return err
	}
	req, err := c.newRequest(ctx, body)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("%s: HTTP %s, want 202", n.Method, resp.Status)
	}
	return nil
}

// floorHTTPCallTool calls a tool whose result is one block and returns it.
func floorHTTPCallTool[A any](ctx context.Context, c *floorHTTPClient, name string, args A) (floor.Block, error) {
	var res floor.CallResult
	if _, err := floorPost(ctx, c, "tools/call", floor.CallParams[A]{Name: name, Arguments: args}, &res); err != nil {
		return floor.Block{}, err
	}
	return res.Block(name)
}

func (c *floorHTTPClient) echo(ctx context.Context) error {
	b, err := floorHTTPCallTool(ctx, c, "echo", echoArgs{Message: echoMessage})
	if err != nil {
		return err
	}
	return checkEcho(b.Text)
}

func (c *floorHTTPClient) listTools(ctx context.Context) (int, error) {
	var p floor.ListParams
	n := 0
	for {
		var res floor.ListResult
		if _, err := floorPost(ctx, c, "tools/list", p, &res); err != nil {
			return n, err
		}
		n += len(res.Tools)
		if res.NextCursor == "" {
			return n, nil
		}
		p.Cursor = res.NextCursor
	}
}

func (c *floorHTTPClient) big(ctx context.Context, kind string, n int) (received, error) {
	b, err := floorHTTPCallTool(ctx, c, "big", bigArgs{Bytes: n, Kind: kind})
	return blockData(kind, b.Text, b.Data), err
}

// Close ends the session with DELETE, as the transport asks of a client
// that no longer needs it.
func (c *floorHTTPClient) Close() error {
	req, err := http.NewRequest(http.MethodDelete, c.url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Mcp-Session-Id", c.session)
	req.Header.Set("MCP-Protocol-Version", protocolVersion)
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusMethodNotAllowed {
		return fmt.Errorf("DELETE: HTTP %s", resp.Status)
	}
	return nil
}
