package transport_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
)

func TestCapabilitiesMerged(t *testing.T) {
	declared := &mcp.ClientCapabilities{
		Experimental: map[string]json.RawMessage{"x-trace": json.RawMessage(`{}`)},
		Extensions:   map[string]json.RawMessage{"io.example/skills": json.RawMessage(`{"v":1}`)},
		Sampling:     &mcp.SamplingCapability{Context: &struct{}{}},
	}
	opts := func(v string) *transport.Options {
		return &transport.Options{
			ProtocolVersion: v,
			Capabilities:    declared,
			Roots:           []mcp.Root{},
			Handlers: transport.Handlers{
				Sampling: func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
					return nil, errors.New("unused")
				},
				SamplingTools: true,
			},
		}
	}
	check := func(t *testing.T, c mcp.ClientCapabilities, modern bool) {
		t.Helper()
		if string(c.Experimental["x-trace"]) != `{}` || string(c.Extensions["io.example/skills"]) != `{"v":1}` {
			t.Errorf("experimental %s, extensions %s", c.Experimental, c.Extensions)
		}
		if c.Sampling == nil || c.Sampling.Context == nil || c.Sampling.Tools == nil {
			t.Errorf("sampling %+v: want context (declared) and tools (handler)", c.Sampling)
		}
		if c.Roots == nil || c.Roots.ListChanged == modern {
			t.Errorf("roots %+v (modern %v)", c.Roots, modern)
		}
	}
	for _, v := range []string{mcp.Version20251125, mcp.Version20260728} {
		t.Run(v, func(t *testing.T) {
			srv := mcptest.New(mcptest.Options{})
			conn, wait := srv.Pipe(context.Background())
			defer wait()
			s := connect(t, conn, opts(v))
			defer s.Close()
			var rec mcptest.Record
			for _, r := range srv.Received() {
				if r.Msg.Method == mcp.MethodInitialize || r.Msg.Method == mcp.MethodDiscover {
					rec = r
				}
			}
			var c mcp.ClientCapabilities
			if v == mcp.Version20260728 {
				if err := json.Unmarshal(rec.Meta()[mcp.MetaClientCapabilities], &c); err != nil {
					t.Fatal(err)
				}
			} else {
				var p mcp.InitializeParams
				if err := rec.Params(&p); err != nil {
					t.Fatal(err)
				}
				c = p.Capabilities
			}
			check(t, c, v == mcp.Version20260728)
		})
	}
	if declared.Sampling.Tools != nil || declared.Roots != nil {
		t.Fatal("the caller's Capabilities were written to")
	}
}

// An unknown resultType is an invalid response on every method, list
// methods included, not only on the ones with input_required rounds.
func TestUnknownResultTypeOnListMethods(t *testing.T) {
	_, conn := startFake(t, modern(t, func(m *mcp.Message) *mcp.Message {
		return result(m.ID, map[string]any{"resultType": "weird", "tools": []any{}, "completion": map[string]any{"values": []any{}}})
	}))
	s := connect(t, conn, nil)
	if _, err := s.ListTools(context.Background()); !errors.Is(err, transport.ErrProtocol) {
		t.Fatalf("ListTools: %v", err)
	}
	for _, err := range s.Tools(context.Background()) {
		if !errors.Is(err, transport.ErrProtocol) {
			t.Fatalf("Tools: %v", err)
		}
	}
	var raw json.RawMessage
	if err := s.Call(context.Background(), mcp.MethodToolsList, nil, &raw); !errors.Is(err, transport.ErrProtocol) {
		t.Fatalf("Call tools/list: %v", err)
	}
	// Every other method too, the multi-round-trip ones and the rest, from
	// a server that declares them all.
	_, conn = startFake(t, func(_ *fakeServer, m *mcp.Message) *mcp.Message {
		if m.IsNotification() {
			return nil
		}
		if m.Method == mcp.MethodDiscover {
			return result(m.ID, map[string]any{"resultType": "complete", "supportedVersions": []string{mcp.LatestVersion},
				"capabilities": map[string]any{"tools": map[string]any{}, "prompts": map[string]any{},
					"resources": map[string]any{}, "completions": map[string]any{}}})
		}
		return result(m.ID, map[string]any{"resultType": "weird"})
	})
	s = connect(t, conn, nil)
	ctx := context.Background()
	others := map[string]func() error{
		"ListPrompts":           func() error { _, err := s.ListPrompts(ctx); return err },
		"ListResources":         func() error { _, err := s.ListResources(ctx); return err },
		"ListResourceTemplates": func() error { _, err := s.ListResourceTemplates(ctx); return err },
		"CallTool":              func() error { _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "x"}); return err },
		"GetPrompt":             func() error { _, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: "x"}); return err },
		"ReadResource":          func() error { _, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///x"}); return err },
		"Complete": func() error {
			_, err := s.Complete(ctx, &mcp.CompleteParams{Ref: mcp.CompleteRef{Type: "ref/prompt", Name: "x"}, Argument: mcp.CompleteArgument{Name: "a"}})
			return err
		},
	}
	for name, call := range others {
		if err := call(); !errors.Is(err, transport.ErrProtocol) {
			t.Errorf("%s: %v, want ErrProtocol", name, err)
		}
	}
}

// A server that stops answering pings ends the session: Err and every call
// then report a lost connection.
func TestPingFailureEndsSession(t *testing.T) {
	srv := mcptest.New(mcptest.Options{})
	if err := srv.AddTool(mcp.Tool{Name: "noop"}, noop); err != nil {
		t.Fatal(err)
	}
	conn, wait := srv.Pipe(context.Background())
	defer wait()
	s := connect(t, conn, &transport.Options{
		ProtocolVersion: mcp.Version20251125,
		PingInterval:    10 * time.Millisecond,
		PingTimeout:     50 * time.Millisecond,
	})
	defer s.Close()
	// Answered pings keep it alive.
	if _, err := srv.Wait(context.Background(), func(r mcptest.Record) bool { return r.Msg.Method == mcp.MethodPing }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "noop"}); err != nil {
		t.Fatal(err)
	}
	srv.FaultMethod(mcp.MethodPing, mcptest.Fault{Drop: true})
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the session outlived unanswered pings")
	}
	if !errors.Is(s.Err(), transport.ErrConnectionLost) {
		t.Fatalf("Err = %v", s.Err())
	}
	if _, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "noop"}); !errors.Is(err, transport.ErrConnectionLost) {
		t.Fatalf("call after the ping failure: %v", err)
	}
}
