package main

import (
	"net/http/httptest"
	"testing"

	"github.com/tako-mcp/tako/internal/testserve"
	"github.com/tako-mcp/tako/mcptest"
)

// referenceHTTP serves srv over stateless (2026-07-28) Streamable HTTP on
// loopback and returns the endpoint's URL. It is enough for tools/list and
// tools/call, which is what the CLI's tests ask of it.
func referenceHTTP(t *testing.T, srv *mcptest.Server) string {
	t.Helper()
	hs := httptest.NewServer(testserve.StatelessHTTP(srv, nil))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}
