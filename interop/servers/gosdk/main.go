// Command gosdk is an MCP server built with the official Go SDK
// (github.com/modelcontextprotocol/go-sdk), used as a peer by tako's interop
// tests. It serves stdio by default, or Streamable HTTP on a loopback address
// with -http (-stateless: without sessions; -sse: the 2024-11-05 HTTP+SSE
// transport instead).
//
// Tools:
//
//	echo {message}        returns "Echo: <message>"
//	add {a, b}            returns the sum as text and as structuredContent {"sum": n}
//	progress {steps}      sends one notifications/progress per step, then returns "done: <steps> steps"
//	sample {prompt}       asks the client's model (sampling) and returns "sampled: <model>: <text>"
//	roots {}              asks the client for its roots and returns their URIs, one a line
//	form {}               elicits a form (name, and color and count with defaults, all
//	                      required) and returns the answer's content as JSON
//	login {}              fails with -32042 (a URL elicitation) until visit has been
//	                      called with its elicitationId, then returns "logged in"
//	visit {elicitationId} stands for the user's browser reaching the login page: it
//	                      sends notifications/elicitation/complete for that id
//	touch {uri}           sends notifications/resources/updated for uri to its subscribers
//	research {topic}      asks the client's model about the topic, offering it a "lookup" tool
//	                      (sampling with tools), runs the lookups it asks for and asks again,
//	                      until it answers with text: "researched in <n> rounds: <text>"
//
// Resources: mem://a and mem://b, text, subscribable (legacy
// resources/subscribe, or subscriptions/listen on 2026-07-28).
//
// With -extra-tools also meta and grow (extra.go); -ttl sets the ttlMs of
// list and read results.
//
// sample, roots, form and research are written in the multi round-trip
// style of 2026-07-28 (the handler returns input requests, the client
// retries with the answers). The SDK bridges that style to server-to-client
// requests for clients on earlier revisions, so one handler exercises both
// of tako's paths.
package main

//lint:file-ignore SA1019 sampling and roots are deprecated from 2026-07-28 on, but the earlier revisions tako speaks still have them, so this peer must offer them.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	httpAddr := flag.String("http", "", "serve Streamable HTTP on this address (e.g. 127.0.0.1:0) instead of stdio; the URL is printed on stdout")
	stateless := flag.Bool("stateless", false, "with -http: serve without sessions")
	sse := flag.Bool("sse", false, "with -http: serve the 2024-11-05 HTTP+SSE transport at /sse instead of Streamable HTTP at /mcp")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("gosdk: ")

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *httpAddr == "" {
		// Run returns when the client closes stdin, which is how an MCP
		// client ends a stdio session.
		if err := newServer().Run(ctx, &mcp.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
			log.Fatal(err)
		}
		return
	}
	if err := serveHTTP(ctx, *httpAddr, *stateless, *sse); err != nil {
		log.Fatal(err)
	}
}

// serveHTTP serves Streamable HTTP at /mcp (or, with sse, the 2024-11-05
// HTTP+SSE transport at /sse) until ctx is done. Only loopback addresses
// are accepted: this is a test peer, not a deployable server.
func serveHTTP(ctx context.Context, addr string, stateless, sse bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("-http %s: only loopback addresses are served", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := newServer()
	mux := http.NewServeMux()
	path := "/mcp"
	if sse {
		path = "/sse"
		mux.Handle(path, mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	} else {
		mux.Handle(path, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
			&mcp.StreamableHTTPOptions{Stateless: stateless}))
	}
	hs := &http.Server{Handler: mux}
	fmt.Printf("http://%s%s\n", ln.Addr(), path)
	go func() {
		<-ctx.Done()
		hs.Close()
	}()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

type echoIn struct {
	Message string `json:"message" jsonschema:"the message to echo"`
}

type addIn struct {
	A float64 `json:"a" jsonschema:"first addend"`
	B float64 `json:"b" jsonschema:"second addend"`
}

type addOut struct {
	Sum float64 `json:"sum"`
}

type progressIn struct {
	Steps int `json:"steps,omitempty" jsonschema:"number of progress notifications to send (default 3)"`
}

type sampleIn struct {
	Prompt string `json:"prompt" jsonschema:"the prompt to send to the client's model"`
}

func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "interop-gosdk", Version: "1.0.0"}, serverOptions())
	addExtraTools(s)

	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes back the message"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return text("Echo: " + in.Message), nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two numbers"},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
			sum := in.A + in.B
			return text(fmt.Sprint(sum)), addOut{Sum: sum}, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: "progress", Description: "Sends one progress notification per step"},
		func(ctx context.Context, req *mcp.CallToolRequest, in progressIn) (*mcp.CallToolResult, any, error) {
			steps := in.Steps
			if steps <= 0 {
				steps = 3
			}
			if steps > 1000 {
				return nil, nil, fmt.Errorf("steps must be at most 1000, got %d", steps)
			}
			// Progress is opt-in: without a token the client asked for none.
			if token := req.Params.GetProgressToken(); token != nil {
				total := float64(steps)
				for i := 1; i <= steps; i++ {
					err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
						ProgressToken: token,
						Progress:      float64(i),
						Total:         total,
						Message:       fmt.Sprintf("step %d of %d", i, steps),
					})
					if err != nil {
						return nil, nil, err
					}
				}
			}
			return text(fmt.Sprintf("done: %d steps", steps)), nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: "sample", Description: "Asks the client's model to answer the prompt"},
		func(_ context.Context, req *mcp.CallToolRequest, in sampleIn) (*mcp.CallToolResult, any, error) {
			resp, ok := req.Params.InputResponses["answer"]
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
					"answer": &mcp.CreateMessageParams{
						Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Prompt}}},
						MaxTokens: 100,
					},
				}}, nil, nil
			}
			res, ok := resp.(*mcp.CreateMessageWithToolsResult)
			if !ok {
				return nil, nil, fmt.Errorf("input response %q: got %T, want a sampling result", "answer", resp)
			}
			var parts []string
			for _, c := range res.Content {
				if t, ok := c.(*mcp.TextContent); ok {
					parts = append(parts, t.Text)
				}
			}
			return text(fmt.Sprintf("sampled: %s: %s", res.Model, strings.Join(parts, "\n"))), nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: "roots", Description: "Lists the client's roots"},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			resp, ok := req.Params.InputResponses["roots"]
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
					"roots": &mcp.ListRootsParams{},
				}}, nil, nil
			}
			res, ok := resp.(*mcp.ListRootsResult)
			if !ok {
				return nil, nil, fmt.Errorf("input response %q: got %T, want a roots result", "roots", resp)
			}
			uris := make([]string, 0, len(res.Roots))
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			return text(strings.Join(uris, "\n")), nil, nil
		})

	addElicitationTools(s)
	addResources(s)
	mcp.AddTool(s, &mcp.Tool{Name: "research", Description: "Researches a topic with the client's model, which may look words up (sampling with tools)"}, research)
	return s
}

