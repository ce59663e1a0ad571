package dial_test

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tako-mcp/tako/dial"
)

// writeFile writes content to dir/name (making the folders) and returns
// its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// env is a fixed environment for LoadOptions.LookupEnv.
func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func load(t *testing.T, path string, opts *dial.LoadOptions) []dial.Server {
	t.Helper()
	servers, err := dial.LoadConfig(path, opts)
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	return servers
}

func wantServers(t *testing.T, got, want []dial.Server) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d servers, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("server %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

// TestLoadClaudeDesktop: claude_desktop_config.json as Claude Desktop's
// documentation and the servers' READMEs write it, with the app's own
// keys beside mcpServers. Order is the file's.
func TestLoadClaudeDesktop(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "claude_desktop_config.json", `{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-filesystem",
        "/Users/username/Desktop",
        "/Users/username/Downloads"
      ]
    },
    "github": {
      "command": "docker",
      "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
      "env": {
        "GITHUB_PERSONAL_ACCESS_TOKEN": "<YOUR_TOKEN>"
      }
    },
    "brave-search": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-brave-search"],
      "env": {"BRAVE_API_KEY": "BSA-key", "PORT": 3000, "DEBUG": true}
    },
    "Linear (remote)": {
      "command": "npx",
      "args": ["-y", "mcp-remote", "https://mcp.linear.app/sse"]
    }
  },
  "globalShortcut": "Ctrl+Space",
  "preferences": {"menuBarEnabled": false}
}`)
	wantServers(t, load(t, path, nil), []dial.Server{
		{Name: "filesystem", Kind: dial.Stdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/Users/username/Desktop", "/Users/username/Downloads"}},
		{Name: "github", Kind: dial.Stdio, Command: "docker", Args: []string{"run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"}, Env: []string{"GITHUB_PERSONAL_ACCESS_TOKEN=<YOUR_TOKEN>"}},
		{Name: "brave-search", Kind: dial.Stdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-brave-search"}, Env: []string{"BRAVE_API_KEY=BSA-key", "DEBUG=true", "PORT=3000"}},
		{Name: "Linear-remote", Kind: dial.Stdio, Command: "npx", Args: []string{"-y", "mcp-remote", "https://mcp.linear.app/sse"}},
	})
}

// TestLoadCursor: ~/.cursor/mcp.json with a local and two remote servers,
// Cursor's ${env:} and ${userHome} variables, an envFile, a disabled
// entry (as Cline writes it), comments and trailing commas.
func TestLoadCursor(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	writeFile(t, home, "secrets/search.env", "# keys for the search server\nexport SEARCH_KEY='s3cr3t # not a comment'\nREGION=eu-west-1 # a comment\nEMPTY=\n")
	path := writeFile(t, home, ".cursor/mcp.json", `{
  // Global MCP servers for Cursor.
  "mcpServers": {
    "search": {
      "command": "uvx",
      "args": ["mcp-server-search", "--cache", "${userHome}/.cache/search"],
      "envFile": "${userHome}/secrets/search.env",
      "env": {"REGION": "us-east-1", "TOKEN": "${env:SEARCH_TOKEN}", "EMPTY": null},
    },
    "notion": {
      "url": "https://mcp.notion.com/mcp",
      "headers": {"Authorization": "Bearer ${env:NOTION_TOKEN}"}, /* sent as is */
    },
    "legacy": {"type": "sse", "url": "http://localhost:3001/sse"},
    "old-one": {"command": "node", "args": ["old.js"], "disabled": true},
  },
}`)
	servers := load(t, path, &dial.LoadOptions{LookupEnv: env(map[string]string{"SEARCH_TOKEN": "tok-1", "NOTION_TOKEN": "ntn-2"})})
	wantServers(t, servers, []dial.Server{
		{Name: "search", Kind: dial.Stdio, Command: "uvx", Args: []string{"mcp-server-search", "--cache", home + "/.cache/search"},
			Env: []string{"REGION=us-east-1", "SEARCH_KEY=s3cr3t # not a comment", "TOKEN=tok-1"}}, // null took EMPTY out
		{Name: "notion", Kind: dial.HTTP, URL: "https://mcp.notion.com/mcp", Header: http.Header{"Authorization": {"Bearer ntn-2"}}},
		{Name: "legacy", Kind: dial.SSE, URL: "http://localhost:3001/sse"},
	})
}

// TestLoadClaudeCode: a project's .mcp.json with Claude Code's
// ${VAR} and ${VAR:-default}, and "type" on every entry.
func TestLoadClaudeCode(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, ".mcp.json", `{
  "mcpServers": {
    "api-server": {
      "type": "http",
      "url": "${API_BASE_URL:-https://api.example.com}/mcp",
      "headers": {"Authorization": "Bearer ${API_KEY}"}
    },
    "tools": {"type": "stdio", "command": "${TOOLS_BIN:-tools-server}", "args": ["--root", "${PWD}"]},
    "sockets": {"type": "ws", "url": "wss://realtime.example.com/mcp"}
  }
}`)
	servers := load(t, path, &dial.LoadOptions{LookupEnv: env(map[string]string{"API_KEY": "k-9", "PWD": "/work", "TOOLS_BIN": ""})})
	wantServers(t, servers, []dial.Server{
		{Name: "api-server", Kind: dial.HTTP, URL: "https://api.example.com/mcp", Header: http.Header{"Authorization": {"Bearer k-9"}}},
		{Name: "tools", Kind: dial.Stdio, Command: "tools-server", Args: []string{"--root", "/work"}},
		{Name: "sockets", Kind: dial.WebSocket, URL: "wss://realtime.example.com/mcp"},
	})

	// Unset without a default is an error that names the variable.
	_, err := dial.LoadConfig(path, &dial.LoadOptions{LookupEnv: env(nil)})
	wantConfigError(t, err, dial.ErrUnknownVariable, path, "api-server", "${API_KEY}", "headers.Authorization")
}

// vscodeFile is .vscode/mcp.json as VS Code's documentation writes it:
// inputs, every server type, envFile, cwd, a disabled entry, comments and
// trailing commas.
const vscodeFile = `{
  // 💡 Inputs are prompted on first server start, then stored securely by VS Code.
  "inputs": [
    {
      "type": "promptString",
      "id": "perplexity-key",
      "description": "Perplexity API Key",
      "password": true
    },
    {"type": "pickString", "id": "region", "description": "Region", "options": ["eu", "us"], "default": "eu"},
  ],
  "servers": {
    // https://github.com/ppl-ai/modelcontextprotocol/
    "Perplexity": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "server-perplexity-ask"],
      "env": {
        "PERPLEXITY_API_KEY": "${input:perplexity-key}",
        "REGION": "${input:region}",
      },
    },
    "fetch": {
      "type": "stdio",
      "command": "uvx",
      "args": ["mcp-server-fetch"],
    },
    "local": {
      "type": "stdio",
      "command": "node",
      "args": ["${workspaceFolder}${/}build${pathSeparator}index.js", "--name", "${workspaceFolderBasename}"],
      "envFile": "${workspaceFolder}/.env",
      "cwd": "tools",
    },
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/",
    },
    "my-remote": {
      "type": "http",
      "url": "http://api.contoso.com/mcp",
      "headers": {"API_KEY": "${input:perplexity-key}", "X-Region": "${input:region}"},
    },
    "old-sse": {"type": "sse", "url": "http://localhost:8931/sse"},
    "memory": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-memory"],
      "disabled": true, // off for now
    },
  },
}
`

// TestLoadVSCode reads vscodeFile: each input asked once, in order of
// use, however many servers use it; the disabled server's inputs never.
func TestLoadVSCode(t *testing.T) {
	ws := t.TempDir()
	path := writeFile(t, ws, ".vscode/mcp.json", vscodeFile)
	writeFile(t, ws, ".env", "LOCAL_TOKEN=\"line1\\nline2\"\n")
	var asked []dial.Input
	servers := load(t, path, &dial.LoadOptions{Input: func(in dial.Input) (string, error) {
		asked = append(asked, in)
		if in.ID == "region" {
			return in.Default, nil
		}
		return "pplx-123", nil
	}})
	base := filepath.Base(ws)
	wantServers(t, servers, []dial.Server{
		{Name: "Perplexity", Kind: dial.Stdio, Command: "npx", Args: []string{"-y", "server-perplexity-ask"}, Env: []string{"PERPLEXITY_API_KEY=pplx-123", "REGION=eu"}, Dir: ws},
		{Name: "fetch", Kind: dial.Stdio, Command: "uvx", Args: []string{"mcp-server-fetch"}, Dir: ws},
		{Name: "local", Kind: dial.Stdio, Command: "node", Args: []string{ws + "/build/index.js", "--name", base}, Env: []string{"LOCAL_TOKEN=line1\nline2"}, Dir: filepath.Join(ws, "tools")},
		{Name: "github", Kind: dial.HTTP, URL: "https://api.githubcopilot.com/mcp/"},
		{Name: "my-remote", Kind: dial.HTTP, URL: "http://api.contoso.com/mcp", Header: http.Header{"Api_key": {"pplx-123"}, "X-Region": {"eu"}}},
		{Name: "old-sse", Kind: dial.SSE, URL: "http://localhost:8931/sse"},
	})
	want := []dial.Input{
		{ID: "perplexity-key", Type: "promptString", Description: "Perplexity API Key", Password: true, Server: "Perplexity"},
		{ID: "region", Type: "pickString", Description: "Region", Default: "eu", Options: []string{"eu", "us"}, Server: "Perplexity"},
	}
	if !reflect.DeepEqual(asked, want) {
		t.Errorf("asked %+v\nwant %+v", asked, want)
	}

	// WorkspaceFolder given: variables and relative paths follow it.
	other := t.TempDir()
	writeFile(t, other, ".env", "LOCAL_TOKEN=x\n")
	servers = load(t, path, &dial.LoadOptions{WorkspaceFolder: other, Input: func(dial.Input) (string, error) { return "v", nil }})
	if s := servers[2]; s.Args[0] != other+"/build/index.js" || s.Dir != filepath.Join(other, "tools") || s.Env[0] != "LOCAL_TOKEN=x" {
		t.Errorf("with WorkspaceFolder %s: %+v", other, s)
	}
}

// TestLoadVSCodeSettings: the same servers under "mcp" in settings.json.
func TestLoadVSCodeSettings(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "settings.json", `{
  "editor.fontSize": 14,
  "mcp": {
    "servers": {"fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"]}},
  },
}`)
	wantServers(t, load(t, path, nil), []dial.Server{{Name: "fetch", Kind: dial.Stdio, Command: "uvx", Args: []string{"mcp-server-fetch"}, Dir: dir}})
}

