package interop

import (
	"errors"
	"strings"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// The TypeScript reference server (@modelcontextprotocol/server-everything
// 2026.8.31, on TypeScript SDK 1.32) speaks 2024-11-05 through 2025-11-25 and
// answers server/discover with -32601, so tako's probe must fall back to
// initialize. It registers trigger-sampling-request and get-roots-list only
// for clients that declare sampling and roots, once notifications/initialized
// has arrived.

const everythingName = "mcp-servers/everything"

func TestEverythingHandshake(t *testing.T) {
	command, args := everything(t)
	ctx := testContext(t)
	s := connect(t, ctx, command, args, nil)

	info := s.ServerInfo()
	if info.ProtocolVersion != mcp.Version20251125 {
		t.Errorf("negotiated protocol %q, want %q (the reference server has no server/discover, so tako falls back to initialize)", info.ProtocolVersion, mcp.Version20251125)
	}
	if info.Implementation.Name != everythingName {
		t.Errorf("server name %q, want %q", info.Implementation.Name, everythingName)
	}
	if info.Capabilities.Tools == nil {
		t.Error("server declared no tools capability")
	}
	if info.Instructions == "" {
		t.Error("the reference server sends instructions, but ServerInfo has none")
	}
	if err := s.Ping(ctx); err != nil {
		t.Errorf("ping: %v", err)
	}
}

// TestEverythingEras pins each legacy revision in turn: the server must
// agree to it, and tools must work on it.
func TestEverythingEras(t *testing.T) {
	command, args := everything(t)
	for _, v := range []string{mcp.Version20241105, mcp.Version20250326, mcp.Version20250618, mcp.Version20251125} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			ctx := testContext(t)
			s := connect(t, ctx, command, args, &transport.Options{ProtocolVersion: v})
			if got := s.ServerInfo().ProtocolVersion; got != v {
				t.Fatalf("negotiated %q, want %q", got, v)
			}
			tools, err := s.ListTools(ctx)
			if err != nil {
				t.Fatalf("list tools: %v", err)
			}
			requireTools(t, tools, "echo", "get-sum")
			res := call(t, ctx, s, "echo", `{"message":"era `+v+`"}`)
			if got, want := res.Text(), "Echo: era "+v; got != want {
				t.Errorf("echo: got %q, want %q", got, want)
			}
		})
	}
}

func TestEverythingListTools(t *testing.T) {
	command, args := everything(t)
	ctx := testContext(t)
	model := &fakeModel{}
	roots := &rootsClient{}
	s := connect(t, ctx, command, args, &transport.Options{
		Handlers: transport.Handlers{Sampling: model.sample, Roots: roots.list},
	})
	tools, err := s.ListTools(ctx)
	if err != nil {
		t.Fatalf("list tools: %v", err)
	}
	// The conditional tools are there because tako declared sampling and
	// roots, and sent notifications/initialized only after the initialize
	// response, as the spec asks.
	requireTools(t, tools,
		"echo", "get-sum", "get-structured-content", "trigger-long-running-operation",
		"trigger-sampling-request", "get-roots-list")
	for _, tool := range tools {
		if tool.Name == "echo" {
			if tool.Annotations == nil || tool.Annotations.ReadOnlyHint == nil || !*tool.Annotations.ReadOnlyHint {
				t.Errorf("echo: annotations %+v, want readOnlyHint true", tool.Annotations)
			}
			if !strings.Contains(string(tool.InputSchema), `"message"`) {
				t.Errorf("echo: input schema lacks the message property: %s", tool.InputSchema)
			}
		}
	}
}

func TestEverythingEcho(t *testing.T) {
	command, args := everything(t)
	ctx := testContext(t)
	s := connect(t, ctx, command, args, nil)
	res := call(t, ctx, s, "echo", `{"message":"hello from tako"}`)
	if got, want := res.Text(), "Echo: hello from tako"; got != want {
		t.Errorf("echo: got %q, want %q", got, want)
	}
}

// TestEverythingToolError checks that a call the tool rejects (a missing
// required argument) reaches the caller as a value or a typed error, and that
// the session goes on working afterwards.
func TestEverythingToolError(t *testing.T) {
	command, args := everything(t)
	ctx := testContext(t)
	s := connect(t, ctx, command, args, nil)
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: []byte(`{}`)})
	switch {
	case err != nil:
		var rpcErr *mcp.Error
		if !errors.As(err, &rpcErr) {
			t.Fatalf("call echo without its argument: %v (%T), want an *mcp.Error or an isError result", err, err)
		}
	case !res.IsError:
		t.Fatalf("call echo without its argument: got %q, want an error", res.Text())
	}
	res = call(t, ctx, s, "echo", `{"message":"still here"}`)
	if got, want := res.Text(), "Echo: still here"; got != want {
		t.Errorf("echo after an error: got %q, want %q", got, want)
	}
}

func TestEverythingProgress(t *testing.T) {
	command, args := everything(t)
	ctx := testContext(t)
	s := connect(t, ctx, command, args, nil)

	const steps = 3
	rec := newProgressRecorder(2 * steps)
	res := call(t, rec.context(ctx), s, "trigger-long-running-operation", `{"duration":0.1,"steps":3}`)
	if !strings.HasPrefix(res.Text(), "Long running operation completed.") {
		t.Errorf("result %q, want the completion message", res.Text())
	}
	got := rec.wait(t, ctx, steps)
	checkProgress(t, got, steps)
	if extra := rec.drain(); len(extra) != 0 {
		t.Errorf("got %d progress notifications more than the %d steps: %+v", len(extra), steps, extra)
	}
}

func TestEverythingSampling(t *testing.T) {
	command, args := everything(t)
	ctx := testContext(t)
	model := &fakeModel{}
	s := connect(t, ctx, command, args, &transport.Options{
		Handlers: transport.Handlers{Sampling: model.sample},
	})
	res := call(t, ctx, s, "trigger-sampling-request", `{"prompt":"what is tako?","maxTokens":42}`)

	prompt, req := model.lastPrompt(t)
	if !strings.Contains(prompt, "what is tako?") {
		t.Errorf("sampling prompt %q does not contain the tool's prompt", prompt)
	}
	if req.MaxTokens != 42 {
		t.Errorf("sampling maxTokens %d, want 42", req.MaxTokens)
	}
	if req.SystemPrompt == "" {
		t.Error("sampling request lost its systemPrompt")
	}
	// The tool returns the client's whole answer as JSON text.
	for _, want := range []string{fakeModelReply, fakeModelName} {
		if !strings.Contains(res.Text(), want) {
			t.Errorf("tool result %q does not contain %q", res.Text(), want)
		}
	}
}

func TestEverythingRoots(t *testing.T) {
	command, args := everything(t)
	ctx := testContext(t)
	roots := &rootsClient{}
	s := connect(t, ctx, command, args, &transport.Options{
		Handlers: transport.Handlers{Roots: roots.list},
	})
	res := call(t, ctx, s, "get-roots-list", `{}`)
	for _, want := range []string{testRoots[0].URI, testRoots[0].Name} {
		if !strings.Contains(res.Text(), want) {
			t.Errorf("get-roots-list result %q does not contain %q", res.Text(), want)
		}
	}
	if roots.calls.Load() == 0 {
		t.Error("the roots handler was never called")
	}
}
