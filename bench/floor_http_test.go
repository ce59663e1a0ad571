package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync/atomic"
)

// floorHTTPClient is the floor over Streamable HTTP: plain POSTs on one
// http.Client, each request marshalled with json.Marshal into the body and
// each answer (the server is configured to answer application/json, not
// SSE) decoded with one json.Decoder straight into a small typed struct,
// since over HTTP the response comes back on the request's own body and no
// pending map or raw result is needed. The initialize handshake and the
// Mcp-Session-Id and MCP-Protocol-Version headers are done by hand; no SSE,
// no GET stream, no cancellation, no resumption, no message cap.
type floorHTTPClient struct {
	hc      *http.Client
	url     string
	session string // Mcp-Session-Id from the initialize answer
	nextID  atomic.Int64
}

// floorHTTPResponse is a response whose result has the type R.
type floorHTTPResponse[R any] struct {
	ID     int64 `json:"id"`
	Result R     `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func startFloorHTTP(ctx context.Context, url string, hc *http.Client) (client, error) {
	c := &floorHTTPClient{hc: hc, url: url}
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	hdr, err := floorPost(ctx, c, "initialize", floorInitializeParams{
		ProtocolVersion: protocolVersion,
		ClientInfo:      floorImplementation{Name: "bench-floor", Version: "1.0.0"},
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
		err = c.notify(ctx, floorNotification{JSONRPC: "2.0", Method: "notifications/initialized"})
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
	body, err := json.Marshal(floorRequest[P]{JSONRPC: "2.0", ID: c.nextID.Add(1), Method: method, Params: params})
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
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return nil, fmt.Errorf("%s: answered %q, want application/json (the server is configured for JSON answers)", method, mt)
	}
	var msg floorHTTPResponse[*R]
	msg.Result = result
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	if msg.Error != nil {
		return nil, fmt.Errorf("%s: error %d: %s", method, msg.Error.Code, msg.Error.Message)
	}
	// Read to EOF so that the connection goes back to the pool.
	io.Copy(io.Discard, resp.Body)
	return resp.Header, nil
}

// notify POSTs a notification, which the server answers with 202 Accepted.
func (c *floorHTTPClient) notify(ctx context.Context, n floorNotification) error {
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

// callTool calls a tool whose result is one text block and returns the text.
func floorHTTPCallTool[A any](ctx context.Context, c *floorHTTPClient, name string, args A) (string, error) {
	var res floorCallResult
	if _, err := floorPost(ctx, c, "tools/call", floorCallParams[A]{Name: name, Arguments: args}, &res); err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) != 1 {
		return "", fmt.Errorf("%s: unexpected result: isError=%v, %d blocks", name, res.IsError, len(res.Content))
	}
	return res.Content[0].Text, nil
}

func (c *floorHTTPClient) echo(ctx context.Context) error {
	text, err := floorHTTPCallTool(ctx, c, "echo", echoArgs{Message: echoMessage})
	if err != nil {
		return err
	}
	return checkEcho(text)
}

func (c *floorHTTPClient) big(ctx context.Context, n int) (int, error) {
	text, err := floorHTTPCallTool(ctx, c, "big", bigArgs{Bytes: n})
	return len(text), err
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