// TestLoadOtherSpellings: Windsurf's serverUrl, Gemini CLI's httpUrl,
// "transport" for "type", names that need cleaning and that clash after.
func TestLoadOtherSpellings(t *testing.T) {
	path := writeFile(t, t.TempDir(), "mcp_config.json", `{"mcpServers": {
  "a b": {"serverUrl": "https://a.example.com/mcp"},
  "a-b": {"httpUrl": "https://b.example.com/mcp"},
  "c": {"url": "https://c.example.com/sse", "transport": "sse"},
  "d": {"url": "https://d.example.com/mcp", "transport": {"type": "streamable-http"}},
  "!!!": {"command": "./bin/demo-server"}
}}`)
	wantServers(t, load(t, path, nil), []dial.Server{
		{Name: "a-b", Kind: dial.HTTP, URL: "https://a.example.com/mcp"},
		{Name: "a-b-2", Kind: dial.HTTP, URL: "https://b.example.com/mcp"},
		{Name: "c", Kind: dial.SSE, URL: "https://c.example.com/sse"},
		{Name: "d", Kind: dial.HTTP, URL: "https://d.example.com/mcp"},
		{Name: "demo-server", Kind: dial.Stdio, Command: "./bin/demo-server"},
	})
}

// TestLoadEnvironmentByDefault: without LoadOptions.LookupEnv, ${env:}
// and ${NAME} read the process's environment.
func TestLoadEnvironmentByDefault(t *testing.T) {
	t.Setenv("TAKO_DIAL_TEST_TOKEN", "from-env")
	path := writeFile(t, t.TempDir(), "mcp.json", `{"mcpServers": {"x": {"command": "x", "env": {"A": "${env:TAKO_DIAL_TEST_TOKEN}", "B": "${TAKO_DIAL_TEST_TOKEN}", "C": "${env:TAKO_DIAL_TEST_UNSET}"}}}}`)
	if got := load(t, path, nil)[0].Env; !reflect.DeepEqual(got, []string{"A=from-env", "B=from-env", "C="}) {
		t.Errorf("env %q", got)
	}
}

