package bench

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"sync"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tako-mcp/tako/bench/internal/payload"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
)

// protocolVersion is pinned on every client: the perf anchors were measured
// with it, and it keeps every client on the same (initialize) handshake.
const protocolVersion = "2025-11-25"

// echoMessage and echoWant are the echo call of every benchmark: the size of
// the perf anchors' echo call.
const (
	echoMessage = "hello, world"
	echoWant    = "Echo: " + echoMessage
)

// echoArgs and bigArgs are the tools' arguments as a Go program holds them.
// Every client marshals them from these values on each call (tako's
// CallToolParams takes json.RawMessage, so its adapter calls json.Marshal),
// so no client is spared the work a real caller does.
type echoArgs struct {
	Message string `json:"message"`
}

type bigArgs struct {
	Bytes int    `json:"bytes"`
	Kind  string `json:"kind"`
}

// received is what a client decoded of a big result, as the client hands
// it to its caller: the block's text (an image's base64 data, for the
// clients that keep it so), or raw bytes (the go-sdk and gRPC decode an
// image's data). The harness checks it against the payload after the
// figures are taken.
type received struct {
	text string
	raw  []byte
}

// size is the block's size as it came on the wire: the text's bytes, or
// the base64 text's of raw data.
func (r received) size() int {
	if r.raw != nil {
		return base64.StdEncoding.EncodedLen(len(r.raw))
	}
	return len(r.text)
}

// sums caches the payloads' hashes by kind and size: a 16 MiB payload
// takes 50 ms to make.
var sums sync.Map // bigArgs -> [32]byte

// checkBig reports whether r is the payload of kind and n bytes, the
// server's, byte for byte. It holds neither (payload.Sum streams), so that
// it adds nothing to the RSS measured; it is called outside the figures.
func checkBig(kind string, n int, r received) error {
	if r.size() != n {
		return fmt.Errorf("big %s returned %d bytes, want %d", kind, r.size(), n)
	}
	key := bigArgs{Bytes: n, Kind: kind}
	want, ok := sums.Load(key)
	if !ok {
		sum, err := payload.Sum(kind, n)
		if err != nil {
			return err
		}
		want, _ = sums.LoadOrStore(key, sum)
	}
	got := payload.SumOf(r.text)
	if r.raw != nil {
		got = payload.SumOfBase64(r.raw)
	}
	if got != want.([32]byte) {
		return fmt.Errorf("big %s of %d bytes: the client decoded other bytes than the server sent", kind, n)
	}
	return nil
}

// blockData is the payload of a block of a big result: its text, or an
// image's data.
func blockData(kind, text, data string) received {
	if kind == payload.Image {
		return received{text: data}
	}
	return received{text: text}
}

// client is what the benchmarks need of each MCP client: one tool call of
// each kind, listing the tools, and Close. echo checks the text it got back;
// big returns the one block of a result of n bytes of a payload kind
// (bench/internal/payload); listTools returns how many tools the server
// offers, every page merged.
type client interface {
	echo(ctx context.Context) error
	big(ctx context.Context, kind string, n int) (received, error)
	listTools(ctx context.Context) (int, error)
	Close() error
}

// Endpoint is a running server as the clients reach it: a command to spawn
// (stdio) or an address (HTTP, WebSocket, gRPC). Close stops what the
// harness started for it.
type Endpoint struct {
	// Command and Args start the server over stdio.
	Command string
	Args    []string
	// URL is the HTTP or WebSocket endpoint, or the gRPC address.
	URL string
	// Certs are the mutual TLS files of a gRPC endpoint.
	Certs *Certs
	// Conns, when set, asks the server how many TCP connections it has
	// accepted so far.
	Conns func() (int64, error)
	close func() error
}

// Close stops the server the harness started for the endpoint, if any.
func (e *Endpoint) Close() error {
	if e.close == nil {
		return nil
	}
	return e.close()
}

// starter starts one client against an endpoint.
type starter func(ctx context.Context, ep *Endpoint) (client, error)

// kind names one of the clients compared.
type kind struct {
	name  string
	start starter
}

// Bins are the server binaries the harness runs: servers/gosdk,
// servers/bridge and servers/tiny.
type Bins struct {
	GoSDK, Bridge, Tiny string
}

