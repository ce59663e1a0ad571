package main

// Answering a server's sampling/createMessage during tako call and tako
// shell. With --provider, the provider's model answers; without, the
// person at the terminal does. Either way a person who is there sees what
// the server asks, and sends, edits or declines the answer:
//
//	The server asks for a model's answer (sampling, at most 100 tokens):
//	  [user] What is the capital of France?
//	The model (m) answers: Paris.
//	Enter sends it; !edit types another; !decline refuses:
//
// From a script (no terminal) the provider's answer is sent as it is, with
// a line on stderr, as tako agent does; without a provider and without a
// person, tako declares no sampling and the server does not ask.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/orchestrator"
)

// sampler answers sampling requests. person, when set, is the terminal
// (shared with the elicitation forms: one question at a time); provider,
// when set, is the model. log receives the line of an answer sent without
// a person.
type sampler struct {
	person   *elicitPrompter
	provider orchestrator.Provider
	log      io.Writer
}

// declined is the error of a request the person refused: the spec's -1.
var declined = &mcp.Error{Code: mcp.CodeUserRejected, Message: "the user declined the sampling request"}

// defaultSampleTokens bounds an answer when the server gives no maxTokens.
const defaultSampleTokens = 1024

func (s *sampler) sample(ctx context.Context, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	msgs, err := samplingText(req.Messages)
	if err != nil {
		return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: "sampling request: " + err.Error()}
	}
	if s.person != nil {
		s.person.mu.Lock()
		defer s.person.mu.Unlock()
		s.show(req)
	}
	var answer, model, stop string
	if s.provider != nil {
		r := &orchestrator.Request{System: req.SystemPrompt, Messages: msgs, MaxTokens: req.MaxTokens,
			Temperature: req.Temperature, StopSequences: req.StopSequences}
		if r.MaxTokens <= 0 {
			r.MaxTokens = defaultSampleTokens
		}
		resp, err := s.provider.Complete(ctx, r, nil)
		if err != nil {
			if s.person != nil {
				fmt.Fprintf(s.person.out, "The model failed: %s\n", oneLine(err.Error()))
			}
			return nil, err
		}
		answer, model, stop = resp.Text, resp.Model, stopReason(resp.StopReason)
		if s.person == nil {
			fmt.Fprintf(s.log, "⇄ sampling: %d message(s) → %s\n", len(req.Messages), truncate(cleanLine(answer), 120))
			return sampled(answer, model, stop), nil
		}
		fmt.Fprintf(s.person.out, "The model (%s) answers: %s\n", oneLine(model), oneLine(answer))
	}
	if s.person == nil {
		return nil, declined // not reached: nothing is declared without either
	}
	typing := s.provider == nil // the person writes the answer
	for {
		prompt := "Enter sends it; !edit types another; !decline refuses: "
		if typing {
			prompt = "Type the answer (!decline refuses): "
		}
		line, err := s.person.readLine(ctx, prompt)
		if err != nil {
			if ctx.Err() != nil {
				return nil, context.Cause(ctx)
			}
			return nil, declined // Ctrl-C or the end of input
		}
		line = strings.TrimSpace(line)
		switch {
		case line == "!decline" || line == "!cancel":
			return nil, declined
		case !typing && line == "":
			return sampled(answer, model, stop), nil
		case !typing && line == "!edit":
			typing = true
		case !typing:
			fmt.Fprintln(s.person.out, "  Enter sends the answer above, !edit types another, !decline refuses.")
		case line != "":
			return sampled(line, "human", mcp.StopEndTurn), nil
		}
	}
}

// show prints what the server asks, every piece of its text made safe.
func (s *sampler) show(req *mcp.CreateMessageParams) {
	w := s.person.out
	limit := ""
	if req.MaxTokens > 0 {
		limit = fmt.Sprintf(", at most %d tokens", req.MaxTokens)
	}
	fmt.Fprintf(w, "The server asks for a model's answer (sampling%s):\n", limit)
	if sp := strings.TrimSpace(req.SystemPrompt); sp != "" {
		fmt.Fprintf(w, "  [system] %s\n", oneLine(sp))
	}
	for i := range req.Messages {
		blocks, _ := req.Messages[i].Blocks()
		for _, b := range blocks {
			text := b.Text
			if b.Type != mcp.ContentText {
				text = fmt.Sprintf("[%s %s]", cleanLine(b.Type), cleanLine(b.MIMEType))
			}
			fmt.Fprintf(w, "  [%s] %s\n", oneLine(req.Messages[i].Role), oneLine(text))
		}
	}
}

// samplingText converts a sampling conversation of text and images; tool
// use is not declared (Handlers.SamplingTools), so a request with it is
// the server's mistake.
func samplingText(in []mcp.SamplingMessage) ([]orchestrator.Message, error) {
	out := make([]orchestrator.Message, 0, len(in))
	for i := range in {
		blocks, err := in[i].Blocks()
		if err != nil {
			return nil, fmt.Errorf("message %d is unreadable: %v", i, err)
		}
		var role orchestrator.Role
		switch in[i].Role {
		case string(orchestrator.RoleUser):
			role = orchestrator.RoleUser
		case string(orchestrator.RoleAssistant):
			role = orchestrator.RoleAssistant
		default:
			return nil, fmt.Errorf("message %d has role %q, want user or assistant", i, in[i].Role)
		}
		for _, b := range blocks {
			if b.Type == mcp.ContentToolUse || b.Type == mcp.ContentToolResult {
				return nil, fmt.Errorf("message %d holds %s, and tako declared no sampling with tools", i, b.Type)
			}
		}
		out = append(out, orchestrator.Message{Role: role, Content: blocks})
	}
	return out, nil
}

func stopReason(r orchestrator.StopReason) string {
	switch r {
	case orchestrator.StopMaxTokens:
		return mcp.StopMaxTokens
	case orchestrator.StopStopSequence:
		return mcp.StopStopSequence
	}
	return mcp.StopEndTurn
}

// sampled is the createMessage result of one text answer.
func sampled(text, model, stop string) *mcp.CreateMessageResult {
	content, _ := json.Marshal(mcp.TextContent(text))
	return &mcp.CreateMessageResult{Role: string(orchestrator.RoleAssistant), Content: content, Model: model, StopReason: stop}
}
