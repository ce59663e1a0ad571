package interop

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// goPeer is a server from servers/, built by TestMain.
type goPeer struct {
	bin  string // file name in peerBin
	name string // serverInfo.name it reports
	// progressAfterResponse: the peer may write a call's progress
	// notifications after the call's response (mcp-go's stdio server writes
	// notifications from a goroutine of its own, racing the response), so a
	// client that stops listening for a token when its call completes, as
	// the spec allows, sees only some of them or none.
	progressAfterResponse bool
}

var goPeers = []goPeer{
	{bin: "gosdk", name: "interop-gosdk"},
	{bin: "mcpgo", name: "interop-mcpgo", progressAfterResponse: true},
}

// eras are the values of Options.ProtocolVersion the Go peers are tested
// with: "" (tako probes with server/discover, and both peers answer it, so
// 2026-07-28 is expected) and every revision both peers speak.
var eras = []struct {
	pin, want string
}{
	{"", mcp.Version20260728},
	{mcp.Version20260728, mcp.Version20260728},
	{mcp.Version20251125, mcp.Version20251125},
	{mcp.Version20250618, mcp.Version20250618},
	{mcp.Version20250326, mcp.Version20250326},
	{mcp.Version20241105, mcp.Version20241105},
}

// TestGoPeers runs the same conversation with each Go peer on each
// protocol era: handshake, list, call, structured output, progress, and the
// server asking the client for sampling and roots (a server-to-client
// request on legacy eras, an input_required round trip on 2026-07-28).
func TestGoPeers(t *testing.T) {
	for _, peer := range goPeers {
		t.Run(peer.bin, func(t *testing.T) {
			t.Parallel()
			for _, era := range eras {
				name := era.pin
				if name == "" {
					name = "negotiated"
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					testGoPeer(t, peer, era.pin, era.want)
				})
			}
		})
	}
}

func testGoPeer(t *testing.T, peer goPeer, pin, wantVersion string) {
	ctx := testContext(t)
	model := &fakeModel{}
	roots := &rootsClient{}
	s := connect(t, ctx, filepath.Join(peerBin, peer.bin), nil, &transport.Options{
		ProtocolVersion: pin,
		Handlers:        transport.Handlers{Sampling: model.sample, Roots: roots.list},
	})

	info := s.ServerInfo()
	if info.ProtocolVersion != wantVersion {
		t.Fatalf("negotiated %q, want %q", info.ProtocolVersion, wantVersion)
	}
	if info.Implementation.Name != peer.name {
		t.Errorf("server name %q, want %q", info.Implementation.Name, peer.name)
	}
	if info.Capabilities.Tools == nil {
		t.Error("server declared no tools capability")
	}

	t.Run("list", func(t *testing.T) {
		tools, err := s.ListTools(ctx)
		if err != nil {
			t.Fatalf("list tools: %v", err)
		}
		requireTools(t, tools, "add", "echo", "progress", "roots", "sample")
	})

	t.Run("echo", func(t *testing.T) {
		res := call(t, ctx, s, "echo", `{"message":"hello from tako"}`)
		if got, want := res.Text(), "Echo: hello from tako"; got != want {
			t.Errorf("echo: got %q, want %q", got, want)
		}
	})

	t.Run("add", func(t *testing.T) {
		res := call(t, ctx, s, "add", `{"a":1,"b":2.5}`)
		if got, want := res.Text(), "3.5"; got != want {
			t.Errorf("add: text %q, want %q", got, want)
		}
		var out struct {
			Sum *float64 `json:"sum"`
		}
		if err := json.Unmarshal(res.StructuredContent, &out); err != nil || out.Sum == nil || *out.Sum != 3.5 {
			t.Errorf("add: structuredContent %s (%v), want {\"sum\":3.5}", res.StructuredContent, err)
		}
	})

	t.Run("unknown tool", func(t *testing.T) {
		// Either shape is allowed: a JSON-RPC error or an isError result.
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "no-such-tool", Arguments: json.RawMessage(`{}`)})
		if err == nil && !res.IsError {
			t.Fatalf("call no-such-tool: got %q, want an error", res.Text())
		}
	})

	// A peer that races its progress notifications against the response
	// may deliver none of them before the call completes, so for it the
	// number that arrive is not checked, and the name says so; what does
	// arrive is checked all the same.
	progressName := "progress"
	if peer.progressAfterResponse {
		progressName = "progress-count-unchecked"
	}
	t.Run(progressName, func(t *testing.T) {
		const steps = 4
		rec := newProgressRecorder(2 * steps)
		res := call(t, rec.context(ctx), s, "progress", `{"steps":4}`)
		if got, want := res.Text(), "done: 4 steps"; got != want {
			t.Errorf("progress: result %q, want %q", got, want)
		}
		if peer.progressAfterResponse {
			// Only what arrived while the call was in flight can be
			// counted on; see goPeer.progressAfterResponse.
			got := rec.drain()
			if len(got) > steps {
				t.Errorf("got %d progress notifications, want at most %d", len(got), steps)
			}
			checkProgress(t, got, steps)
			for i, p := range got {
				if want := fmt.Sprintf("step %v of %d", p.Progress, steps); p.Message != want {
					t.Errorf("progress notification %d: message %q, want %q", i, p.Message, want)
				}
			}
			t.Logf("%d of %d progress notifications arrived before the response", len(got), steps)
			return
		}
		got := rec.wait(t, ctx, steps)
		checkProgress(t, got, steps)
		for i, p := range got {
			if want := fmt.Sprintf("step %d of %d", i+1, steps); p.Message != want {
				t.Errorf("progress notification %d: message %q, want %q", i, p.Message, want)
			}
		}
		if extra := rec.drain(); len(extra) != 0 {
			t.Errorf("got %d progress notifications more than the %d steps", len(extra), steps)
		}
	})

	t.Run("sampling", func(t *testing.T) {
		res := call(t, ctx, s, "sample", `{"prompt":"what is tako?"}`)
		if got, want := res.Text(), "sampled: "+fakeModelName+": "+fakeModelReply; got != want {
			t.Errorf("sample: result %q, want %q", got, want)
		}
		prompt, req := model.lastPrompt(t)
		if prompt != "what is tako?" {
			t.Errorf("sampling prompt %q, want %q", prompt, "what is tako?")
		}
		if req.MaxTokens != 100 {
			t.Errorf("sampling maxTokens %d, want 100", req.MaxTokens)
		}
	})

	t.Run("roots", func(t *testing.T) {
		before := roots.calls.Load()
		res := call(t, ctx, s, "roots", `{}`)
		if got := strings.TrimSpace(res.Text()); got != testRoots[0].URI {
			t.Errorf("roots: result %q, want %q", got, testRoots[0].URI)
		}
		if roots.calls.Load() == before {
			t.Error("the roots handler was not called")
		}
	})
}
