package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tako-mcp/tako/streamablehttp"
)

func TestTellingStderr(t *testing.T) {
	node := []string{"node:internal/modules/cjs/loader:1228", "throw err;", "^",
		"Error: Cannot find module '/x/y.js'", "at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15) {",
		"code: 'MODULE_NOT_FOUND',", "requireStack: []", "}", "Node.js v20.20.2"}
	python := []string{"Traceback (most recent call last):", `File "<string>", line 1, in <module>`,
		"ImportError: while importing x", "ModuleNotFoundError: No module named 'x'"}
	for _, tt := range []struct {
		lines []string
		want  string
	}{
		{node, "Error: Cannot find module '/x/y.js'"},
		{python, "ModuleNotFoundError: No module named 'x'"},
		{[]string{"starting", "panic: runtime error: index out of range", "goroutine 1 [running]:"}, "panic: runtime error: index out of range"},
		{[]string{"starting", "cannot open config"}, "starting / cannot open config"},
		{[]string{"one", "two", "three", "four"}, "two / three / four"},
		{npm404, "npm error 404 Not Found - GET https://registry.example/@modelcontextprotocol%2fserver-everythin"},
	} {
		if got := tellingStderr(tt.lines); got != tt.want {
			t.Errorf("tellingStderr(%q) = %q, want %q", tt.lines, got, tt.want)
		}
	}
}

func TestHTTPFailure(t *testing.T) {
	page := "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>"
	got := httpFailure(&streamablehttp.StatusError{Code: 502, Body: page})
	if got != "the server answered HTTP 502 Bad Gateway (502 Bad Gateway)" && got != "the server answered HTTP 502 Bad Gateway" {
		t.Errorf("502: %q", got)
	}
	got = httpFailure(&streamablehttp.StatusError{Code: 404, Body: "<html><head><title>Page &amp; not found</title></head><body>" + strings.Repeat("x", 5000) + "</body></html>"})
	if !strings.Contains(got, "HTTP 404 Not Found (Page & not found)") || !strings.Contains(got, "MCP endpoint") || strings.Contains(got, "xxx") {
		t.Errorf("404: %q", got)
	}
	if got := httpFailure(&streamablehttp.StatusError{Code: 500, Body: "database down\nstack..."}); !strings.HasSuffix(got, "(database down)") {
		t.Errorf("500: %q", got)
	}
}

func TestStartFailureIsOneClause(t *testing.T) {
	r := tako(t, "tools", "--stdio", "/nonexistent/tako-test/server")
	r.wantFailure(t, 3, "cannot start /nonexistent/tako-test/server: no such file")
	if strings.Count(r.stderr, "/nonexistent/tako-test/server") != 1 {
		t.Errorf("the command is named more than once: %q", r.stderr)
	}
}

func TestConfigFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	claude := write("claude.json", `{"mcpServers":{"fs":{"command":"npx","args":["-y","server fs"],"env":{"B":"2","A":"1"}},
		"web":{"url":"https://example.com/mcp","headers":{"Authorization":"Bearer t"}}}}`)
	vscode := write("mcp.json", `{"inputs":[],"servers":{"sock":{"type":"ws","url":"wss://example.com/mcp"},"sse":{"type":"sse","url":"http://127.0.0.1:1/sse"}}}`)
	for _, tt := range []struct {
		file, name       string
		kind, value      string
		argv, env, heads []string
	}{
		{claude, "fs", "stdio", "npx -y server fs", []string{"npx", "-y", "server fs"}, []string{"A=1", "B=2", "C=3"}, nil},
		{claude, "web", "http", "https://example.com/mcp", nil, nil, []string{"Authorization:Bearer t"}},
		{vscode, "sock", "ws", "wss://example.com/mcp", nil, nil, nil},
		{vscode, "sse", "http", "http://127.0.0.1:1/sse", nil, nil, nil},
	} {
		o := options{config: tt.file, name: tt.name}
		if tt.kind == "stdio" {
			o.env = []string{"C=3"} // --env is for a stdio server's environment
		}
		s, err := serverOf(&o)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var heads []string
		for k, vs := range s.Header {
			for _, v := range vs {
				heads = append(heads, k+":"+v)
			}
		}
		argv := append([]string{s.Command}, s.Args...)
		if s.Command == "" {
			argv = nil
		}
		if kindFlag(&s) != tt.kind || targetOf(&s) != tt.value || strings.Join(argv, "|") != strings.Join(tt.argv, "|") ||
			strings.Join(s.Env, ",") != strings.Join(tt.env, ",") || strings.Join(heads, ",") != strings.Join(tt.heads, ",") {
			t.Errorf("%s: got %+v", tt.name, s)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"tools", "--config", claude}, "has 2 servers: pick one with --server NAME (fs, web)"},
		{[]string{"tools", "--config", claude, "--server", "nope"}, `no server "nope"; it has fs, web`},
		{[]string{"tools", "--server", "fs"}, "give the file too"},
		{[]string{"tools", "--config", filepath.Join(dir, "missing.json")}, "no such file or directory"},
		{[]string{"tools", "--config", write("bad.json", `{"mcpServers":{"x":{"type":"grpc"}}}`)}, `server "x": a server of type "grpc" needs a "url"`},
		{[]string{"tools", "--config", write("empty.json", `{}`)}, `no "mcpServers" or "servers" object`},
		{[]string{"tools", "--config", claude, "--server", "fs", "--stdio", "x"}, "both name a server"},
	} {
		tako(t, tt.args...).wantFailure(t, 2, tt.want)
	}
}

func TestTypedArguments(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{"n":{"type":"integer"},"x":{"type":"number"},"b":{"type":"boolean"},
		"s":{"type":"string"},"l":{"type":"array"},"o":{"type":"object"},"u":{"type":["null","integer"]},"free":{}},"required":["n"],"additionalProperties":false}`)
	got, err := typedArguments("t", schema, []string{"n=3", "x=2.5", "b=true", "s=007", "l=[1, 2]", `o={"k": 1}`, "u=4", "free=hi"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"b":true,"free":"hi","l":[1,2],"n":3,"o":{"k":1},"s":"007","u":4,"x":2.5}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
	for _, tt := range []struct {
		pairs []string
		want  string
	}{
		{[]string{"n=1.5"}, "want an integer"},
		{[]string{"n=1", "b=yes"}, "want true or false"},
		{[]string{"n=1", "l=1,2"}, "want an array as JSON"},
		{[]string{"n=1", "o=[1]"}, "want an object as JSON"},
		{[]string{"n=1", "zz=1"}, `has no argument "zz"`},
		{[]string{"x=1"}, "needs the argument n=..."},
	} {
		_, err := typedArguments("t", schema, tt.pairs)
		if _, ok := err.(*usageError); !ok || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want a usage error with %q", tt.pairs, err, tt.want)
		}
	}
}
