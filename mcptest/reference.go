package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/tako-mcp/tako/mcp"
)

// Names of the reference tools, for tests that call them.
const (
	ToolEcho     = "echo"
	ToolAdd      = "add"
	ToolProgress = "progress"
	ToolSample   = "sample"
	ToolElicit   = "elicit"
	ToolRoots    = "roots"
	ToolBig      = "big"
	ToolNotify   = "notify"
	ToolSleep    = "sleep"
	ToolFail     = "fail"
)

// MaxBigBytes bounds the big tool's size, so that a typo in a test cannot
// make the server allocate gigabytes.
const MaxBigBytes = 256 << 20

// schema2020 is the dialect every reference schema declares, so that a
// client sees an explicit $schema as well as the 2020-12 default.
const schema2020 = `"$schema":"https://json-schema.org/draft/2020-12/schema"`

func objectSchema(props, required string) json.RawMessage {
	return json.RawMessage(`{` + schema2020 + `,"type":"object","properties":{` + props + `},"required":[` + required + `],"additionalProperties":false}`)
}

// NewReference returns a server with the reference tool set, which the
// conformance kit (transport/transporttest) and the demo server rely on:
//
//	echo {message}    text = message
//	add {a, b}        text of a+b, structuredContent {"sum": a+b} (with an outputSchema)
//	progress {steps}  sends steps progress notifications, then text "done"
//	sample {prompt}   asks the client's model (sampling) and returns the completion's text
//	elicit {message}  asks the user (form elicitation for {name}) and returns the
//	                  accepted content as JSON text, or "decline" / "cancel"
//	roots             returns the client's roots as JSON text
//	big {bytes}       returns a text block of exactly that many 'x' bytes
//	notify            sends notifications/tools/list_changed and a notifications/message
//	                  log line (level info, data "notify called"), then text "ok"
//	sleep {ms}        sends one progress notification (progress 0) if asked for
//	                  progress, waits ms milliseconds (cancellable), then text "slept"
//	fail {message?}   a tool error: isError true, text = message or "failure requested"
func NewReference(opts Options) *Server {
	if opts.ServerInfo.Name == "" {
		opts.ServerInfo = mcp.Implementation{Name: "mcptest-reference", Version: "0.1.0"}
	}
	s := New(opts)
	for _, t := range referenceTools() {
		// The reference tools are well formed; AddTool cannot fail on them.
		_ = s.AddTool(t.tool, t.handler)
	}
	return s
}

func referenceTools() []toolEntry {
	readOnly := true
	ro := &mcp.ToolAnnotations{ReadOnlyHint: &readOnly}
	return []toolEntry{
		{mcp.Tool{
			Name: ToolEcho, Title: "Echo", Description: "Returns its message unchanged.",
			InputSchema: objectSchema(`"message":{"type":"string","description":"Text to return."}`, `"message"`),
			Annotations: ro,
		}, echoTool},
		{mcp.Tool{
			Name: ToolAdd, Title: "Add", Description: "Adds two numbers; the sum comes as text and as structured content.",
			InputSchema:  objectSchema(`"a":{"type":"number"},"b":{"type":"number"}`, `"a","b"`),
			OutputSchema: objectSchema(`"sum":{"type":"number"}`, `"sum"`),
			Annotations:  ro,
		}, addTool},
		{mcp.Tool{
			Name: ToolProgress, Title: "Progress", Description: "Sends one progress notification per step, then answers \"done\".",
			InputSchema: objectSchema(`"steps":{"type":"integer","minimum":0,"maximum":10000}`, `"steps"`),
		}, progressTool},
		{mcp.Tool{
			Name: ToolSample, Title: "Sample", Description: "Asks the client's model to complete the prompt and returns its text.",
			InputSchema: objectSchema(`"prompt":{"type":"string"}`, `"prompt"`),
		}, sampleTool},
		{mcp.Tool{
			Name: ToolElicit, Title: "Elicit", Description: "Asks the user for a name through a form and returns the accepted content as JSON.",
			InputSchema: objectSchema(`"message":{"type":"string"}`, `"message"`),
		}, elicitTool},
		{mcp.Tool{
			Name: ToolRoots, Title: "Roots", Description: "Returns the client's roots as JSON.",
			InputSchema: objectSchema(``, ``),
		}, rootsTool},
		{mcp.Tool{
			Name: ToolBig, Title: "Big", Description: "Returns a text block of exactly the given number of 'x' bytes.",
			InputSchema: objectSchema(`"bytes":{"type":"integer","minimum":0,"maximum":`+strconv.Itoa(MaxBigBytes)+`}`, `"bytes"`),
			Annotations: ro,
		}, bigTool},
		{mcp.Tool{
			Name: ToolNotify, Title: "Notify", Description: "Sends notifications/tools/list_changed and a log message, then answers \"ok\".",
			InputSchema: objectSchema(``, ``),
		}, notifyTool},
		{mcp.Tool{
			Name: ToolSleep, Title: "Sleep", Description: "Waits the given number of milliseconds (cancellable), then answers \"slept\".",
			InputSchema: objectSchema(`"ms":{"type":"integer","minimum":0,"maximum":86400000}`, `"ms"`),
			Annotations: ro,
		}, sleepTool},
		{mcp.Tool{
			Name: ToolFail, Title: "Fail", Description: "Always fails with a tool error (isError).",
			InputSchema: objectSchema(`"message":{"type":"string"}`, ``),
		}, failTool},
	}
}

