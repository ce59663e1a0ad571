package mcp

import (
	"encoding/json"
	"testing"
)

// typicalCallToolResponse is a tools/call response of the size a real tool
// returns: a couple of text blocks and some structured content.
var typicalCallToolResponse = []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[` +
	`{"type":"text","text":"Current weather in New York:\nTemperature: 72°F\nConditions: Partly cloudy\nHumidity: 65%\nWind: 8 mph NW"},` +
	`{"type":"text","text":"Forecast: sunny spells later in the afternoon, with a light breeze from the north-west and no rain expected before Thursday."}],` +
	`"structuredContent":{"temperature":22.5,"conditions":"Partly cloudy","humidity":65,"wind":{"speed":8,"direction":"NW"}},` +
	`"isError":false,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"weather","version":"1.2.0"}}}}`)

func BenchmarkDecodeMessage(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(typicalCallToolResponse)))
	for b.Loop() {
		m, err := DecodeMessage(typicalCallToolResponse)
		if err != nil || m.Result == nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeCallToolResult adds the typed decode a caller of CallTool
// pays on top of the envelope.
func BenchmarkDecodeCallToolResult(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(typicalCallToolResponse)))
	for b.Loop() {
		m, err := DecodeMessage(typicalCallToolResponse)
		if err != nil {
			b.Fatal(err)
		}
		var r CallToolResult
		if err := json.Unmarshal(m.Result, &r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	m, err := DecodeMessage(typicalCallToolResponse)
	if err != nil {
		b.Fatal(err)
	}
	req := &Message{ID: Int64ID(42), Method: MethodToolsCall,
		Params: json.RawMessage(`{"name":"get_weather","arguments":{"location":"New York","units":"imperial"},"_meta":{"progressToken":42}}`)}
	for _, bc := range []struct {
		name string
		m    *Message
	}{{"request", req}, {"response", m}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 1024)
			for b.Loop() {
				buf = bc.m.AppendJSON(buf[:0])
			}
			b.SetBytes(int64(len(buf)))
		})
	}
}

func BenchmarkAppendJSONString(b *testing.B) {
	s := "Current weather in New York:\nTemperature: 72°F\nConditions: \"Partly cloudy\""
	b.ReportAllocs()
	buf := make([]byte, 0, 256)
	for b.Loop() {
		buf = AppendJSONString(buf[:0], s)
	}
}
