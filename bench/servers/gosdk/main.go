// Command gosdk is the MCP server every client in tako's peer benchmarks
// talks to. It is written with the official Go SDK
// (github.com/modelcontextprotocol/go-sdk) and serves stdio, so that the
// clients compared differ and the server does not.
//
// Tools:
//
//	echo {message}   returns one text block, "Echo: <message>"
//	big {bytes}      returns one text block of exactly <bytes> bytes ("x" repeated)
//
// The benchmarks pin protocol 2025-11-25 on every client (the revision the
// perf anchors were measured with); the server answers whatever the SDK
// speaks.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxBig bounds the big tool: a benchmark asks for at most 16 MiB, and a
// bound keeps a mistyped size from exhausting the machine.
const maxBig = 64 << 20

func main() {
	log.SetFlags(0)
	log.SetPrefix("bench-gosdk: ")

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// Run returns when the client closes stdin, which is how an MCP client
	// ends a stdio session.
	if err := newServer().Run(ctx, &mcp.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
		log.Fatal(err)
	}
}

type echoIn struct {
	Message string `json:"message" jsonschema:"the message to echo"`
}

type bigIn struct {
	Bytes int `json:"bytes" jsonschema:"size of the text block to return, in bytes"`
}

// payloads caches the big tool's text by size: building a 16 MiB string on
// every call would add server time that says nothing about the clients.
type payloads struct {
	mu sync.Mutex
	m  map[int]string
}

func (p *payloads) get(n int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.m[n]
	if !ok {
		s = strings.Repeat("x", n)
		p.m[n] = s
	}
	return s
}

func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench-gosdk", Version: "1.0.0"}, nil)
	cache := &payloads{m: make(map[int]string)}

	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes back the message"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return text("Echo: " + in.Message), nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "Returns a text block of the given size"},
		func(_ context.Context, _ *mcp.CallToolRequest, in bigIn) (*mcp.CallToolResult, any, error) {
			if in.Bytes < 0 || in.Bytes > maxBig {
				return nil, nil, fmt.Errorf("bytes must be between 0 and %d, got %d", maxBig, in.Bytes)
			}
			return text(cache.get(in.Bytes)), nil, nil
		})

	return s
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
