package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tako-mcp/tako/mcp"
)

// httpServer is a minimal legacy Streamable HTTP server with one tool,
// echo; it refuses every request without the header X-Team: blue, so that
// the tests see --header arrive.
func httpServer(t *testing.T) string {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Team") != "blue" {
			http.Error(w, "who are you?", http.StatusForbidden)
			return
		}
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		msg, err := mcp.DecodeMessage(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var result string
		switch msg.Method {
		case mcp.MethodInitialize:
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"h","version":"1"}}`
		case mcp.MethodToolsList:
			result = `{"tools":[{"name":"echo","description":"Echoes.","inputSchema":{"type":"object"}}]}`
		case mcp.MethodToolsCall:
			var p struct {
				Arguments struct {
					Message string `json:"message"`
				} `json:"arguments"`
			}
			json.Unmarshal(msg.Params, &p)
			b, _ := json.Marshal(p.Arguments.Message)
			result = `{"content":[{"type":"text","text":"Echo: ` + strings.Trim(string(b), `"`) + `"}]}`
		default:
			if !msg.IsRequest() {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			http.Error(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"no"}}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write((&mcp.Message{ID: msg.ID, Result: json.RawMessage(result)}).AppendJSON(nil))
	}))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}

func TestHTTPToolsAndCall(t *testing.T) {
	url := httpServer(t)
	r := tako(t, "tools", "--http", url, "--header", "X-Team: blue")
	if r.code != 0 || !strings.Contains(r.stdout, "echo") {
		t.Fatalf("tools: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = tako(t, "call", "echo", `{"message":"hi"}`, "--http", url, "--header=X-Team:blue")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "Echo: hi" {
		t.Fatalf("call: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestHTTPWithoutHeaderIsRefused(t *testing.T) {
	url := httpServer(t)
	tako(t, "tools", "--http", url).wantFailure(t, 3, "403")
}

func TestHTTPUsageErrors(t *testing.T) {
	tako(t, "tools", "--http", "ftp://example.invalid/mcp").wantFailure(t, 2, "--http")
	tako(t, "tools", "--http", "http://127.0.0.1:1/mcp", "--header", "no colon").wantFailure(t, 2, "--header")
	tako(t, "tools", "--stdio", "true", "--header", "X-A: b").wantFailure(t, 2, "--header")
}
