// Command gosdk is the MCP server every client in tako's peer benchmarks
// talks to. It is written with the official Go SDK
// (github.com/modelcontextprotocol/go-sdk) and serves stdio, so that the
// clients compared differ and the server does not.
//
// With -http 127.0.0.1:0 it serves the SDK's Streamable HTTP handler
// instead, stateful (Mcp-Session-Id) and, as the SDK does by default,
// answering each POST with an SSE stream; -json makes it answer
// application/json instead (StreamableHTTPOptions.JSONResponse). It prints
// the endpoint's URL on stdout, serves loopback addresses only, and exits
// when its stdin reaches EOF (as a stdio server does; the harness closes the
// pipe, and a crashed harness leaves no server behind) or on SIGINT/SIGTERM.
// Its stdin is also a side channel: a line "conns" is answered on stdout
// with "conns N", the TCP connections accepted so far (http.Server's
// ConnState), which is how the harness counts the connections of a client
// whose transport it does not own.
//
// With -tools N it offers N more tools (tool0000, tool0001, ...), each with
// a large input schema (about 2 KB of JSON), for the ListTools benchmark;
// calling one returns "ok".
//
// Tools:
//
//	echo {message}   returns one text block, "Echo: <message>"
//	big {bytes,kind} returns one block of exactly <bytes> bytes of the payload
//	                 kind (bench/internal/payload: "text", the default, log
//	                 lines; "json", a JSON document as text; "image", an image
//	                 block whose base64 data is <bytes> long)
//
// The benchmarks pin protocol 2025-11-25 on every client (the revision the
// perf anchors were measured with); the server answers whatever the SDK
// speaks.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tako-mcp/tako/bench/internal/payload"
)

// maxBig bounds the big tool: a benchmark asks for at most 16 MiB, and a
// bound keeps a mistyped size from exhausting the machine.
const maxBig = 64 << 20

func main() {
	httpAddr := flag.String("http", "", "serve Streamable HTTP (stateful, SSE answers) on this loopback address, e.g. 127.0.0.1:0, instead of stdio; the URL is printed on stdout")
	jsonResp := flag.Bool("json", false, "with -http, answer each POST with application/json instead of an SSE stream")
	flag.IntVar(&manyTools, "tools", 0, "offer this many extra tools with large schemas (for ListTools)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("bench-gosdk: ")

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *httpAddr != "" {
		if err := serveHTTP(ctx, *httpAddr, *jsonResp); err != nil {
			log.Fatal(err)
		}
		return
	}
	// Run returns when the client closes stdin, which is how an MCP client
	// ends a stdio session.
	if err := newServer().Run(ctx, &mcp.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
		log.Fatal(err)
	}
}

// serveHTTP serves Streamable HTTP at /mcp until ctx is done or stdin
// reaches EOF. Only loopback addresses are accepted: this is a benchmark
// peer, not a deployable server.
func serveHTTP(ctx context.Context, addr string, jsonResp bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("-http %s: only loopback addresses are served", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := newServer()
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{JSONResponse: jsonResp}))
	var conns atomic.Int64
	hs := &http.Server{Handler: mux, ConnState: func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}}
	if _, err := fmt.Printf("http://%s/mcp\n", ln.Addr()); err != nil {
		ln.Close()
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		// EOF (or any error) on stdin is the harness saying "stop"; a
		// "conns" line asks for the connection count.
		defer cancel()
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "conns" {
				fmt.Printf("conns %d\n", conns.Load())
			}
		}
	}()
	go func() {
		<-ctx.Done()
		hs.Close()
	}()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

type echoIn struct {
	Message string `json:"message" jsonschema:"the message to echo"`
}

type bigIn struct {
	Bytes int    `json:"bytes" jsonschema:"size of the block to return, in bytes (an image's base64 text)"`
	Kind  string `json:"kind,omitempty" jsonschema:"text (the default), json or image"`
}

// payloads caches the big tool's results by kind and size: building a
// 16 MiB payload on every call would add server time that says nothing
// about the clients.
type payloads struct {
	mu sync.Mutex
	m  map[bigIn]*mcp.CallToolResult
}

func (p *payloads) get(in bigIn) (*mcp.CallToolResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r, ok := p.m[in]; ok {
		return r, nil
	}
	var r *mcp.CallToolResult
	if in.Kind == payload.Image {
		raw, err := payload.ImageBytes(in.Bytes)
		if err != nil {
			return nil, err
		}
		r = &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: raw, MIMEType: payload.ImageMIME}}}
	} else {
		s, err := payload.Make(in.Kind, in.Bytes)
		if err != nil {
			return nil, err
		}
		r = text(s)
	}
	p.m[in] = r
	return r, nil
}

func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench-gosdk", Version: "1.0.0"}, nil)
	cache := &payloads{m: make(map[bigIn]*mcp.CallToolResult)}

	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes back the message"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return text("Echo: " + in.Message), nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "Returns a block of the given size and kind"},
		func(_ context.Context, _ *mcp.CallToolRequest, in bigIn) (*mcp.CallToolResult, any, error) {
			if in.Bytes < 0 || in.Bytes > maxBig {
				return nil, nil, fmt.Errorf("bytes must be between 0 and %d, got %d", maxBig, in.Bytes)
			}
			if in.Kind == "" {
				in.Kind = payload.Text
			}
			r, err := cache.get(in)
			return r, nil, err
		})

	addManyTools(s, manyTools)
	return s
}

// manyTools is -tools: how many extra tools newServer registers.
var manyTools int

// addManyTools registers n tools whose input schemas are large (a dozen
// described properties, an enum, a nested object): a list of them is what a
// gateway or an aggregating server hands a client.
func addManyTools(s *mcp.Server, n int) {
	props := map[string]any{}
	for i := range 12 {
		props[fmt.Sprintf("field%02d", i)] = map[string]any{
			"type":        "string",
			"description": fmt.Sprintf("Field %d of the request. %s", i, strings.Repeat("It is described at length, as real tools are. ", 2)),
		}
	}
	props["mode"] = map[string]any{"type": "string", "enum": []string{"fast", "thorough", "dry-run", "verbose"}}
	props["options"] = map[string]any{
		"type": "object",
		"properties": map[string]any{
			"limit":  map[string]any{"type": "integer", "minimum": 1, "maximum": 1000},
			"offset": map[string]any{"type": "integer", "minimum": 0},
			"tags":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		},
	}
	schema := map[string]any{"type": "object", "properties": props, "required": []string{"field00", "mode"}}
	ok := text("ok")
	for i := range n {
		s.AddTool(&mcp.Tool{
			Name:        fmt.Sprintf("tool%04d", i),
			Description: fmt.Sprintf("Tool number %d of a large catalogue; it does nothing but answer ok.", i),
			InputSchema: schema,
		}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return ok, nil })
	}
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
