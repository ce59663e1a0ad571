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
//
// Resources: mem://a and mem://b, text, subscribable (legacy
// resources/subscribe, or subscriptions/listen on 2026-07-28).
//
// With -extra-tools also meta and grow (extra.go); -ttl sets the ttlMs of
// list and read results.
//
// sample, roots and form are written in the multi round-trip style of
// 2026-07-28 (the handler returns input requests, the client retries with
// the answers). The SDK bridges that style to server-to-client requests for
// clients on earlier revisions, so one handler exercises both of tako's
// paths.
package main

//lint:file-ignore SA1019 sampling and roots are deprecated from 2026-07-28 on, but the earlier revisions tako speaks still have them, so this peer must offer them.

import (
	"context"
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
	return s
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