// inputFailed turns an error from Sample, Elicit or ListRoots into what a
// reference tool returns: the round-trip and capability signals go back to
// the server as they are, and a refusal by the client (its *mcp.Error)
// becomes a tool error, since the call itself was fine.
func inputFailed(err error) (*mcp.CallToolResult, error) {
	if errors.Is(err, ErrInputRequired) || errors.Is(err, ErrMissingCapability) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(err.Error())}, IsError: true}, nil
}

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(text)}}
}

func echoTool(_ context.Context, req *CallRequest) (*mcp.CallToolResult, error) {
	var a struct {
		Message *string `json:"message"`
	}
	if err := req.BindArguments(&a); err != nil {
		return nil, err
	}
	if a.Message == nil {
		return nil, fmt.Errorf("echo: missing argument message")
	}
	return textResult(*a.Message), nil
}

func addTool(_ context.Context, req *CallRequest) (*mcp.CallToolResult, error) {
	var a struct {
		A *float64 `json:"a"`
		B *float64 `json:"b"`
	}
	if err := req.BindArguments(&a); err != nil {
		return nil, err
	}
	if a.A == nil || a.B == nil {
		return nil, fmt.Errorf("add: arguments a and b are required")
	}
	sum := *a.A + *a.B
	text := strconv.FormatFloat(sum, 'f', -1, 64)
	res := textResult(text)
	res.StructuredContent = json.RawMessage(`{"sum":` + text + `}`)
	return res, nil
}

func progressTool(ctx context.Context, req *CallRequest) (*mcp.CallToolResult, error) {
	var a struct {
		Steps int `json:"steps"`
	}
	if err := req.BindArguments(&a); err != nil {
		return nil, err
	}
	if a.Steps < 0 || a.Steps > 10000 {
		return nil, fmt.Errorf("progress: steps must be between 0 and 10000")
	}
	for i := 1; i <= a.Steps; i++ {
		if err := req.Progress(ctx, float64(i), float64(a.Steps), fmt.Sprintf("step %d of %d", i, a.Steps)); err != nil {
			return nil, err
		}
	}
	return textResult("done"), nil
}

func sampleTool(ctx context.Context, req *CallRequest) (*mcp.CallToolResult, error) {
	var a struct {
		Prompt string `json:"prompt"`
	}
	if err := req.BindArguments(&a); err != nil {
		return nil, err
	}
	content, _ := json.Marshal(mcp.TextContent(a.Prompt))
	res, err := req.Sample(ctx, &mcp.CreateMessageParams{
		Messages:  []mcp.SamplingMessage{{Role: "user", Content: content}},
		MaxTokens: 256,
	})
	if err != nil {
		return inputFailed(err)
	}
	return textResult(samplingText(res.Content)), nil
}

