package interop

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// Resources, prompts, completion, logging and roots against the reference
// server, over stdio and over Streamable HTTP: the Session's typed
// operations against a server tako does not control.

// everythingWires runs fn once over stdio and once over Streamable HTTP,
// each with a session of its own made with opts.
func everythingWires(t *testing.T, opts func() *transport.Options, fn func(t *testing.T, ctx context.Context, s *transport.Session)) {
	t.Run("stdio", func(t *testing.T) {
		command, args := everything(t)
		ctx := testContext(t)
		fn(t, ctx, connect(t, ctx, command, args, opts()))
	})
	t.Run("streamableHttp", func(t *testing.T) {
		url := everythingHTTP(t, "streamableHttp")
		ctx := testContext(t)
		fn(t, ctx, connectHTTP(t, ctx, url, opts()))
	})
}

func noOptions() *transport.Options { return nil }

func TestEverythingResources(t *testing.T) {
	everythingWires(t, noOptions, func(t *testing.T, ctx context.Context, s *transport.Session) {
		if c := s.ServerInfo().Capabilities.Resources; c == nil || !c.Subscribe {
			t.Fatalf("resources capability %+v, want subscribe", c)
		}
		var uris []string
		for r, err := range s.Resources(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			uris = append(uris, r.URI)
		}
		list, err := s.ListResources(ctx)
		if err != nil || len(list) != len(uris) || len(uris) == 0 {
			t.Fatalf("ListResources: %d resources, %v; the iterator gave %d", len(list), err, len(uris))
		}
		var templates []string
		for tpl, err := range s.ResourceTemplates(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			templates = append(templates, tpl.URITemplate)
		}
		if !slices.Contains(templates, "demo://resource/dynamic/text/{resourceId}") || !slices.Contains(templates, "demo://resource/dynamic/blob/{resourceId}") {
			t.Fatalf("templates = %v", templates)
		}

		text, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://resource/dynamic/text/7"})
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := text.Contents[0].AsText(); !ok || !strings.HasPrefix(got, "Resource 7: This is a plaintext resource") {
			t.Fatalf("text resource: %q %v", got, ok)
		}
		blob, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://resource/dynamic/blob/8"})
		if err != nil {
			t.Fatal(err)
		}
		data, err := blob.Contents[0].Bytes()
		if err != nil || !blob.Contents[0].IsBlob() || !strings.HasPrefix(string(data), "Resource 8: This is a base64 blob") {
			t.Fatalf("blob resource: %q %v", data, err)
		}

		// Subscribe, then have the server send its simulated updates (one
		// at once, then every 5 s) until the test ends.
		const uri = "demo://resource/dynamic/text/1"
		updates := make(chan string, 8)
		if err := s.SubscribeResource(ctx, &mcp.SubscribeParams{URI: uri}, func(p *mcp.ResourceUpdatedParams) {
			select {
			case updates <- p.URI:
			default:
			}
		}); err != nil {
			t.Fatal(err)
		}
		call(t, ctx, s, "toggle-subscriber-updates", `{}`)
		select {
		case got := <-updates:
			if got != uri {
				t.Fatalf("update for %q", got)
			}
		case <-ctx.Done():
			t.Fatal("no notifications/resources/updated")
		}
		if err := s.UnsubscribeResource(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
		call(t, ctx, s, "toggle-subscriber-updates", `{}`) // stop the timer
	})
}

func TestEverythingPromptsAndCompletion(t *testing.T) {
	everythingWires(t, noOptions, func(t *testing.T, ctx context.Context, s *transport.Session) {
		var names []string
		for p, err := range s.Prompts(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, p.Name)
		}
		for _, want := range []string{"simple-prompt", "args-prompt", "completable-prompt"} {
			if !slices.Contains(names, want) {
				t.Errorf("prompts/list lacks %q: %v", want, names)
			}
		}
		res, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: "args-prompt", Arguments: map[string]string{"city": "Kyoto", "state": "Kansai"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Messages) != 1 || res.Messages[0].Content.Text != "What's weather in Kyoto, Kansai?" {
			t.Fatalf("args-prompt: %+v", res.Messages)
		}

		ref := mcp.CompleteRef{Type: "ref/prompt", Name: "completable-prompt"}
		c, err := s.Complete(ctx, &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteArgument{Name: "department", Value: "Eng"}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(c.Completion.Values, []string{"Engineering"}) {
			t.Fatalf("department completions = %v", c.Completion.Values)
		}
		c, err = s.Complete(ctx, &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteArgument{Name: "name", Value: ""},
			Context: &mcp.CompleteContext{Arguments: map[string]string{"department": "Sales"}}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(c.Completion.Values, []string{"David", "Eve", "Frank"}) {
			t.Fatalf("name completions with context = %v", c.Completion.Values)
		}
	})
}

// logText returns the data of a log message as text.
func logText(p *mcp.LoggingMessageParams) string {
	var s string
	if json.Unmarshal(p.Data, &s) != nil {
		return string(p.Data)
	}
	return s
}

func TestEverythingLogLevelAtRunTime(t *testing.T) {
	everythingWires(t, noOptions, func(t *testing.T, ctx context.Context, s *transport.Session) {
		logs := make(chan *mcp.LoggingMessageParams, 64)
		defer s.OnLog(func(p *mcp.LoggingMessageParams) {
			select {
			case logs <- p:
			default:
			}
		})()
		if err := s.SetLogLevel(ctx, mcp.LevelDebug); err != nil {
			t.Fatal(err)
		}
		call(t, ctx, s, "toggle-simulated-logging", `{}`)
		defer call(t, ctx, s, "toggle-simulated-logging", `{}`) // stop the timer
		select {
		case p := <-logs:
			if !p.Level.IsValid() || len(p.Data) == 0 {
				t.Fatalf("log message %+v", p)
			}
		case <-ctx.Done():
			t.Fatal("no log message")
		}
	})
}

func TestEverythingRootsChange(t *testing.T) {
	opts := func() *transport.Options {
		return &transport.Options{Roots: []mcp.Root{{URI: "file:///tmp/tako-a", Name: "a"}}}
	}
	everythingWires(t, opts, func(t *testing.T, ctx context.Context, s *transport.Session) {
		// The server lists the roots after initialization and again on
		// each roots/list_changed, and logs how many it received.
		counts := make(chan string, 16)
		defer s.OnLog(func(p *mcp.LoggingMessageParams) {
			if text := logText(p); strings.HasPrefix(text, "Roots updated:") {
				counts <- text
			}
		})()
		waitFor := func(want string) {
			t.Helper()
			for {
				select {
				case got := <-counts:
					if strings.HasPrefix(got, want) {
						return
					}
				case <-ctx.Done():
					t.Fatalf("the server never logged %q", want)
				}
			}
		}
		// get-roots-list waits for the server's first roots/list, after
		// which it listens for changes.
		if res := call(t, ctx, s, "get-roots-list", `{}`); !strings.Contains(res.Text(), "file:///tmp/tako-a") {
			t.Fatalf("get-roots-list %q lacks the initial root", res.Text())
		}
		if err := s.AddRoots(ctx, mcp.Root{URI: "file:///tmp/tako-b", Name: "b"}); err != nil {
			t.Fatal(err)
		}
		waitFor("Roots updated: 2 root(s)")
		res := call(t, ctx, s, "get-roots-list", `{}`)
		for _, want := range []string{"file:///tmp/tako-a", "file:///tmp/tako-b"} {
			if !strings.Contains(res.Text(), want) {
				t.Errorf("get-roots-list %q lacks %q", res.Text(), want)
			}
		}
	})
}

// TestEverythingStructuredOutput: the reference server's structured tool
// conforms to its output schema, which the Session checks once it has
// listed the tool.
func TestEverythingStructuredOutput(t *testing.T) {
	everythingWires(t, noOptions, func(t *testing.T, ctx context.Context, s *transport.Session) {
		if _, err := s.ListTools(ctx); err != nil {
			t.Fatal(err)
		}
		res := call(t, ctx, s, "get-structured-content", `{"location":"New York"}`)
		if len(res.StructuredContent) == 0 {
			t.Fatal("no structuredContent")
		}
	})
}