// Transport is one way of reaching the server, with the clients that speak
// it, floor first.
type Transport struct {
	Name string
	// Serve starts the server (tools extra tools, see servers/gosdk -tools).
	Serve func(ctx context.Context, bins Bins, tools int) (*Endpoint, error)
	kinds []kind
}

// Clients are the names of the transport's clients, floor first.
func (t *Transport) Clients() []string {
	var names []string
	for _, k := range t.kinds {
		names = append(names, k.name)
	}
	return names
}

func (t *Transport) kind(name string) (kind, bool) {
	for _, k := range t.kinds {
		if k.name == name {
			return k, true
		}
	}
	return kind{}, false
}

// Transports are every transport measured, in the order of the tables.
var Transports = []*Transport{stdioTransport, httpTransport, httpTunedTransport, wsTransport, grpcTransport}

// TransportByName returns the transport called name, or nil.
func TransportByName(name string) *Transport {
	for _, t := range Transports {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// stdioTransport spawns servers/gosdk per client, as a stdio client does.
var stdioTransport = &Transport{
	Name: "stdio",
	Serve: func(_ context.Context, bins Bins, tools int) (*Endpoint, error) {
		ep := &Endpoint{Command: bins.GoSDK}
		if tools > 0 {
			ep.Args = []string{"-tools", strconv.Itoa(tools)}
		}
		return ep, nil
	},
	kinds: []kind{
		{"floor", startFloor},
		{"tako", startTako},
		{"gosdk", startGoSDK},
		{"mcpgo", startMCPGo},
	},
}

func checkEcho(text string) error {
	if text != echoWant {
		return fmt.Errorf("echo returned %q, want %q", text, echoWant)
	}
	return nil
}

// --- tako ---

// takoClient is tako through the Transport seam: a Session over a Conn,
// or the gRPC client.
type takoClient struct{ s transport.Transport }

// connectTako runs the handshake on conn, with the protocol revision every
// client of the benchmark speaks.
func connectTako(ctx context.Context, conn transport.Conn) (client, error) {
	s, err := transport.Connect(ctx, conn, &transport.Options{ProtocolVersion: protocolVersion})
	if err != nil {
		return nil, err // Connect closed conn
	}
	return &takoClient{s: s}, nil
}

func startTako(ctx context.Context, ep *Endpoint) (client, error) {
	conn, err := stdio.Start(ctx, &stdio.Options{Command: ep.Command, Args: ep.Args})
	if err != nil {
		return nil, err
	}
	return connectTako(ctx, conn)
}

func (c *takoClient) call(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	res, err := c.s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: raw})
	if err != nil {
		return nil, err
	}
	if res.IsError || len(res.Content) != 1 {
		return nil, fmt.Errorf("%s: unexpected result: isError=%v, %d blocks", name, res.IsError, len(res.Content))
	}
	return res, nil
}

func (c *takoClient) echo(ctx context.Context) error {
	res, err := c.call(ctx, "echo", echoArgs{Message: echoMessage})
	if err != nil {
		return err
	}
	return checkEcho(res.Content[0].Text)
}

func (c *takoClient) big(ctx context.Context, kind string, n int) (received, error) {
	res, err := c.call(ctx, "big", bigArgs{Bytes: n, Kind: kind})
	if err != nil {
		return received{}, err
	}
	b := &res.Content[0]
	if raw, ok := b.Data.Raw(); ok && kind == payload.Image {
		return received{raw: raw}, nil // gRPC's bytes
	}
	return blockData(kind, b.Text, b.Data.Base64()), nil
}

func (c *takoClient) listTools(ctx context.Context) (int, error) {
	tools, err := c.s.ListTools(ctx)
	return len(tools), err
}

func (c *takoClient) Close() error { return c.s.Close() }

// --- the official Go SDK ---

type goSDKClient struct{ cs *gosdk.ClientSession }

func startGoSDK(ctx context.Context, ep *Endpoint) (client, error) {
	c := gosdk.NewClient(&gosdk.Implementation{Name: "bench", Version: "1.0.0"}, nil)
	cs, err := c.Connect(ctx, &gosdk.CommandTransport{Command: exec.Command(ep.Command, ep.Args...)},
		&gosdk.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		return nil, err
	}
	return &goSDKClient{cs: cs}, nil
}

