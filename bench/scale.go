package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tako-mcp/tako/bench/internal/payload"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/orchestrator"
	"github.com/tako-mcp/tako/orchestrator/anthropic"
	"github.com/tako-mcp/tako/registry"
)

// The scale suite: cost as the work grows, for each client in a process of
// its own. Its points are the result sizes (SizePoints) and the sizes of
// a tool list (ToolPoints); the tako worker over stdio adds the registry's
// and the agent's figures at each tool count, which have no peer.

// SizePoints are the result sizes of the scale suite, log text
// (payload.Text). The largest is the largest whose message fits tako's
// default cap of 64 MiB (the text's escapes add about a sixth on the
// wire).
var SizePoints = []int{1 << 10, 16 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 48 << 20}

// ToolPoints are the tool counts of the scale suite.
var ToolPoints = []int{100, 1000, 10000}

// ScaleTransports are the transports the scale suite runs on.
var ScaleTransports = []string{"stdio", "http"}

// sizeCalls is how many calls of n bytes the size points measure: enough
// for a median where a call takes a millisecond, one where it takes a
// second.
func sizeCalls(n int) int {
	switch {
	case n <= 16<<10:
		return 40
	case n <= 256<<10:
		return 15
	case n <= 4<<20:
		return 4
	case n <= 16<<20:
		return 2
	}
	return 1
}

