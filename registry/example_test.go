package registry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strconv"
	"strings"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/registry"
	"github.com/tako-mcp/tako/transport"
)

// A registry holds the program's own Go tools beside a connected server's,
// under one namespace (here each server tool is prefixed with its server's
// name), and Dispatch runs a model's call on whichever owns the name. What
// goes wrong comes back as an error result for the model to read: a bad
// argument, an unknown name, a failing tool.
func Example() {
	ctx := context.Background()
	// The server is mcptest's reference server, in this process; any
	// connected transport.Transport goes the same way.
	conn, wait := mcptest.NewReference(mcptest.Options{}).Pipe(ctx)
	defer wait() // after reg.Close, which closes the session and so the pipe
	sess, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		log.Fatal(err)
	}

	reg := registry.New(registry.Options{Naming: registry.Prefix("__")})
	defer reg.Close()
	type text struct {
		Text string `json:"text" description:"the text whose words to count"`
	}
	wordCount, err := registry.Func("word_count", "Counts the words of a text.", func(_ context.Context, in text) (string, error) {
		return strconv.Itoa(len(strings.Fields(in.Text))), nil
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := reg.AddTool(wordCount); err != nil {
		log.Fatal(err)
	}
	// The registry owns sess from here, and closes it.
	if err := reg.AddServer(ctx, "ref", sess, &registry.ServerOptions{Allow: []string{"add", "echo", "fail"}}); err != nil {
		log.Fatal(err)
	}
	for _, d := range reg.Tools() {
		fmt.Printf("%s (server %q, its name %q)\n", d.Name, d.Server, d.Original)
	}

	for _, call := range []registry.Call{
		{ID: "1", Name: "word_count", Arguments: json.RawMessage(`{"text":"one two three"}`)},
		{ID: "2", Name: "ref__add", Arguments: json.RawMessage(`{"a":17,"b":25}`)},
		{ID: "3", Name: "ref__add", Arguments: json.RawMessage(`{"a":"17"}`)},
		{ID: "4", Name: "ref__ech", Arguments: json.RawMessage(`{"message":"hi"}`)},
		{ID: "5", Name: "ref__fail"},
	} {
		res := reg.Dispatch(ctx, call)
		fmt.Printf("%s %s error=%v: %s\n", res.ID, res.Name, res.IsError, res.Text())
	}
	// Output:
	// ref__add (server "ref", its name "add")
	// ref__echo (server "ref", its name "echo")
	// ref__fail (server "ref", its name "fail")
	// word_count (server "", its name "word_count")
	// 1 word_count error=false: 3
	// 2 ref__add error=false: 42
	// 3 ref__add error=true: invalid arguments for tool "ref__add": at /properties/a: type: 17 has type "string", want "number"
	// required: missing properties: ["b"]
	// 4 ref__ech error=true: unknown tool "ref__ech"; the available tools are: ref__add, ref__echo, ref__fail, word_count
	// 5 ref__fail error=true: failure requested
}

// A Go tool reports its progress with ReportProgress; whoever called it
// with transport.WithProgress (the agent does) sees each step before the
// result.
func ExampleReportProgress() {
	reg := registry.New(registry.Options{})
	defer reg.Close()
	_ = reg.AddTool(registry.Tool{Name: "count", Handler: func(ctx context.Context, _ json.RawMessage) (*mcp.CallToolResult, error) {
		for i := 1; i <= 3; i++ {
			registry.ReportProgress(ctx, float64(i), 3, "counting")
		}
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("done")}}, nil
	}})
	ctx := transport.WithProgress(context.Background(), func(p mcp.ProgressParams) {
		fmt.Printf("%v of %v: %s\n", p.Progress, *p.Total, p.Message)
	})
	res := reg.Dispatch(ctx, registry.Call{Name: "count"})
	fmt.Println(res.Text())
	// Output:
	// 1 of 3: counting
	// 2 of 3: counting
	// 3 of 3: counting
	// done
}
