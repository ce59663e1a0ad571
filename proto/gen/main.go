// Command gen regenerates the Go code of tako's MCP gRPC service from
// proto/*.proto with pinned tools, so that the checked-in code is a function
// of the .proto files and the pins below and nothing else. `make proto` runs
// it from the repository root; gen_test.go runs it into a temporary
// directory and fails when the checked-in code differs.
//
// Usage:
//
//	go run ./proto/gen [-out DIR]
//
// It needs protoc on PATH (Debian: apt-get install protobuf-compiler) and
// the Go module proxy for the two plugins, which it builds into a temporary
// directory at their pinned versions.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	out := flag.String("out", ".", "directory that holds the module root: code goes to OUT/proto/mcppb")
	flag.Parse()
	if err := Generate(".", *out); err != nil {
		fmt.Fprintln(os.Stderr, "proto/gen:", err)
		os.Exit(1)
	}
}
