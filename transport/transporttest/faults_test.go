package transporttest_test

import (
	"context"
	"testing"

	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/transport/transporttest"
)

// TestFaultsPipe runs the fault matrix on a Session over transport.Pipe,
// the legacy era, against an in-process reference server. Killing the
// server and cutting the connection are the same thing on a pipe: its
// server end closed.
func TestFaultsPipe(t *testing.T) {
	transporttest.RunFaults(t, func(t *testing.T, f transporttest.Fault) transporttest.FaultTarget {
		srv := mcptest.NewReference(mcptest.Options{})
		if f.Tool != "" {
			srv.FaultTool(f.Tool, f.Server)
		}
		client, server := transport.Pipe()
		done := make(chan error, 1)
		go func() { done <- srv.Serve(context.Background(), server) }()
		t.Cleanup(func() { client.Close(); <-done })
		opts := f.Options
		opts.ProtocolVersion = "2025-11-25"
		s, err := transport.Connect(context.Background(), client, &opts)
		if err != nil {
			t.Fatal(err)
		}
		kill := func() { server.Close() }
		return transporttest.FaultTarget{Transport: s, Server: srv, Kill: kill, Cut: kill}
	},
		transporttest.FaultNotApplicable(transporttest.FaultSessionExpired, "a pipe has no sessions"),
		transporttest.FaultNotApplicable(transporttest.FaultUndecodable, "a pipe carries decoded messages: nothing can fail to decode"),
		transporttest.FaultNotApplicable(transporttest.FaultOversized, "a pipe carries decoded messages and has no size cap"),
		transporttest.FaultNotApplicable(transporttest.FaultOversizedMany, "a pipe carries decoded messages and has no size cap"),
	)
}
