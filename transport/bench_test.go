package transport_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// BenchmarkCallToolPipe measures one tools/call round trip through the engine
// over an in-memory Pipe: the engine's own cost, with no wire and no
// serialisation of the envelope.
func BenchmarkCallToolPipe(b *testing.B) {
	client, server := transport.Pipe()
	done := make(chan struct{})
	answer := json.RawMessage(`{"content":[{"type":"text","text":"hi"}]}`)
	go func() {
		defer close(done)
		for {
			m, err := server.Read(context.Background())
			if err != nil {
				return
			}
			switch m.Method {
			case mcp.MethodDiscover:
				_ = server.Write(context.Background(), &mcp.Message{ID: m.ID, Error: &mcp.Error{Code: mcp.CodeMethodNotFound, Message: "no"}})
			case mcp.MethodInitialize:
				_ = server.Write(context.Background(), &mcp.Message{ID: m.ID, Result: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"b","version":"1"}}`)})
			case mcp.MethodToolsCall:
				_ = server.Write(context.Background(), &mcp.Message{ID: m.ID, Result: answer})
			}
		}
	}()
	s, err := transport.Connect(context.Background(), client, nil)
	if err != nil {
		b.Fatal(err)
	}
	params := &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"message":"hi"}`)}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := s.CallTool(ctx, params)
		if err != nil || len(res.Content) != 1 {
			b.Fatal(res, err)
		}
	}
	b.StopTimer()
	s.Close()
	<-done
}
