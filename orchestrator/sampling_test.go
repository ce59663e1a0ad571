package orchestrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/orchestrator"
	"github.com/tako-mcp/tako/transport"
)

// researchServer has a tool that runs a sampling exchange with tools: it
// offers the client's model a "lookup" tool, runs the lookups the model
// asks for itself, and sends the results back, until the model answers
// with text.
func researchServer(t *testing.T) *mcptest.Server {
	srv := mcptest.New(mcptest.Options{ServerInfo: mcp.Implementation{Name: "research", Version: "1"}})
	srv.AddTool(mcp.Tool{Name: "research"}, func(ctx context.Context, req *mcptest.CallRequest) (*mcp.CallToolResult, error) {
		lookup := mcp.Tool{Name: "lookup", Description: "looks a word up", InputSchema: json.RawMessage(`{"type":"object","properties":{"word":{"type":"string"}}}`)}
		msgs := []mcp.SamplingMessage{{Role: "user", Content: json.RawMessage(`{"type":"text","text":"what is tako?"}`)}}
		for round := 1; round <= 5; round++ {
			res, err := req.Sample(ctx, &mcp.CreateMessageParams{Messages: msgs, MaxTokens: 50, Tools: []mcp.Tool{lookup}})
			if err != nil {
				return nil, err
			}
			blocks, err := (&mcp.SamplingMessage{Content: res.Content}).Blocks()
			if err != nil {
				return nil, err
			}
			if res.StopReason != mcp.StopToolUse {
				return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(fmt.Sprintf("after %d rounds: %s", round, blocks[0].Text))}}, nil
			}
			var results []mcp.Content
			for _, b := range blocks {
				if b.Type != mcp.ContentToolUse {
					continue
				}
				var in struct{ Word string }
				json.Unmarshal(b.ToolUse.Input, &in)
				results = append(results, mcp.ToolResultContent(b.ToolUse.ID, []mcp.Content{mcp.TextContent(in.Word + " means octopus")}, false))
			}
			answer, _ := json.Marshal(results)
			msgs = append(msgs, mcp.SamplingMessage{Role: "assistant", Content: res.Content}, mcp.SamplingMessage{Role: "user", Content: answer})
		}
		return nil, errors.New("too many rounds")
	})
	return srv
}

// samplingModel plays both the agent's model (which calls research) and
// the sampled model (which calls lookup once, then answers).
func samplingModel(t *testing.T) orchestrator.Provider {
	return orchestrator.ProviderFunc(func(ctx context.Context, req *orchestrator.Request, _ func(orchestrator.Delta)) (*orchestrator.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if len(req.Tools) == 1 && req.Tools[0].Name == "lookup" {
			if len(last.ToolResults) == 0 {
				return &orchestrator.Response{Model: "m", Text: "let me look", StopReason: orchestrator.StopToolUse,
					ToolCalls: []orchestrator.ToolCall{{ID: "l1", Name: "lookup", Arguments: json.RawMessage(`{"word":"tako"}`)}}}, nil
			}
			prev := req.Messages[len(req.Messages)-2]
			if prev.Role != orchestrator.RoleAssistant || len(prev.ToolCalls) != 1 || prev.ToolCalls[0].ID != "l1" || last.ToolResults[0].ID != "l1" || last.ToolResults[0].Name != "lookup" {
				return nil, fmt.Errorf("sampled history: %+v", req.Messages)
			}
			return &orchestrator.Response{Model: "m", Text: "tako: " + last.ToolResults[0].Text(), StopReason: orchestrator.StopEndTurn}, nil
		}
		if len(last.ToolResults) > 0 {
			return &orchestrator.Response{Text: last.ToolResults[0].Text(), StopReason: orchestrator.StopEndTurn}, nil
		}
		return &orchestrator.Response{ToolCalls: []orchestrator.ToolCall{{ID: "r", Name: "research"}}, StopReason: orchestrator.StopToolUse}, nil
	})
}

