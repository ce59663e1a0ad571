package websocket_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/websocket"
)

// The main use: dial a server's WebSocket endpoint, run the handshake,
// list its tools and call one. The server here is the package's own
// bridge, Handler, on a loopback httptest server, in front of mcptest's
// reference server (the demo server's tools) in the same process; a
// program dials its server's ws:// or wss:// URL instead.
func Example() {
	srv := mcptest.NewReference(mcptest.Options{})
	h := &websocket.Handler{Backend: func(ctx context.Context) (transport.Conn, error) {
		conn, _ := srv.Pipe(ctx) // served until the bridge closes conn
		return conn, nil
	}}
	hs := httptest.NewServer(h)
	defer hs.Close()
	defer h.Close() // Close ends every bridged client; hs.Close leaves them
	url := "ws" + strings.TrimPrefix(hs.URL, "http") + "/mcp"

	ctx := context.Background()
	conn, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		log.Fatal(err)
	}
	s, err := transport.Connect(ctx, conn, nil) // s owns conn from here
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

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
	// tools: echo add progress sample elicit roots big notify sleep fail
	// 2 + 3 = 5 {"sum":5}
}

// A client: dial the server, then run the MCP handshake over the Conn.
func ExampleDial() {
	ctx := context.Background()
	conn, err := websocket.Dial(ctx, "ws://127.0.0.1:8765/mcp", &websocket.Options{
		Header: http.Header{"Authorization": {"Bearer TOKEN"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	s, err := transport.Connect(ctx, conn, nil) // Connect owns conn from here
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	tools, err := s.ListTools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tools {
		fmt.Println(t.Name)
	}
}

// A bridge: serve a stdio server over WebSocket, one subprocess per client.
// This is what `tako bridge --listen-ws 127.0.0.1:8765 --stdio my-server`
// does.
func ExampleHandler() {
	h := &websocket.Handler{Backend: func(ctx context.Context) (transport.Conn, error) {
		conn, err := stdio.Start(ctx, &stdio.Options{Command: "my-server"})
		if err != nil {
			return nil, err // not conn: a nil *stdio.Conn is a non-nil Conn
		}
		return conn, nil
	}}
	srv := &http.Server{Addr: "127.0.0.1:8765", Handler: h}
	// On shutdown: srv.Shutdown(ctx), then h.Close(), which ends every
	// client's connection and subprocess (Shutdown leaves WebSocket
	// connections alone).
	defer h.Close()
	log.Fatal(srv.ListenAndServe())
}
