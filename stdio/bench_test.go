package stdio_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
)

// benchParams is a typical small tools/call: the size of the perf anchors'
// echo call.
var benchParams = json.RawMessage(`{"name":"echo","arguments":{"message":"hello, world"}}`)

// roundTrips writes a request and reads its response b.N times. The request
// is one Message whose id changes, so that the figures are the Conn's, not
// those of building messages.
func roundTrips(b *testing.B, c transport.Conn, params json.RawMessage) {
	ctx := context.Background()
	msg := &mcp.Message{Method: "echo", Params: params}
	b.SetBytes(int64(2 * len(params)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		msg.ID = mcp.Int64ID(int64(i + 1))
		if err := c.Write(ctx, msg); err != nil {
			b.Fatal(err)
		}
		m, err := c.Read(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if m.ID != msg.ID {
			b.Fatalf("response to %s, want %s", m.ID, msg.ID)
		}
	}
}

// BenchmarkStreamConnRoundTrip measures the framing alone: a client and an
// echoing server Conn over two io.Pipes in one process. Allocations count
// both ends.
func BenchmarkStreamConnRoundTrip(b *testing.B) {
	client, server := streamPair(b, stdio.StreamOptions{})
	go func() {
		ctx := context.Background()
		resp := &mcp.Message{}
		for {
			m, err := server.Read(ctx)
			if err != nil {
				return
			}
			resp.ID, resp.Result = m.ID, m.Params
			if server.Write(ctx, resp) != nil {
				return
			}
		}
	}()
	roundTrips(b, client, benchParams)
}

// BenchmarkProcessRoundTrip measures a real subprocess echo server (the
// test binary itself). Allocations are the client's only.
func BenchmarkProcessRoundTrip(b *testing.B) {
	b.Run("small", func(b *testing.B) {
		roundTrips(b, startServer(b, "echo", stdio.Options{}), benchParams)
	})
	b.Run("1MiB", func(b *testing.B) {
		big := json.RawMessage(`{"data":"` + strings.Repeat("x", 1<<20) + `"}`)
		roundTrips(b, startServer(b, "echo", stdio.Options{}), big)
	})
}
