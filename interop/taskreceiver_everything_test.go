package interop

import (
	"context"
	"strings"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// The client as a task receiver (2025-11-25) against the reference
// server, over stdio and Streamable HTTP. Its trigger-*-async tools exist
// only for a client that declares tasks.requests for sampling or
// elicitation: each sends its request with params.task, polls the client
// with tasks/get until the task ends (once a second), then fetches the
// answer with tasks/result and returns it in its own result.
func TestEverythingTaskReceiver(t *testing.T) {
	model := &fakeModel{}
	elicit := func(_ context.Context, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Tako", "favoriteColor": "Blue", "agreeToTerms": true}}, nil
	}
	opts := func() *transport.Options {
		return &transport.Options{TaskReceiver: true, Handlers: transport.Handlers{Sampling: model.sample, Elicitation: elicit}}
	}
	everythingWires(t, opts, func(t *testing.T, ctx context.Context, s *transport.Session) {
		tools, err := s.ListTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		requireTools(t, tools, "trigger-sampling-request-async", "trigger-elicitation-request-async")

		res := call(t, ctx, s, "trigger-sampling-request-async", `{"prompt":"what is tako?","maxTokens":42}`)
		for _, want := range []string{"[COMPLETED]", "Task created: client-task-", fakeModelReply, mcp.MetaRelatedTask} {
			if !strings.Contains(res.Text(), want) {
				t.Errorf("sampling result %q lacks %q", res.Text(), want)
			}
		}
		if prompt, _ := model.lastPrompt(t); !strings.Contains(prompt, "what is tako?") {
			t.Errorf("sampling prompt %q", prompt)
		}

		res = call(t, ctx, s, "trigger-elicitation-request-async", `{}`)
		for _, want := range []string{"[COMPLETED]", "Tako", "Blue"} {
			if !strings.Contains(res.Text(), want) {
				t.Errorf("elicitation result %q lacks %q", res.Text(), want)
			}
		}
	})
}