// TestLoadAllDisabled: a file whose servers are all off gives none, and
// no error; the caller says what that means.
func TestLoadAllDisabled(t *testing.T) {
	path := writeFile(t, t.TempDir(), "mcp.json", `{"servers": {"x": {"command": "x", "disabled": true}}}`)
	if servers := load(t, path, nil); len(servers) != 0 {
		t.Errorf("servers %+v", servers)
	}
}

// wantConfigError checks that err is a *ConfigError for file, wrapping
// sentinel (when not nil), whose message holds each of contains.
func wantConfigError(t *testing.T, err error, sentinel error, file string, contains ...string) *dial.ConfigError {
	t.Helper()
	var ce *dial.ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v (%T), want a *ConfigError", err, err)
	}
	if ce.File != file {
		t.Errorf("File %q, want %q", ce.File, file)
	}
	if sentinel != nil && !errors.Is(err, sentinel) {
		t.Errorf("err %v does not wrap %v", err, sentinel)
	}
	for _, s := range contains {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not contain %q", err, s)
		}
	}
	return ce
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, content string
		opts          *dial.LoadOptions
		sentinel      error
		line, col     int
		contains      []string
	}{
		{name: "syntax", content: "{\n  \"servers\": {\n    \"a\": {\"command\": \"x\"} \"b\": {}\n  }\n}", line: 3, col: 27,
			contains: []string{":3:27: not JSON", "invalid character"}},
		{name: "not an object", content: `[1, 2]`, line: 1, col: 1, contains: []string{"not a JSON object"}},
		{name: "no servers", content: `{"preferences": {}}`, sentinel: dial.ErrNoServers, contains: []string{`no "mcpServers" or "servers"`}},
		{name: "servers not an object", content: `{"mcpServers": []}`, line: 1, col: 16, contains: []string{`"mcpServers" is not an object`}},
		{name: "entry not an object", content: `{"mcpServers": {"x": "npx foo"}}`, line: 1, col: 22, contains: []string{`server "x": the entry is not an object`}},
		{name: "args a string", content: "{\"servers\": {\n  \"x\": {\"command\": \"npx\",\n   \"args\": \"-y foo\"}}}", line: 3, col: 20,
			contains: []string{`server "x"`, `"args" must be an array, not string`}},
		{name: "disabled a string", content: `{"servers": {"x": {"command": "x", "disabled": "yes"}}}`, contains: []string{`"disabled" must be true or false`}},
		{name: "neither", content: `{"servers": {"x": {"args": ["a"]}}}`, line: 1, col: 19, contains: []string{`server "x"`, `neither a "command" nor a "url"`}},
		{name: "both", content: `{"servers": {"x": {"command": "a", "url": "http://h/mcp"}}}`, contains: []string{`both a "command" and a "url"`}},
		{name: "unknown type", content: `{"servers": {"x": {"type": "carrier-pigeon", "url": "http://h/mcp"}}}`, sentinel: dial.ErrUnsupported, contains: []string{`type "carrier-pigeon"`}},
		{name: "http without url", content: `{"servers": {"x": {"type": "http", "command": "a"}}}`, contains: []string{`needs a "url"`}},
		{name: "bad scheme", content: `{"servers": {"x": {"url": "ftp://h/mcp"}}}`, sentinel: dial.ErrUnsupported, contains: []string{`"ftp"`}},
		{name: "env on a url", content: `{"servers": {"x": {"url": "http://h/mcp", "env": {"A": "1"}}}}`, contains: []string{`"env", "envFile" and "args" are for a command`}},
		{name: "unknown variable", content: `{"servers": {"weather": {"command": "node", "args": ["${workspaceRoot}/x.js"]}}}`, sentinel: dial.ErrUnknownVariable,
			contains: []string{`server "weather"`, "args[0]", "${workspaceRoot}"}},
		{name: "bare variable in vscode", content: `{"servers": {"x": {"command": "${HOME}/x"}}}`, sentinel: dial.ErrUnknownVariable, contains: []string{"command", "${HOME}"}},
		{name: "unclosed variable", content: `{"servers": {"x": {"command": "${userHome/x"}}}`, contains: []string{"command", "without its }"}},
		{name: "input without callback", content: `{"inputs": [{"type": "promptString", "id": "key", "description": "The API key"}], "servers": {"x": {"command": "x", "env": {"K": "${input:key}"}}}}`,
			sentinel: dial.ErrInputNeeded, contains: []string{`server "x"`, "env.K", "${input:key}", `"The API key"`}},
		{name: "undeclared input", content: `{"servers": {"x": {"command": "x", "args": ["${input:nope}"]}}}`, sentinel: dial.ErrUnknownVariable,
			opts: &dial.LoadOptions{Input: func(dial.Input) (string, error) { return "", nil }}, contains: []string{`no input "nope"`}},
		{name: "command input", content: `{"inputs": [{"type": "command", "id": "c", "command": "shellCommand.execute"}], "servers": {"x": {"command": "x", "args": ["${input:c}"]}}}`,
			opts: &dial.LoadOptions{Input: func(dial.Input) (string, error) { return "", nil }}, sentinel: dial.ErrUnsupported, contains: []string{`type "command"`}},
		{name: "input refused", content: `{"inputs": [{"id": "k"}], "servers": {"x": {"command": "x", "args": ["${input:k}"]}}}`,
			opts: &dial.LoadOptions{Input: func(dial.Input) (string, error) { return "", errors.New("the user pressed Escape") }}, contains: []string{"${input:k}: the user pressed Escape"}},
		{name: "missing envFile", content: `{"servers": {"x": {"command": "x", "envFile": "${workspaceFolder}/nope.env"}}}`, sentinel: os.ErrNotExist, contains: []string{`server "x"`, "envFile", "nope.env"}},
		{name: "bad envFile", content: `{"servers": {"x": {"command": "x", "envFile": "bad.env"}}}`, contains: []string{"bad.env:2: want KEY=VALUE"}},
		{name: "unclosed quote in envFile", content: `{"servers": {"x": {"command": "x", "envFile": "quote.env"}}}`, contains: []string{"quote.env:1: A:", `" is not closed`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
			writeFile(t, d, "bad.env", "A=1\nthis line is wrong\n")
			writeFile(t, d, "quote.env", "A=\"open\n")
			path := writeFile(t, d, "mcp.json", c.content)
			_, err := dial.LoadConfig(path, c.opts)
			t.Log(err)
			ce := wantConfigError(t, err, c.sentinel, path, c.contains...)
			if ce != nil && c.line != 0 && (ce.Line != c.line || ce.Column != c.col) {
				t.Errorf("at %d:%d, want %d:%d", ce.Line, ce.Column, c.line, c.col)
			}
		})
	}
}

// TestLoadMissingFile names the file once.
func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.json")
	_, err := dial.LoadConfig(path, nil)
	wantConfigError(t, err, os.ErrNotExist, path)
	if strings.Count(err.Error(), "nope.json") != 1 {
		t.Errorf("the path is not said once: %v", err)
	}
}
