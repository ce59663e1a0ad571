package mcp_test

import (
	"encoding/json"
	"fmt"
	"log"

	"github.com/tako-mcp/tako/mcp"
)

// Decoding a tools/list response: the envelope first, then the result, with
// each tool's input schema kept as the server sent it.
func ExampleDecodeMessage_toolsList() {
	line := []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[` +
		`{"name":"get_weather","description":"Get current weather","inputSchema":{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]},"annotations":{"readOnlyHint":true}},` +
		`{"name":"deploy","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}],` +
		`"nextCursor":"page-2"}}`)

	msg, err := mcp.DecodeMessage(line)
	if err != nil {
		log.Fatal(err)
	}
	if msg.Error != nil {
		log.Fatal(msg.Error)
	}
	var page mcp.ListToolsResult
	if err := json.Unmarshal(msg.Result, &page); err != nil {
		log.Fatal(err)
	}
	for _, tool := range page.Tools {
		readOnly := tool.Annotations != nil && tool.Annotations.ReadOnlyHint != nil && *tool.Annotations.ReadOnlyHint
		fmt.Printf("%s read-only=%v schema=%s\n", tool.Name, readOnly, tool.InputSchema)
	}
	if page.NextCursor != nil {
		fmt.Println("more after", *page.NextCursor)
	}
	// Output:
	// get_weather read-only=true schema={"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}
	// deploy read-only=false schema={"type":"object"}
	// more after page-2
}

// Building a tools/call request, with the 2026-07-28 per-request metadata,
// and framing it as one line.
func ExampleNewRequest_toolsCall() {
	meta, err := mcp.RequestMeta{
		ProtocolVersion: mcp.Version20260728,
		ClientInfo:      &mcp.Implementation{Name: "tako", Version: "0.1.0"},
	}.MergeInto(nil)
	if err != nil {
		log.Fatal(err)
	}
	params := &mcp.CallToolParams{
		Name:      "get_weather",
		Arguments: json.RawMessage(`{"location":"New York"}`),
		Meta:      meta,
	}
	req, err := mcp.NewRequest(mcp.Int64ID(2), mcp.MethodToolsCall, params)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", req.AppendJSON(nil))
	// Output:
	// {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"New York"},"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"tako","version":"0.1.0"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}
}

// Telling a final result from a task handle or a request for input.
func ExampleParseResultType() {
	for _, raw := range []string{
		`{"content":[{"type":"text","text":"done"}]}`,
		`{"resultType":"input_required","requestState":"abc"}`,
		`{"resultType":"task","taskId":"t1","status":"working","createdAt":"2026-08-01T10:00:00Z","lastUpdatedAt":"2026-08-01T10:00:00Z","ttlMs":null}`,
	} {
		rt, err := mcp.ParseResultType(json.RawMessage(raw))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(rt)
	}
	// Output:
	// complete
	// input_required
	// task
}

// An image in a tool result: its bytes and its base64, whichever form the
// wire brought it in (base64 text over stdio and HTTP, bytes over gRPC).
func ExampleBinary() {
	var res mcp.CallToolResult
	if err := json.Unmarshal([]byte(`{"content":[{"type":"image","mimeType":"image/png","data":"iVBORw0KGgo="}]}`), &res); err != nil {
		log.Fatal(err)
	}
	img := res.Content[0]
	png, err := img.Data.Bytes() // decoded here: JSON brought base64
	if err != nil {
		log.Fatal(err) // a server's bad base64 fails here, not the result
	}
	fmt.Printf("%s, %d bytes (%d counted without decoding), %q\n", img.MIMEType, len(png), img.Data.Size(), png[1:4])

	// A block made from bytes keeps them, and writes base64 when it goes
	// on a JSON wire.
	back, _ := json.Marshal(mcp.ImageContent(png, "image/png"))
	fmt.Println(string(back))
	fmt.Println(mcp.ImageContent(png, "image/png").Data.Equal(img.Data))
	// Output:
	// image/png, 8 bytes (8 counted without decoding), "PNG"
	// {"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}
	// true
}
