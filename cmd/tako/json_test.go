package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/tako-mcp/tako/internal/testpki"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
)

// jsonPageSize pages tools/list on every server of TestJSONEveryTransport:
// the reference tools then take several pages.
const jsonPageSize = 3

// TestJSONEveryTransport: tools --json and call --json print the
// protocol's result over --stdio, --http, --ws and --grpc alike, through
// transport.Call: the tools of every page merged into one list with no
// nextCursor, and the tools/call result itself.
func TestJSONEveryTransport(t *testing.T) {
	var want []string
	for _, tool := range mcptest.NewReference(mcptest.Options{}).Tools() {
		want = append(want, tool.Name)
	}
	if len(want) <= jsonPageSize {
		t.Fatalf("the reference server has %d tools: they fit in one page of %d", len(want), jsonPageSize)
	}
	demo := demoCommand(t) + " -page-size 3"
	httpSrv := mcptest.NewReference(mcptest.Options{PageSize: jsonPageSize})
	pki := testpki.New(t)

	servers := []struct {
		name  string
		flags func(t *testing.T) []string
	}{
		{"stdio", func(t *testing.T) []string { return []string{"--stdio", demo} }},
		{"http", func(t *testing.T) []string { return []string{"--http", referenceHTTP(t, httpSrv)} }},
		{"ws", func(t *testing.T) []string {
			return []string{"--ws", bridge(t, "--listen-ws", "127.0.0.1:0", "--stdio", demo)}
		}},
		{"grpc", func(t *testing.T) []string {
			url := bridge(t, "--listen-grpc", "127.0.0.1:0", "--tls-cert", pki.Server.CertFile, "--tls-key", pki.Server.KeyFile,
				"--client-ca", pki.CA.File, "--stdio", demo)
			return []string{"--grpc", strings.TrimPrefix(url, "grpc://"), "--cert", pki.Client.CertFile, "--key", pki.Client.KeyFile, "--ca", pki.CA.File}
		}},
	}
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			flags := s.flags(t)
			r := tako(t, append([]string{"tools", "--json"}, flags...)...)
			wantOneLine(t, r)
			var top map[string]json.RawMessage
			if err := json.Unmarshal([]byte(r.stdout), &top); err != nil {
				t.Fatalf("tools --json is not a JSON object: %v", err)
			}
			if _, ok := top["nextCursor"]; ok {
				t.Errorf("tools --json has a nextCursor: the pages were not merged")
			}
			var tools []mcp.Tool
			if err := json.Unmarshal(top["tools"], &tools); err != nil {
				t.Fatalf("tools: %v", err)
			}
			var got []string
			for _, tool := range tools {
				got = append(got, tool.Name)
				if len(tool.InputSchema) == 0 {
					t.Errorf("tool %s has no inputSchema", tool.Name)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("tools --json lists %q, want every page's %q", got, want)
			}

			r = tako(t, append([]string{"call", "--json", "echo", `{"message":"every page"}`}, flags...)...)
			wantOneLine(t, r)
			var res map[string]json.RawMessage
			if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
				t.Fatalf("call --json is not a JSON object: %v", err)
			}
			if c := string(res["content"]); c != `[{"type":"text","text":"every page"}]` {
				t.Errorf("call --json content = %s", c)
			}
			if _, ok := res["isError"]; ok {
				t.Errorf("call --json: isError in %s", r.stdout)
			}
		})
	}
	// The HTTP server saw the pages asked for one by one (once by tools
	// --json; the CLI has no other reason to list).
	var lists int
	for _, rec := range httpSrv.Received() {
		if rec.Msg.Method == mcp.MethodToolsList {
			lists++
		}
	}
	if pages := (len(want) + jsonPageSize - 1) / jsonPageSize; lists < pages {
		t.Errorf("the HTTP server answered %d tools/list requests, want at least %d pages", lists, pages)
	}
}

// TestCallJSONIsTheRawResult: call --json prints the result byte for byte
// as the server wrote it, fields tako does not model and all.
func TestCallJSONIsTheRawResult(t *testing.T) {
	t.Parallel()
	const args = `{"message":"raw"}`
	want := rawClient(t, demoServer, "-versions", "2025-11-25")(mcp.MethodToolsCall,
		&mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(args)})
	r := tako(t, "call", "--json", "echo", args, "--stdio", demoCommand(t)+" -versions 2025-11-25")
	wantOneLine(t, r)
	if got := strings.TrimSuffix(r.stdout, "\n"); !bytes.Equal([]byte(got), want) {
		t.Errorf("call --json printed\n%s\nthe server wrote\n%s", got, want)
	}
}

func wantOneLine(t *testing.T, r result) {
	t.Helper()
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if strings.Count(r.stdout, "\n") != 1 || !strings.HasSuffix(r.stdout, "\n") {
		t.Errorf("output is not one line: %q", clip(r.stdout))
	}
}
