// Package dial is the one way tako reaches an MCP server: a [Server] says
// how (a command to run, or a URL of some [Kind] with its headers,
// authorization and TLS), [Dial] connects to it and runs the handshake,
// [Server.DefaultName] gives it a short, readable name, and [LoadConfig]
// reads the configuration files people already have (Claude Desktop's,
// Cursor's, Claude Code's, VS Code's, with comments, trailing commas and
// variables).
//
// dial sits beside registry, above the transport packages: the CLI, the
// agent ([orchestrator]), the bridges and the inspector reach servers
// through it and nothing else, so that a new transport is one package plus
// one case in [Dial].
//
//	servers, err := dial.LoadConfig(".vscode/mcp.json", nil)
//	...
//	for _, s := range servers {
//		t, err := dial.Dial(ctx, s, nil) // a transport.Transport, handshake done
//		...
//		reg.AddServer(ctx, s.Name, t, nil)
//	}
//
// A Server is plain data: build one by hand, from flags, or with
// LoadConfig. Kind may be left empty when the Command or the URL's scheme
// says it. Authorization plugs in as an [Authorizer], which an
// [auth.Client] is; auth does not import dial. Errors name the server and
// the step that failed ([Error]), or the file, the server and the place in
// it ([ConfigError]).
//
// [orchestrator]: https://pkg.go.dev/github.com/tako-mcp/tako/orchestrator
// [auth.Client]: https://pkg.go.dev/github.com/tako-mcp/tako/auth#Client
package dial