func (c *goSDKClient) call(ctx context.Context, name string, args any) (received, error) {
	res, err := c.cs.CallTool(ctx, &gosdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return received{}, err
	}
	if res.IsError || len(res.Content) != 1 {
		return received{}, fmt.Errorf("%s: unexpected result: isError=%v, %d blocks", name, res.IsError, len(res.Content))
	}
	switch b := res.Content[0].(type) {
	case *gosdk.TextContent:
		return received{text: b.Text}, nil
	case *gosdk.ImageContent:
		return received{raw: b.Data}, nil
	}
	return received{}, fmt.Errorf("%s: got %T, want text or an image", name, res.Content[0])
}

func (c *goSDKClient) echo(ctx context.Context) error {
	r, err := c.call(ctx, "echo", echoArgs{Message: echoMessage})
	if err != nil {
		return err
	}
	return checkEcho(r.text)
}

func (c *goSDKClient) big(ctx context.Context, kind string, n int) (received, error) {
	return c.call(ctx, "big", bigArgs{Bytes: n, Kind: kind})
}

// listTools walks every page with the SDK's iterator, as a caller who
// wants the whole list does (ListTools returns one page).
func (c *goSDKClient) listTools(ctx context.Context) (int, error) {
	n := 0
	for _, err := range c.cs.Tools(ctx, nil) {
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func (c *goSDKClient) Close() error { return c.cs.Close() }

// --- mcp-go ---

type mcpGoClient struct{ c *mcpgoclient.Client }

func startMCPGo(ctx context.Context, ep *Endpoint) (client, error) {
	// NewStdioMCPClient starts the process; Initialize then runs the
	// handshake.
	c, err := mcpgoclient.NewStdioMCPClient(ep.Command, nil, ep.Args...)
	if err != nil {
		return nil, err
	}
	return initMCPGo(ctx, c)
}

// initMCPGo runs mcp-go's handshake. A legacy revision in the request keeps
// mcp-go off its server/discover probe.
func initMCPGo(ctx context.Context, c *mcpgoclient.Client) (client, error) {
	var req mcpgo.InitializeRequest
	req.Params.ProtocolVersion = protocolVersion
	req.Params.ClientInfo = mcpgo.Implementation{Name: "bench", Version: "1.0.0"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		c.Close()
		return nil, err
	}
	if res.ProtocolVersion != protocolVersion {
		c.Close()
		return nil, fmt.Errorf("mcp-go negotiated %q, want %q", res.ProtocolVersion, protocolVersion)
	}
	return &mcpGoClient{c: c}, nil
}

func (c *mcpGoClient) call(ctx context.Context, name string, args any) (received, error) {
	var req mcpgo.CallToolRequest
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.c.CallTool(ctx, req)
	if err != nil {
		return received{}, err
	}
	if res.IsError || len(res.Content) != 1 {
		return received{}, fmt.Errorf("%s: unexpected result: isError=%v, %d blocks", name, res.IsError, len(res.Content))
	}
	if t, ok := mcpgo.AsTextContent(res.Content[0]); ok {
		return received{text: t.Text}, nil
	}
	if im, ok := mcpgo.AsImageContent(res.Content[0]); ok {
		return received{text: im.Data}, nil
	}
	return received{}, fmt.Errorf("%s: got %T, want text or an image", name, res.Content[0])
}

func (c *mcpGoClient) echo(ctx context.Context) error {
	r, err := c.call(ctx, "echo", echoArgs{Message: echoMessage})
	if err != nil {
		return err
	}
	return checkEcho(r.text)
}

func (c *mcpGoClient) big(ctx context.Context, kind string, n int) (received, error) {
	return c.call(ctx, "big", bigArgs{Bytes: n, Kind: kind})
}

// listTools follows the cursor: mcp-go's ListTools returns one page.
func (c *mcpGoClient) listTools(ctx context.Context) (int, error) {
	var req mcpgo.ListToolsRequest
	n := 0
	for {
		res, err := c.c.ListTools(ctx, req)
		if err != nil {
			return n, err
		}
		n += len(res.Tools)
		if res.NextCursor == "" {
			return n, nil
		}
		req.Params.Cursor = res.NextCursor
	}
}

func (c *mcpGoClient) Close() error { return c.c.Close() }
