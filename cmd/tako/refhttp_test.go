package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
)

// referenceHTTP serves srv over stateless (2026-07-28) Streamable HTTP and
// returns the endpoint's URL. Each POSTed request is served on a pipe of
// its own, as a stateless server serves each request alone, and answered
// with one JSON body; notifications are accepted and dropped, and there is
// no GET stream. It is enough for tools/list and tools/call, which is what
// the CLI's tests ask of it.
func referenceHTTP(t *testing.T, srv *mcptest.Server) string {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		msg, err := mcp.DecodeMessage(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if !msg.IsRequest() {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		ctx := r.Context()
		conn, wait := srv.Pipe(ctx)
		defer func() { conn.Close(); wait() }()
		if err := conn.Write(ctx, msg); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		for {
			m, err := conn.Read(ctx)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			if m.IsResponse() && m.ID.String() == msg.ID.String() {
				w.Header().Set("Content-Type", "application/json")
				w.Write(m.AppendJSON(nil))
				return
			}
			// Progress and log notifications have no stream to go to.
		}
	}))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}
