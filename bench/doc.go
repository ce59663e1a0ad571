// Package bench compares tako's client with the peers' clients (the
// official Go SDK and mcp-go) and with a hand-written JSON-RPC "floor"
// client, all talking to one MCP server written with the official Go SDK
// (servers/gosdk) at protocol 2025-11-25: over stdio, over Streamable HTTP
// (each client with its own defaults, and again on one tuned HTTP client),
// and over WebSocket and gRPC through tako's bridges (servers/bridge).
//
// It is a module of its own so that the peers never enter tako's go.mod.
// cmd/peers prints the tables (`make bench-peers` from the repository
// root): the per-call figures from one process per transport in which the
// clients take turns (the side suite), the rest from a process per client;
// the Go benchmarks here are for focused profiling of one client, in the
// test process:
//
//	cd bench && go test -run '^$' -bench 'EchoCall/http/tako' -cpuprofile cpu.out
//
// The figures and what they are compared with are in README.md next to this
// file and in the perf anchors the design cites.
package bench
