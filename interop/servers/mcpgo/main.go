// Command mcpgo is an MCP server built with github.com/mark3labs/mcp-go, used
// as a peer by tako's interop tests. It serves stdio by default, or
// Streamable HTTP on a loopback address with -http.
//
// Tools (the same as the gosdk peer's, so that tests can share their checks):
//
//	echo {message}        returns "Echo: <message>"
//	add {a, b}            returns the sum as text and as structuredContent {"sum": n}
//	miscount {}           declares an outputSchema ({"count": integer}, required) and
//	                      returns structuredContent {"count": "three"}, which breaks it
//	progress {steps}      sends one notifications/progress per step, then returns "done: <steps> steps"
//	sample {prompt}       asks the client's model (sampling) and returns "sampled: <model>: <text>"
//	roots {}              asks the client for its roots and returns their URIs, one a line
//	slow {ms}             waits ms milliseconds (at most a minute), then returns "slept <ms> ms";
//	                      taskSupport optional, so it runs as a task when asked
//	fail_job {}           fails with a JSON-RPC error; taskSupport required
//
// The server declares tasks (list, cancel, requests.tools.call): mcp-go
// runs tools with task support as 2025-11-25 tasks and sends
// notifications/tasks/status when one ends.
//
// sample and roots return input requests (the multi round-trip style of
// 2026-07-28); mcp-go turns them into server-to-client requests for clients
// on earlier revisions, so one handler exercises both of tako's paths.
package main

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
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	httpAddr := flag.String("http", "", "serve Streamable HTTP on this address (e.g. 127.0.0.1:0) instead of stdio; the URL is printed on stdout")
	stateless := flag.Bool("stateless", false, "with -http: serve without sessions")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("mcpgo: ")

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	s := newServer()
	if *httpAddr == "" {
		// Listen returns when stdin reaches EOF, which is how an MCP client
		// ends a stdio session.
		err := server.NewStdioServer(s).Listen(ctx, os.Stdin, os.Stdout)
		if err != nil && !errors.Is(err, context.Canceled) {
			log.Fatal(err)
		}
		return
	}
	if err := serveHTTP(ctx, s, *httpAddr, *stateless); err != nil {
		log.Fatal(err)
	}
}

