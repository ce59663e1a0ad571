package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Flags for the caching and tracing tests; both off by default, so the other
// tests see the server as it always was.
var (
	ttlMs      = flag.Int("ttl", 0, "send this ttlMs (cacheScope public) with every list and read result")
	extraTools = flag.Bool("extra-tools", false, "also offer the tools meta and grow")
)

// serverOptions sets the cache fields with -ttl.
func serverOptions() *mcp.ServerOptions {
	opts := &mcp.ServerOptions{
		// Subscriptions are kept by the SDK itself; the handlers only
		// have to agree.
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	}
	if *ttlMs > 0 {
		opts.SetCacheable = func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
			c.TTLMs = *ttlMs
			c.CacheScope = "public"
		}
	}
	return opts
}

// addExtraTools, with -extra-tools:
//
//	meta {}   returns the request's _meta as a JSON object, to show what the client sent
//	grow {}   adds a tool grown-N, so the server announces notifications/tools/list_changed
func addExtraTools(s *mcp.Server) {
	if !*extraTools {
		return
	}
	mcp.AddTool(s, &mcp.Tool{Name: "meta", Description: "Returns the _meta of the request"},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			b, err := json.Marshal(req.Params.Meta)
			if err != nil {
				return nil, nil, err
			}
			return text(string(b)), nil, nil
		})
	var grown atomic.Int64
	mcp.AddTool(s, &mcp.Tool{Name: "grow", Description: "Adds a tool, which changes the tool list"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			name := fmt.Sprintf("grown-%d", grown.Add(1))
			mcp.AddTool(s, &mcp.Tool{Name: name, Description: "Added by grow"},
				func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
					return text(name), nil, nil
				})
			return text(name), nil, nil
		})
}
