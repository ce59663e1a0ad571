package streamablehttp_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/streamablehttp"
	"github.com/tako-mcp/tako/transport"
)

// Servers that are not quite what they should be: a legacy server that
// answers server/discover with {}.

// emptyDiscover answers server/discover with an empty result, as some
// legacy servers answer every method they do not know, and hands every
// other message to a legacy server.
type emptyDiscover struct {
	*legacyServer
	mu      sync.Mutex
	methods []string
}

func (s *emptyDiscover) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		if msg, err := mcp.DecodeMessage(body); err == nil {
			s.mu.Lock()
			s.methods = append(s.methods, msg.Method)
			s.mu.Unlock()
			if msg.Method == mcp.MethodDiscover {
				writeJSON(w, "", &mcp.Message{ID: msg.ID, Result: json.RawMessage(`{}`)})
				return
			}
		}
	}
	s.legacyServer.ServeHTTP(w, r)
}

// TestEmptyDiscoverResultIsALegacyServer: {} is a successful answer to
// server/discover but not a DiscoverResult. It was taken for a 2026-07-28
// server with no capabilities, whose ListTools then returned no tools
// without sending anything; the server is legacy, so the session is too,
// and lists its tool.
func TestEmptyDiscoverResultIsALegacyServer(t *testing.T) {
	srv := &emptyDiscover{legacyServer: newLegacyServer()}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ctx := testContext(t)
	conn, err := streamablehttp.Dial(ctx, hs.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := transport.Connect(ctx, conn, nil) // the defaults: nothing pinned
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer s.Close()
	info := s.ServerInfo()
	if info.ProtocolVersion != mcp.Version20251125 || info.Implementation.Name != "legacy" || info.Capabilities.Tools == nil {
		t.Fatalf("server info %+v: want the legacy server's initialize result", info)
	}
	tools, err := s.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].Name != "echo" {
		t.Fatalf("tools %+v, want the legacy server's echo", tools)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if want := []string{mcp.MethodDiscover, mcp.MethodInitialize, mcp.NotificationInitialized, mcp.MethodToolsList}; strings.Join(srv.methods, " ") != strings.Join(want, " ") {
		t.Errorf("the server saw %v, want %v", srv.methods, want)
	}
}

// TestEmptyDiscoverResultPinnedFails: with 2026-07-28 pinned there is no
// fallback, and the error says what was wrong with the answer.
func TestEmptyDiscoverResultPinnedFails(t *testing.T) {
	srv := &emptyDiscover{legacyServer: newLegacyServer()}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ctx := testContext(t)
	conn, err := streamablehttp.Dial(ctx, hs.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := transport.Connect(ctx, conn, &transport.Options{ProtocolVersion: mcp.Version20260728})
	if err == nil {
		s.Close()
		t.Fatal("Connect pinned at 2026-07-28 took {} for a DiscoverResult")
	}
	var re *mcp.ResultError
	if !errors.Is(err, transport.ErrProtocol) || !errors.As(err, &re) || re.Member != "supportedVersions" {
		t.Fatalf("err = %v, want ErrProtocol and a *mcp.ResultError about supportedVersions", err)
	}
	if !strings.Contains(err.Error(), "supportedVersions is missing") {
		t.Errorf("the message does not say what was wrong: %v", err)
	}
}
