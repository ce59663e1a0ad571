package streamablehttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"strings"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/streamablehttp"
	"github.com/tako-mcp/tako/transport"
)

// The main use: dial a server's MCP endpoint, run the handshake (which
// picks the era the server speaks: 2026-07-28, a legacy session, or the
// 2024-11-05 HTTP+SSE wire), list its tools and call one. The server here
// is mcptest's reference server (the demo server's tools) behind a test
// bridge on a loopback httptest server (serveBridge, kit_test.go); a
// program dials its server's URL instead.
func Example() {
	url, stop := serveBridge(mcptest.NewReference(mcptest.Options{}))
	defer stop()

	ctx := context.Background()
	conn, err := streamablehttp.Dial(ctx, url, &streamablehttp.Options{
		Header: http.Header{"User-Agent": {"example/1.0"}}, // sent with every request
	})
	if err != nil {
		log.Fatal(err)
	}
	s, err := transport.Connect(ctx, conn, nil) // s owns conn from here
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	fmt.Println("protocol", s.ServerInfo().ProtocolVersion)

	tools, err := s.ListTools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	fmt.Println("tools:", strings.Join(names, " "))

	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: json.RawMessage(`{"a":2,"b":3}`)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("2 + 3 =", res.Text(), string(res.StructuredContent))
	// Output:
	// protocol 2026-07-28
	// tools: echo add progress sample elicit roots big notify sleep fail
	// 2 + 3 = 5 {"sum":5}
}
