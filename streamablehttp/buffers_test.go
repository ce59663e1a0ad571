package streamablehttp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/streamablehttp"
)

// TestOwnTransportDefaults pins what the Conn's own transport is made
// with, as bench/'s sessions suite measures it: 2 KB connection buffers
// rather than net/http's 4 KB each, held by the GET stream's connection
// for a session's life; and for an http:// endpoint no HTTP/2 set-up,
// which only TLS negotiates (1.6 KB of each idle session's heap). An
// https:// endpoint keeps HTTP/2.
func TestOwnTransportDefaults(t *testing.T) {
	ctx := testContext(t)
	for _, tc := range []struct {
		url   string
		http2 bool
	}{{"http://127.0.0.1:1/mcp", false}, {"https://127.0.0.1:1/mcp", true}} {
		c, err := streamablehttp.Dial(ctx, tc.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		own := c.OwnTransport()
		if own == nil {
			t.Fatalf("%s: the Conn made no transport of its own", tc.url)
		}
		if own.ReadBufferSize != 2<<10 || own.WriteBufferSize != 2<<10 {
			t.Errorf("%s: buffers %d/%d, want 2048/2048", tc.url, own.ReadBufferSize, own.WriteBufferSize)
		}
		if got := own.Protocols == nil || own.Protocols.HTTP2(); got != tc.http2 {
			t.Errorf("%s: HTTP/2 allowed %v, want %v", tc.url, got, tc.http2)
		}
		c.Close()
	}
}

// TestMessagesAndHeadersPastTheConnBuffers: with 2 KB connection buffers,
// a request whose headers alone are larger (a long bearer token), an
// answer with larger headers, and arguments and results of many KB with
// newlines, quotes, tabs and non-ASCII text all cross intact.
func TestMessagesAndHeadersPastTheConnBuffers(t *testing.T) {
	token := strings.Repeat("eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.", 200) // 7 KB, as a JWT with many claims is
	srv := newLegacyServer()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "token cut", http.StatusUnauthorized)
			return
		}
		w.Header().Set("X-Trace", strings.Repeat("span=4bf92f3577b34da6a3ce929d0e0e4736;", 150))
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	ctx := testContext(t)
	s := connect(t, ctx, hs.URL, &streamablehttp.Options{Header: http.Header{"Authorization": {"Bearer " + token}}})
	var text strings.Builder
	for i := range 400 {
		text.WriteString("line ")
		text.WriteString(strings.Repeat("→ \"quoted\"\tcafé 日本語 ", i%7+1))
		text.WriteString("\n")
	}
	args, _ := json.Marshal(map[string]string{"m": text.String()})
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Text(), "echo "+string(args); got != want {
		t.Fatalf("the %d-byte result came back as %d bytes", len(want), len(got))
	}
}