func runScale(ctx context.Context, r *Result, t *Transport, k kind, bins Bins, cfg Config) error {
	if err := runSizes(ctx, r, t, k, bins, cfg); err != nil {
		return err
	}
	for _, n := range cfg.ToolPoints {
		if err := runToolPoint(ctx, r, t, k, bins, n); err != nil {
			return err
		}
	}
	if t.Name == "stdio" && k.name == "tako" {
		for _, n := range cfg.ToolPoints {
			if err := runRegistryPoint(ctx, r, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// runSizes measures a result of each of cfg.SizePoints: the median time
// and the least heap of sizeCalls calls, after one outside the figures.
// A size the client cannot take fails that point and the client starts
// again.
func runSizes(ctx context.Context, r *Result, t *Transport, k kind, bins Bins, cfg Config) error {
	ep, err := t.Serve(ctx, bins, 0)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	defer ep.Close()
	c, err := k.start(ctx, ep)
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	defer func() { c.Close() }()
	for _, n := range cfg.SizePoints {
		c, err = bigCalls(ctx, r, k, ep, c, payload.Text, "size."+strconv.Itoa(n), n, sizeCalls(n))
		if err != nil {
			return err
		}
	}
	return nil
}

// manySchema is the input schema of the scale suite's tools: the one
// servers/gosdk -tools gives its own (about 2 KB).
var manySchema = func() json.RawMessage {
	props := map[string]any{}
	for i := range 12 {
		props[fmt.Sprintf("field%02d", i)] = map[string]any{
			"type":        "string",
			"description": fmt.Sprintf("Field %d of the request. %s", i, strings.Repeat("It is described at length, as real tools are. ", 2)),
		}
	}
	props["mode"] = map[string]any{"type": "string", "enum": []string{"fast", "thorough", "dry-run", "verbose"}}
	props["options"] = map[string]any{
		"type": "object",
		"properties": map[string]any{
			"limit":  map[string]any{"type": "integer", "minimum": 1, "maximum": 1000},
			"offset": map[string]any{"type": "integer", "minimum": 0},
			"tags":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		},
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": []string{"field00", "mode"}})
	return b
}()

// runToolPoint lists the tools of a server that offers n (and echo and
// big), twice after once outside the figures: the median time and the
// least heap.
func runToolPoint(ctx context.Context, r *Result, t *Transport, k kind, bins Bins, n int) error {
	ep, err := t.Serve(ctx, bins, n)
	if err != nil {
		return fmt.Errorf("server with %d tools: %w", n, err)
	}
	defer ep.Close()
	c, err := k.start(ctx, ep)
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	defer c.Close()
	key := "tools." + strconv.Itoa(n) + "."
	var times, heap []time.Duration
	for i := range 3 {
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		start := time.Now()
		got, err := c.listTools(ctx)
		d := time.Since(start)
		runtime.ReadMemStats(&m1)
		if err == nil && got != n+2 {
			err = fmt.Errorf("listed %d tools, want %d", got, n+2)
		}
		if err != nil {
			r.fail(key+"list_ms", err)
			r.fail(key+"list_heap_mib", err)
			return nil
		}
		if i > 0 {
			times = append(times, d)
			heap = append(heap, time.Duration(m1.TotalAlloc-m0.TotalAlloc))
		}
	}
	r.set(key+"list_ms", ms(median(times)))
	r.set(key+"list_heap_mib", float64(slices.Min(heap))/(1<<20))
	return nil
}

// runRegistryPoint measures, with n local tools of manySchema: one
// registry Dispatch of a tool call (its arguments validated against the
// schema), and one agent turn that ends the conversation, once with a
// provider that answers at once (what the agent itself does with the tool
// list each turn) and once with the Anthropic provider against a local
// server (the request built and sent with every tool in it).
func runRegistryPoint(ctx context.Context, r *Result, n int) error {
	key := "registry." + strconv.Itoa(n) + "."
	ok := &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("ok")}}
	tools := make([]registry.Tool, n)
	for i := range tools {
		tools[i] = registry.Tool{
			Name:        fmt.Sprintf("tool%05d", i),
			Description: fmt.Sprintf("Tool number %d of a large catalogue; it does nothing but answer ok.", i),
			InputSchema: manySchema,
			Handler:     func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) { return ok, nil },
		}
	}
	reg := registry.New(registry.Options{})
	defer reg.Close()
	for _, tool := range tools {
		if err := reg.AddTool(tool); err != nil {
			return err
		}
	}
	call := registry.Call{ID: "c1", Name: tools[n/2].Name, Arguments: json.RawMessage(`{"field00":"x","mode":"fast","options":{"limit":10}}`)}
	d, allocs, err := perOp(1000, func() error {
		if res := reg.Dispatch(ctx, call); res.IsError {
			return fmt.Errorf("dispatch: %s", res.Text())
		}
		return nil
	})
	if err != nil {
		return err
	}
	r.set(key+"dispatch_us", us(d))
	r.set(key+"dispatch_bytes", allocs)

	// One agent turn, the model answering at once.
	answer := &orchestrator.Response{Text: "done", StopReason: orchestrator.StopEndTurn}
	quiet := orchestrator.ProviderFunc(func(ctx context.Context, req *orchestrator.Request, _ func(orchestrator.Delta)) (*orchestrator.Response, error) {
		if len(req.Tools) != n {
			return nil, fmt.Errorf("the turn offered %d tools, want %d", len(req.Tools), n)
		}
		return answer, nil
	})
	if err := agentTurn(ctx, r, key+"turn", quiet, tools, 50); err != nil {
		return err
	}
	// The same through the Anthropic provider and a local server.
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"m1","type":"message","role":"assistant","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`)
	}))
	defer hs.Close()
	p, err := anthropic.New(anthropic.Options{Model: "bench", APIKey: "bench", BaseURL: hs.URL})
	if err != nil {
		return err
	}
	calls := 20
	if n >= 10000 {
		calls = 5
	}
	return agentTurn(ctx, r, key+"turn_anthropic", p, tools, calls)
}

// agentTurn runs calls one-turn conversations on an agent with tools and
// sets key's median time and bytes per turn.
func agentTurn(ctx context.Context, r *Result, key string, p orchestrator.Provider, tools []registry.Tool, calls int) error {
	a, err := orchestrator.New(ctx, orchestrator.Config{Provider: p, Tools: tools})
	if err != nil {
		return err
	}
	defer a.Close()
	d, allocs, err := perOp(calls, func() error {
		_, err := a.Run(ctx, "hello")
		return err
	})
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	r.set(key+"_us", us(d))
	r.set(key+"_bytes", allocs)
	return nil
}

// perOp runs fn n times after once and returns the median time of a run
// and the mean bytes allocated by one.
func perOp(n int, fn func() error) (time.Duration, float64, error) {
	if err := fn(); err != nil {
		return 0, 0, err
	}
	runtime.GC()
	times := make([]time.Duration, 0, n)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for range n {
		start := time.Now()
		if err := fn(); err != nil {
			return 0, 0, err
		}
		times = append(times, time.Since(start))
	}
	runtime.ReadMemStats(&m1)
	return median(times), float64(m1.TotalAlloc-m0.TotalAlloc) / float64(n), nil
}