// samplingText returns the text of a sampling result's content, which is
// one block or (2025-11-25, with tools) an array of blocks.
func samplingText(raw json.RawMessage) string {
	var blocks []mcp.Content
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '[' {
		_ = json.Unmarshal(t, &blocks)
	} else {
		var one mcp.Content
		if json.Unmarshal(t, &one) == nil {
			blocks = []mcp.Content{one}
		}
	}
	var out []byte
	for _, b := range blocks {
		if b.Type == mcp.ContentText {
			out = append(out, b.Text...)
		}
	}
	return string(out)
}

func elicitTool(ctx context.Context, req *CallRequest) (*mcp.CallToolResult, error) {
	var a struct {
		Message string `json:"message"`
	}
	if err := req.BindArguments(&a); err != nil {
		return nil, err
	}
	if a.Message == "" {
		a.Message = "Please enter your name."
	}
	res, err := req.Elicit(ctx, &mcp.ElicitParams{
		Mode:            "form",
		Message:         a.Message,
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","title":"Name"}},"required":["name"]}`),
	})
	if err != nil {
		return inputFailed(err)
	}
	if res.Action != mcp.ElicitAccept {
		return textResult(res.Action), nil
	}
	content := res.Content
	if content == nil {
		content = map[string]any{}
	}
	b, err := json.Marshal(content)
	if err != nil {
		return nil, err
	}
	return textResult(string(b)), nil
}

func rootsTool(ctx context.Context, req *CallRequest) (*mcp.CallToolResult, error) {
	roots, err := req.ListRoots(ctx)
	if err != nil {
		return inputFailed(err)
	}
	if roots == nil {
		roots = []mcp.Root{}
	}
	b, err := json.Marshal(roots)
	if err != nil {
		return nil, err
	}
	return textResult(string(b)), nil
}

func bigTool(_ context.Context, req *CallRequest) (*mcp.CallToolResult, error) {
	var a struct {
		Bytes int `json:"bytes"`
	}
	if err := req.BindArguments(&a); err != nil {
		return nil, err
	}
	if a.Bytes < 0 || a.Bytes > MaxBigBytes {
		return nil, fmt.Errorf("big: bytes must be between 0 and %d", MaxBigBytes)
	}
	return textResult(string(bytes.Repeat([]byte{'x'}, a.Bytes))), nil
}

func notifyTool(ctx context.Context, req *CallRequest) (*mcp.CallToolResult, error) {
	if err := req.NotifyToolsListChanged(ctx); err != nil {
		return nil, err
	}
	if err := req.Log(ctx, "info", "notify called"); err != nil {
		return nil, err
	}
	return textResult("ok"), nil
}

// maxSleepMS (a day) keeps the sleep tool's duration from overflowing.
const maxSleepMS = 24 * 60 * 60 * 1000

func sleepTool(ctx context.Context, req *CallRequest) (*mcp.CallToolResult, error) {
	var a struct {
		MS int64 `json:"ms"`
	}
	if err := req.BindArguments(&a); err != nil {
		return nil, err
	}
	if a.MS < 0 || a.MS > maxSleepMS {
		return nil, fmt.Errorf("sleep: ms must be between 0 and %d", maxSleepMS)
	}
	// The progress notification tells a client that the call is in
	// flight, so that a test can cancel it at the right moment without
	// guessing with a timer.
	if err := req.Progress(ctx, 0, 0, "sleeping"); err != nil {
		return nil, err
	}
	t := time.NewTimer(time.Duration(a.MS) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return textResult("slept"), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func failTool(_ context.Context, req *CallRequest) (*mcp.CallToolResult, error) {
	var a struct {
		Message string `json:"message"`
	}
	if err := req.BindArguments(&a); err != nil {
		return nil, err
	}
	if a.Message == "" {
		a.Message = "failure requested"
	}
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(a.Message)}, IsError: true}, nil
}
