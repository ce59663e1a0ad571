// Command tiny is the smallest stdio MCP server the sessions suite can
// hold a thousand of: newline-delimited JSON-RPC, the initialize
// handshake at protocol 2025-11-25, ping, and the echo tool (tools/list
// and tools/call), nothing else. The servers/gosdk binary takes about
// 10 MiB resident per process; a thousand of them would take the machine
// the clients are measured on. This one takes about 2 MiB, and the
// clients it serves speak to it exactly as to servers/gosdk.
//
// It exits when its stdin reaches EOF.
package main

import (
	"bufio"
	"encoding/json"
	"os"
)

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		ProtocolVersion string `json:"protocolVersion"`
		Name            string `json:"name"`
		Arguments       struct {
			Message string `json:"message"`
		} `json:"arguments"`
	} `json:"params"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type text struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

var echoTool = map[string]any{
	"name": "echo", "description": "Echoes back the message",
	"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"message": map[string]any{"type": "string"}}},
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 4096), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for in.Scan() {
		var req request
		if json.Unmarshal(in.Bytes(), &req) != nil || req.ID == nil {
			continue // a notification, or junk: nothing to answer
		}
		resp := response{JSONRPC: "2.0", ID: req.ID}
		switch req.Method {
		case "initialize":
			resp.Result = map[string]any{
				"protocolVersion": req.Params.ProtocolVersion,
				"capabilities":    map[string]any{"tools": map[string]any{}},
				"serverInfo":      map[string]any{"name": "bench-tiny", "version": "1.0.0"},
			}
		case "ping":
			resp.Result = map[string]any{}
		case "tools/list":
			resp.Result = map[string]any{"tools": []any{echoTool}}
		case "tools/call":
			if req.Params.Name != "echo" {
				resp.Error = &rpcError{Code: -32602, Message: "unknown tool " + req.Params.Name}
				break
			}
			resp.Result = map[string]any{"content": []text{{"text", "Echo: " + req.Params.Arguments.Message}}}
		default:
			resp.Error = &rpcError{Code: -32601, Message: "method not found: " + req.Method}
		}
		enc.Encode(resp)
		out.Flush()
	}
}
