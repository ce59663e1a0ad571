// Package interop tests tako against other MCP implementations: the
// reference server of the TypeScript SDK (@modelcontextprotocol/server-everything,
// installed by npm ci in the repository root) and servers built with the
// official Go SDK and with mark3labs/mcp-go (servers/gosdk and servers/mcpgo).
//
// It is a module of its own so that the peers' dependencies stay out of
// tako's go.mod. README.md records what each peer speaks.
package interop
