package websocket_test

import (
	"context"
	"fmt"
	"log"
	"net/http"

	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/websocket"
)

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