// serveHTTP serves Streamable HTTP at /mcp until ctx is done. Only loopback
// addresses are accepted: this is a test peer, not a deployable server.
func serveHTTP(ctx context.Context, s *server.MCPServer, addr string, stateless bool) error {
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
	mux := http.NewServeMux()
	mux.Handle("/mcp", server.NewStreamableHTTPServer(s, server.WithStateLess(stateless)))
	hs := &http.Server{Handler: mux}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	go func() {
		<-ctx.Done()
		hs.Close()
	}()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func newServer() *server.MCPServer {
	s := server.NewMCPServer("interop-mcpgo", "1.0.0",
		server.WithToolCapabilities(true),
		server.WithTaskCapabilities(true, true, true),
	)
	addTaskTools(s)

	s.AddTool(mcp.NewTool("echo",
		mcp.WithDescription("Echoes back the message"),
		mcp.WithString("message", mcp.Required(), mcp.Description("the message to echo")),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		msg, err := req.RequireString("message")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return mcp.NewToolResultText("Echo: " + msg), nil
	})

	s.AddTool(mcp.NewTool("add",
		mcp.WithDescription("Adds two numbers"),
		mcp.WithNumber("a", mcp.Required(), mcp.Description("first addend")),
		mcp.WithNumber("b", mcp.Required(), mcp.Description("second addend")),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a, err := req.RequireFloat("a")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		b, err := req.RequireFloat("b")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		sum := a + b
		return mcp.NewToolResultStructured(map[string]any{"sum": sum}, fmt.Sprint(sum)), nil
	})

	// A server's bug that the client should catch (checklist §6C): the
	// structured output breaks the tool's own outputSchema.
	s.AddTool(mcp.NewTool("miscount",
		mcp.WithDescription("Counts, and answers in words where its schema promises an integer"),
		mcp.WithRawOutputSchema(json.RawMessage(`{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}`)),
	), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultStructured(map[string]any{"count": "three"}, "three"), nil
	})

	s.AddTool(mcp.NewTool("progress",
		mcp.WithDescription("Sends one progress notification per step"),
		mcp.WithNumber("steps", mcp.Description("number of progress notifications to send (default 3)")),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		steps := req.GetInt("steps", 3)
		if steps <= 0 {
			steps = 3
		}
		if steps > 1000 {
			return mcp.NewToolResultError(fmt.Sprintf("steps must be at most 1000, got %d", steps)), nil
		}
		// Progress is opt-in: without a token the client asked for none.
		if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
			srv := server.ServerFromContext(ctx)
			for i := 1; i <= steps; i++ {
				err := srv.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), map[string]any{
					"progressToken": req.Params.Meta.ProgressToken,
					"progress":      i,
					"total":         steps,
					"message":       fmt.Sprintf("step %d of %d", i, steps),
				})
				if err != nil {
					return nil, err
				}
			}
		}
		return mcp.NewToolResultText(fmt.Sprintf("done: %d steps", steps)), nil
	})

	s.AddTool(mcp.NewTool("sample",
		mcp.WithDescription("Asks the client's model to answer the prompt"),
		mcp.WithString("prompt", mcp.Required(), mcp.Description("the prompt to send to the client's model")),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if res := server.SamplingResponse(req.Params.InputResponses, "answer"); res != nil {
			return mcp.NewToolResultText(fmt.Sprintf("sampled: %s: %s", res.Model, samplingText(res.Content))), nil
		}
		prompt, err := req.RequireString("prompt")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return server.NewInputRequestBuilder("").
			Sample("answer", mcp.CreateMessageParams{
				Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(prompt)}},
				MaxTokens: 100,
			}).
			ToolResult(), nil
	})

	s.AddTool(mcp.NewTool("roots",
		mcp.WithDescription("Lists the client's roots"),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if res := server.RootsResponse(req.Params.InputResponses, "roots"); res != nil {
			uris := make([]string, 0, len(res.Roots))
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			return mcp.NewToolResultText(strings.Join(uris, "\n")), nil
		}
		return server.NewInputRequestBuilder("").Roots("roots").ToolResult(), nil
	})

	return s
}

// samplingText returns the text of a sampling result's content, which mcp-go
// decodes as one block or a list of blocks, typed or as plain maps.
func samplingText(content any) string {
	switch c := content.(type) {
	case mcp.TextContent:
		return c.Text
	case *mcp.TextContent:
		return c.Text
	case map[string]any:
		t, _ := c["text"].(string)
		return t
	case []any:
		var parts []string
		for _, e := range c {
			if t := samplingText(e); t != "" {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, "\n")
	case []mcp.Content:
		var parts []string
		for _, e := range c {
			if t := samplingText(e); t != "" {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

// addTaskTools adds the tools that run as tasks.
func addTaskTools(s *server.MCPServer) {
	s.AddTool(mcp.NewTool("slow",
		mcp.WithDescription("Waits, then answers; runs as a task when asked"),
		mcp.WithNumber("ms", mcp.Description("milliseconds to wait (default 200, at most 60000)")),
		mcp.WithTaskSupport(mcp.TaskSupportOptional),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ms := req.GetInt("ms", 200)
		if ms < 0 || ms > 60000 {
			return mcp.NewToolResultError(fmt.Sprintf("ms must be within 0..60000, got %d", ms)), nil
		}
		// The context is not watched: mcp-go v1.2.1 hands a task's handler
		// a context that ends with the tools/call request that created the
		// task, which would cancel every task as soon as it is created.
		// tasks/cancel still works: mcp-go marks the task cancelled itself
		// and ignores the handler's late result.
		time.Sleep(time.Duration(ms) * time.Millisecond)
		return mcp.NewToolResultText(fmt.Sprintf("slept %d ms", ms)), nil
	})

	s.AddTool(mcp.NewTool("fail_job",
		mcp.WithDescription("Fails with a protocol error; must run as a task"),
		mcp.WithTaskSupport(mcp.TaskSupportRequired),
	), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("fail_job always fails")
	})
}