type researchIn struct {
	Topic string `json:"topic" jsonschema:"what to research"`
}

// maxResearchRounds bounds the sampling turns of one research call.
const maxResearchRounds = 5

var lookupTool = &mcp.Tool{
	Name:        "lookup",
	Description: "Looks a word up in the server's glossary",
	InputSchema: map[string]any{"type": "object", "properties": map[string]any{"word": map[string]any{"type": "string"}}, "required": []string{"word"}},
}

// glossary is what lookup knows.
var glossary = map[string]string{"tako": "tako is Japanese for octopus"}

// research runs a sampling exchange with tools. Each round is one
// createMessage carrying the conversation so far; a tool_use answer is
// followed by a user message of tool_result blocks, one per tool_use, as
// the specification requires. With a 2026-07-28 client the conversation
// travels in requestState from round to round; with an earlier one the
// rounds are server-to-client requests made here, since the SDK's bridge
// re-invokes a handler only once.
func research(ctx context.Context, req *mcp.CallToolRequest, in researchIn) (*mcp.CallToolResult, any, error) {
	first := []*mcp.SamplingMessageV2{{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: "Research: " + in.Topic}}}}
	ask := func(msgs []*mcp.SamplingMessageV2) *mcp.CreateMessageWithToolsParams {
		return &mcp.CreateMessageWithToolsParams{Messages: msgs, MaxTokens: 200, Tools: []*mcp.Tool{lookupTool}}
	}
	if ip := req.Session.InitializeParams(); ip != nil && ip.ProtocolVersion < "2026-07-28" {
		msgs := first
		for range maxResearchRounds {
			res, err := req.Session.CreateMessageWithTools(ctx, ask(msgs))
			if err != nil {
				return nil, nil, err
			}
			var done *mcp.CallToolResult
			if msgs, done = researchStep(msgs, res); done != nil {
				return done, nil, nil
			}
		}
		return nil, nil, fmt.Errorf("research: no answer after %d rounds", maxResearchRounds)
	}
	msgs := first
	if req.Params.RequestState != "" {
		if err := json.Unmarshal([]byte(req.Params.RequestState), &msgs); err != nil {
			return nil, nil, fmt.Errorf("research: bad requestState: %v", err)
		}
	}
	if resp, ok := req.Params.InputResponses["turn"]; ok {
		res, ok := resp.(*mcp.CreateMessageWithToolsResult)
		if !ok {
			return nil, nil, fmt.Errorf("input response %q: got %T, want a sampling result", "turn", resp)
		}
		var done *mcp.CallToolResult
		if msgs, done = researchStep(msgs, res); done != nil {
			return done, nil, nil
		}
		if len(msgs) > 2*maxResearchRounds {
			return nil, nil, fmt.Errorf("research: no answer after %d rounds", maxResearchRounds)
		}
	}
	state, err := json.Marshal(msgs)
	if err != nil {
		return nil, nil, err
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"turn": ask(msgs)}, RequestState: string(state)}, nil, nil
}

// researchStep adds the model's answer to the conversation. A text answer
// ends the research with a result; a tool_use answer gets its lookups.
func researchStep(msgs []*mcp.SamplingMessageV2, res *mcp.CreateMessageWithToolsResult) ([]*mcp.SamplingMessageV2, *mcp.CallToolResult) {
	msgs = append(msgs, &mcp.SamplingMessageV2{Role: "assistant", Content: res.Content})
	rounds := (len(msgs) + 1) / 2
	if res.StopReason != "toolUse" {
		var parts []string
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				parts = append(parts, t.Text)
			}
		}
		return msgs, text(fmt.Sprintf("researched in %d rounds: %s", rounds, strings.Join(parts, "\n")))
	}
	var results []mcp.Content
	for _, c := range res.Content {
		use, ok := c.(*mcp.ToolUseContent)
		if !ok {
			continue
		}
		word, _ := use.Input["word"].(string)
		answer, known := glossary[word]
		if use.Name != "lookup" || !known {
			results = append(results, &mcp.ToolResultContent{ToolUseID: use.ID, IsError: true,
				Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("no entry for %q in tool %q", word, use.Name)}}})
			continue
		}
		results = append(results, &mcp.ToolResultContent{ToolUseID: use.ID, Content: []mcp.Content{&mcp.TextContent{Text: answer}}})
	}
	return append(msgs, &mcp.SamplingMessageV2{Role: "user", Content: results}), nil
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
