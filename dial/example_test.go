package dial_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/tako-mcp/tako/dial"
)

// LoadConfig reads a VS Code .vscode/mcp.json as VS Code does: comments,
// trailing commas, variables, inputs, disabled entries.
func ExampleLoadConfig() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, ".vscode", "mcp.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte(`{
  "inputs": [{"type": "promptString", "id": "key", "description": "Weather API key", "password": true}],
  "servers": {
    // Runs from this workspace.
    "weather": {
      "type": "stdio",
      "command": "node",
      "args": ["${workspaceFolder}/build/index.js"],
      "env": {"WEATHER_KEY": "${input:key}"},
    },
    "docs": {"type": "http", "url": "https://mcp.example.com/docs/mcp"},
    "old": {"command": "old-server", "disabled": true},
  },
}`), 0o600)

	servers, err := dial.LoadConfig(path, &dial.LoadOptions{
		WorkspaceFolder: "/home/me/project",
		Input: func(in dial.Input) (string, error) {
			fmt.Printf("asked for %s (%s)\n", in.ID, in.Description)
			return "k-123", nil // a terminal prompt, without echo since in.Password
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range servers {
		if s.Kind == dial.Stdio {
			fmt.Println(s.Name, s.Kind, s.Command, s.Args, s.Env, "in", s.Dir)
		} else {
			fmt.Println(s.Name, s.Kind, s.URL)
		}
	}
	// Output:
	// asked for key (Weather API key)
	// weather stdio node [/home/me/project/build/index.js] [WEATHER_KEY=k-123] in /home/me/project
	// docs http https://mcp.example.com/docs/mcp
}

// Servers without a Name get one from what they run or where they are.
func ExampleServer_DefaultName() {
	for _, s := range []dial.Server{
		{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"}},
		{Command: "uvx", Args: []string{"mcp-server-git", "--repository", "."}},
		{Command: "python", Args: []string{"-m", "foo.server"}},
		{Command: "./bin/demo-server"},
		{URL: "https://news.example.com/mcp"},
		{URL: "http://127.0.0.1:3001/mcp"},
		{Kind: dial.GRPC, URL: "127.0.0.1:50051"},
	} {
		fmt.Println(s.DefaultName())
	}
	// Output:
	// server-everything
	// mcp-server-git
	// foo
	// demo-server
	// news
	// localhost-3001
	// localhost-50051
}

// UniqueNames keeps names given on purpose and numbers the repeats.
func ExampleUniqueNames() {
	fmt.Println(dial.UniqueNames([]string{"demo-server", "demo-server", "news"}))
	// Output: [demo-server demo-server-2 news]
}
