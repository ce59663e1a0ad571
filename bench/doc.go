// Package bench compares tako's client with the peers' clients and with a
// hand-written JSON-RPC "floor" client, all talking to one MCP server written
// with the official Go SDK (servers/gosdk) at protocol 2025-11-25, over stdio
// and (the Benchmark HTTP* functions) over Streamable HTTP.
//
// It is a module of its own so that the peers (the official Go SDK and
// mcp-go) never enter tako's go.mod. It holds only benchmarks; run them with
// `make bench-peers` from the repository root, or
//
//	cd bench && go test -run '^$' -bench . -benchmem -count 1
//
// The figures and what they are compared with are in README.md next to this
// file and in the perf anchors the design cites.
package bench
