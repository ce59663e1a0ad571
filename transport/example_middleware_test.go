package transport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
)

// A Middleware sees every request on its way to the server: here one that
// times each request and tags it with a _meta member of its own.
func ExampleMiddleware() {
	ctx := context.Background()
	srv := mcptest.NewReference(mcptest.Options{})
	conn, wait := srv.Pipe(ctx)
	defer wait()

	timing := func(next transport.Handler) transport.Handler {
		return func(ctx context.Context, req *transport.Request) (json.RawMessage, error) {
			if err := req.SetMeta("example.com/tenant", "blue"); err != nil {
				return nil, err
			}
			start := time.Now()
			res, err := next(ctx, req)
			_ = time.Since(start) // record it in a metric
			if req.Method == mcp.MethodToolsCall {
				fmt.Println("sent", req.Method, "error:", err != nil)
			}
			return res, err
		}
	}
	s, err := transport.Connect(ctx, conn, &transport.Options{Middleware: []transport.Middleware{timing}})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"message":"hi"}`)}); err != nil {
		log.Fatal(err)
	}
	for _, r := range srv.Received() {
		if r.Msg.Method == mcp.MethodToolsCall {
			fmt.Println("the server saw", string(r.Meta()["example.com/tenant"]))
		}
	}
	// Output:
	// sent tools/call error: false
	// the server saw "blue"
}

// Sessions to the same server can share one Cache: public results (the
// server's cacheScope) are then listed once for all of them while their
// ttlMs holds; private ones only within the same CacheIdentity.
func ExampleCache() {
	cache := transport.NewCache(&transport.CacheOptions{MaxEntries: 4096})
	opts := func(user string) *transport.Options {
		return &transport.Options{Cache: cache, CacheServer: "https://tools.example.com/mcp", CacheIdentity: user}
	}
	fmt.Println(opts("alice").CacheServer == opts("bob").CacheServer, cache.Stats().Entries)
	// Output: true 0
}
