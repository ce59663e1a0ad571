package interop

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// Elicitation against the reference server, over stdio and Streamable
// HTTP: a form answered by a handler that fills in one field, the rest
// being the defaults the SDK adds, and a URL elicitation through the
// -32042 error, which the SDK answers through the handler before retrying
// the call.

// rawElicitResult returns the ElicitResult the reference server's
// elicitation tools echo back in their "Raw result:" text block.
func rawElicitResult(t *testing.T, res *mcp.CallToolResult) mcp.ElicitResult {
	t.Helper()
	for _, c := range res.Content {
		if _, raw, ok := strings.Cut(c.Text, "Raw result: "); ok {
			var out mcp.ElicitResult
			if err := json.Unmarshal([]byte(raw), &out); err != nil {
				t.Fatalf("raw result %q: %v", raw, err)
			}
			return out
		}
	}
	t.Fatalf("no raw result in %q", res.Text())
	return mcp.ElicitResult{}
}

func TestEverythingElicitationDefaults(t *testing.T) {
	opts := func() *transport.Options {
		return &transport.Options{Handlers: transport.Handlers{
			Elicitation: func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				// A person who typed a name and left every other field as
				// offered.
				return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"name": "Ada"}}, nil
			},
		}}
	}
	everythingWires(t, opts, func(t *testing.T, ctx context.Context, s *transport.Session) {
		got := rawElicitResult(t, call(t, ctx, s, "trigger-elicitation-request", `{}`))
		if got.Action != mcp.ElicitAccept {
			t.Fatalf("action %q", got.Action)
		}
		b, _ := json.Marshal(got.Content)
		var c struct {
			Name      string   `json:"name"`
			FirstLine string   `json:"firstLine"`
			Integer   int      `json:"integer"`
			Number    float64  `json:"number"`
			Friend    string   `json:"untitledSingleSelectEnum"`
			Music     []string `json:"untitledMultipleSelectEnum"`
			Hero      string   `json:"titledSingleSelectEnum"`
			Fish      []string `json:"titledMultipleSelectEnum"`
			Pet       string   `json:"legacyTitledEnum"`
		}
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		if c.Name != "Ada" || c.FirstLine != "It was a dark and stormy night." || c.Integer != 42 || c.Number != 3.14 ||
			c.Friend != "Monica" || len(c.Music) != 1 || c.Music[0] != "Guitar" || c.Hero != "hero-1" ||
			len(c.Fish) != 1 || c.Fish[0] != "fish-1" || c.Pet != "pet-1" {
			t.Fatalf("the server received %s; want the name and every default", b)
		}
	})
}

// TestEverythingURLElicitationRequired: trigger-url-elicitation with
// errorPath fails the first call with -32042 listing a prerequisite URL;
// the SDK shows it through the handler, retries the call, and the retry
// asks for the original URL with elicitation/create in URL mode.
func TestEverythingURLElicitationRequired(t *testing.T) {
	var mu sync.Mutex
	var seen []mcp.ElicitParams
	opts := func() *transport.Options {
		mu.Lock()
		seen = nil
		mu.Unlock()
		return &transport.Options{Handlers: transport.Handlers{
			ElicitationURL: true,
			Elicitation: func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				mu.Lock()
				seen = append(seen, *p)
				mu.Unlock()
				// The user opened the page and came back done.
				return &mcp.ElicitResult{Action: mcp.ElicitAccept}, nil
			},
		}}
	}
	everythingWires(t, opts, func(t *testing.T, ctx context.Context, s *transport.Session) {
		res := call(t, ctx, s, "trigger-url-elicitation", `{"url":"https://example.com/tako","errorPath":true}`)
		if !strings.Contains(res.Text(), "User completed the URL elicitation flow") {
			t.Fatalf("result %q", res.Text())
		}
		mu.Lock()
		defer mu.Unlock()
		if len(seen) != 2 {
			t.Fatalf("the handler saw %d elicitations, want 2 (the -32042 prerequisite, then the request): %+v", len(seen), seen)
		}
		pre, req := seen[0], seen[1]
		if !pre.IsURL() || pre.ElicitationID == "" || pre.URL == "https://example.com/tako" {
			t.Errorf("prerequisite from the -32042: %+v", pre)
		}
		if !req.IsURL() || req.URL != "https://example.com/tako" {
			t.Errorf("elicitation/create on the retry: %+v", req)
		}
	})
}