func TestSamplingWithToolsIsMultiTurn(t *testing.T) {
	for _, version := range []string{mcp.Version20251125, ""} {
		t.Run("version="+version, func(t *testing.T) {
			var log eventLog
			agent, err := orchestrator.New(testContext(t), orchestrator.Config{
				Provider: samplingModel(t), Sampling: true,
				MCPServers: []orchestrator.MCPServer{pipeServer(t, "research", researchServer(t))},
				Session:    transport.Options{ProtocolVersion: version},
				OnEvent:    log.add,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer agent.Close()
			res, err := agent.Run(testContext(t), "research tako")
			if err != nil {
				t.Fatal(err)
			}
			if want := "after 2 rounds: tako: tako means octopus"; res.Text != want {
				t.Errorf("final text %q, want %q", res.Text, want)
			}
			var sampled []string
			for _, e := range log.all() {
				if e.Kind == orchestrator.EventSampling {
					if e.Server != "research" || e.Sampling == nil || len(e.Sampling.Tools) != 1 {
						t.Errorf("sampling event: %+v", e)
					}
					sampled = append(sampled, string(e.Response.StopReason))
				}
			}
			if strings.Join(sampled, ",") != "tool_use,end_turn" {
				t.Errorf("sampling events' stop reasons %v, want a tool_use turn then an end_turn", sampled)
			}
		})
	}
}

// TestSamplingMalformedHistory: a tool_result that answers no tool_use is
// refused with invalid params, before the model is asked.
func TestSamplingMalformedHistory(t *testing.T) {
	cases := map[string][]mcp.SamplingMessage{
		"result without use": {
			{Role: "user", Content: json.RawMessage(`{"type":"text","text":"hi"}`)},
			{Role: "user", Content: json.RawMessage(`[{"type":"tool_result","toolUseId":"x","content":[]}]`)},
		},
		"use without result": {
			{Role: "user", Content: json.RawMessage(`{"type":"text","text":"hi"}`)},
			{Role: "assistant", Content: json.RawMessage(`[{"type":"tool_use","id":"x","name":"lookup","input":{}}]`)},
			{Role: "user", Content: json.RawMessage(`{"type":"text","text":"and?"}`)},
		},
		"results mixed with text": {
			{Role: "assistant", Content: json.RawMessage(`[{"type":"tool_use","id":"x","name":"lookup","input":{}}]`)},
			{Role: "user", Content: json.RawMessage(`[{"type":"tool_result","toolUseId":"x","content":[]},{"type":"text","text":"more"}]`)},
		},
	}
	for name, msgs := range cases {
		t.Run(name, func(t *testing.T) {
			srv := mcptest.New(mcptest.Options{})
			srv.AddTool(mcp.Tool{Name: "bad"}, func(ctx context.Context, req *mcptest.CallRequest) (*mcp.CallToolResult, error) {
				_, err := req.Sample(ctx, &mcp.CreateMessageParams{Messages: msgs, MaxTokens: 5, Tools: []mcp.Tool{{Name: "lookup"}}})
				var rpc *mcp.Error
				if !errors.As(err, &rpc) || rpc.Code != mcp.CodeInvalidParams {
					return nil, fmt.Errorf("sampling answered %v, want invalid params", err)
				}
				return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("refused")}}, nil
			})
			asked := false
			model := orchestrator.ProviderFunc(func(ctx context.Context, req *orchestrator.Request, _ func(orchestrator.Delta)) (*orchestrator.Response, error) {
				if len(req.Tools) == 1 && req.Tools[0].Name == "lookup" {
					asked = true
					return &orchestrator.Response{Text: "should not be asked"}, nil
				}
				if last := req.Messages[len(req.Messages)-1]; len(last.ToolResults) > 0 {
					return &orchestrator.Response{Text: last.ToolResults[0].Text()}, nil
				}
				return &orchestrator.Response{ToolCalls: []orchestrator.ToolCall{{ID: "b", Name: "bad"}}}, nil
			})
			agent, err := orchestrator.New(testContext(t), orchestrator.Config{
				Provider: model, Sampling: true,
				MCPServers: []orchestrator.MCPServer{pipeServer(t, "s", srv)},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer agent.Close()
			res, err := agent.Run(testContext(t), "go")
			if err != nil {
				t.Fatal(err)
			}
			// In the legacy era the server sees the error; in 2026-07-28 an
			// input request cannot be answered with an error, so the client
			// fails the call with it.
			if (res.Text != "refused" && !strings.Contains(res.Text, "code -32602")) || asked {
				t.Errorf("final text %q, model asked %v", res.Text, asked)
			}
		})
	}
}
