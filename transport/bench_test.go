package transport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// BenchmarkCallToolPipe measures one tools/call round trip through the engine
// over an in-memory Pipe: the engine's own cost, with no wire and no
// serialisation of the envelope. On 2026-07-28 every result is asked its
// resultType before the caller decodes it; the 1MiB case shows that this
// costs no second decoding of the result.
func BenchmarkCallToolPipe(b *testing.B) {
	small := json.RawMessage(`{"content":[{"type":"text","text":"hi"}]}`)
	big := json.RawMessage(`{"content":[{"type":"text","text":"` + strings.Repeat("x", 1<<20) + `"}]}`)
	for _, c := range []struct {
		name    string
		version string
		answer  json.RawMessage
	}{
		{"legacy", mcp.Version20251125, small},
		{"modern", mcp.Version20260728, small},
		{"modern/1MiB", mcp.Version20260728, big},
	} {
		b.Run(c.name, func(b *testing.B) { benchCallToolPipe(b, c.version, c.answer, nil) })
	}
	// A result checked against the tool's output schema, as the Session
	// does by default: a week's forecast with the text block older
	// clients read beside it.
	var days []string
	for d := range 7 {
		days = append(days, fmt.Sprintf(`{"day":"2026-12-%02d","high":%d.5,"low":-%d,"summary":"Schnee am Nachmittag, \"böig\"\nnachts klar"}`, d+1, d, d))
	}
	forecast := `{"temperature":-1.5,"conditions":"light snow","humidity":87,"forecast":[` + strings.Join(days, ",") + `]}`
	structured := json.RawMessage(`{"content":[{"type":"text","text":` + strconv.Quote(forecast) + `}],"structuredContent":` + forecast + `}`)
	tools := json.RawMessage(`{"tools":[{"name":"echo","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{
		"temperature":{"type":"number"},"conditions":{"type":"string"},"humidity":{"type":"number","minimum":0,"maximum":100},
		"forecast":{"type":"array","items":{"type":"object","properties":{"day":{"type":"string","format":"date"},"high":{"type":"number"},"low":{"type":"number"},"summary":{"type":"string"}},"required":["day","high","low"]}}},
		"required":["temperature","conditions"]}}]}`)
	b.Run("legacy/outputSchema", func(b *testing.B) { benchCallToolPipe(b, mcp.Version20251125, structured, tools) })
}

// benchCallToolPipe calls the tool echo, which answers answer; tools,
// when not nil, is the server's tools/list result, listed before the
// calls.
func benchCallToolPipe(b *testing.B, version string, answer, tools json.RawMessage) {
	client, server := transport.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			m, err := server.Read(context.Background())
			if err != nil {
				return
			}
			switch {
			case m.Method == mcp.MethodDiscover && mcp.IsModernVersion(version):
				_ = server.Write(context.Background(), &mcp.Message{ID: m.ID, Result: json.RawMessage(`{"supportedVersions":["` + version + `"],"capabilities":{"tools":{}}}`)})
			case m.Method == mcp.MethodDiscover:
				_ = server.Write(context.Background(), &mcp.Message{ID: m.ID, Error: &mcp.Error{Code: mcp.CodeMethodNotFound, Message: "no"}})
			case m.Method == mcp.MethodInitialize:
				_ = server.Write(context.Background(), &mcp.Message{ID: m.ID, Result: json.RawMessage(`{"protocolVersion":"` + version + `","capabilities":{"tools":{}},"serverInfo":{"name":"b","version":"1"}}`)})
			case m.Method == mcp.MethodToolsList:
				_ = server.Write(context.Background(), &mcp.Message{ID: m.ID, Result: tools})
			case m.Method == mcp.MethodToolsCall:
				_ = server.Write(context.Background(), &mcp.Message{ID: m.ID, Result: answer})
			}
		}
	}()
	s, err := transport.Connect(context.Background(), client, nil)
	if err != nil {
		b.Fatal(err)
	}
	if got := s.ServerInfo().ProtocolVersion; got != version {
		b.Fatalf("speaking %s, want %s", got, version)
	}
	if tools != nil {
		if _, err := s.ListTools(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	params := &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"message":"hi"}`)}
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(answer)))
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
