package websocket_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/websocket"
)

// TestBridgeAnswersABackendResponseItCannotDecode pins the bridge's
// answer to a malformed response from its backend: a response that does
// not decode but still names its request (the reference server's
// Undecodable fault, "jsonrpc":"1.0" with the request's id, over a stdio
// backend) becomes a JSON-RPC error for that id, so that the client's call
// fails at once. Dropped like any other bad message, it would leave the
// call waiting for an answer that never comes, until its own timeout. The
// bridge goes on serving: the next call is answered.
func TestBridgeAnswersABackendResponseItCannotDecode(t *testing.T) {
	srv := mcptest.NewReference(mcptest.Options{})
	srv.FaultTool(mcptest.ToolEcho, mcptest.Fault{Undecodable: true, Times: 1})
	var served sync.WaitGroup
	// Cleanups run last first: the Handler's Close (registered by
	// startBridge, after this) ends every bridge, which closes each
	// backend and so ends its Serve.
	t.Cleanup(served.Wait)
	url := startBridge(t, &websocket.Handler{Backend: func(ctx context.Context) (transport.Conn, error) {
		// A stdio server in process: its stdout is a RawStream, so that
		// the undecodable answer is real bytes on the pipe.
		fromServer, serverOut := io.Pipe()
		serverIn, toServer := io.Pipe()
		raw := &mcptest.RawStream{W: serverOut}
		server := mcptest.WithRaw(stdio.NewStreamConn(serverIn, raw, stdio.StreamOptions{}), raw)
		served.Add(1)
		go func() {
			defer served.Done()
			// Closing the backend closes toServer, which ends Serve.
			srv.Serve(context.WithoutCancel(ctx), server)
			server.Close()
			serverOut.Close()
		}()
		return stdio.NewStreamConn(fromServer, toServer, stdio.StreamOptions{}), nil
	}})

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := transport.Connect(ctx, dial(t, url, nil), nil)
	if err != nil {
		t.Fatalf("Connect through the bridge: %v", err)
	}
	defer s.Close()

	// The call's own bound is well under the test's: a call left waiting
	// shows as its deadline passing.
	callCtx, callCancel := context.WithTimeout(ctx, 10*time.Second)
	defer callCancel()
	start := time.Now()
	_, err = s.CallTool(callCtx, &mcp.CallToolParams{Name: mcptest.ToolEcho, Arguments: []byte(`{"message":"quarterly report: 3 files changed"}`)})
	var rpcErr *mcp.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeInternalError || !strings.Contains(rpcErr.Message, "could not be delivered") {
		t.Fatalf("a call the backend answered with an undecodable response returned %v after %v; want an internal error from the bridge, at once", err, time.Since(start).Round(time.Millisecond))
	}

	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.ToolEcho, Arguments: []byte(`{"message":"retry"}`)})
	if err != nil || res.Text() != "retry" {
		t.Fatalf("the next call: %v %v, want its echo", res, err)
	}
}
