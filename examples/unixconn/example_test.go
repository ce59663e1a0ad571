package unixconn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"

	"github.com/tako-mcp/tako/examples/unixconn"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
)

// A Conn of one's own, given to transport.Connect, speaks the whole
// protocol. Here the server at the other end of the socket is mcptest's
// reference server, served through the same Conn type.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "unixconn")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	lis, err := net.Listen("unix", filepath.Join(dir, "mcp.sock"))
	if err != nil {
		log.Fatal(err)
	}
	defer lis.Close()
	served := make(chan error, 1)
	go func() {
		nc, err := lis.Accept()
		if err != nil {
			served <- err
			return
		}
		served <- mcptest.NewReference(mcptest.Options{}).Serve(ctx, unixconn.New(nc))
	}()

	conn, err := unixconn.Dial(ctx, lis.Addr().String())
	if err != nil {
		log.Fatal(err)
	}
	s, err := transport.Connect(ctx, conn, nil) // the Session owns conn from here
	if err != nil {
		log.Fatal(err)
	}
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"message":"hello over a Unix socket"}`)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.ServerInfo().ProtocolVersion)
	fmt.Println(res.Text())
	s.Close()
	if err := <-served; err != nil {
		log.Fatal(err)
	}
	// Output:
	// 2026-07-28
	// hello over a Unix socket
}
