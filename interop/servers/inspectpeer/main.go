// Command inspectpeer is an MCP server (the official Go SDK's) on stdio for
// the tako inspect browser tests: what server-everything does not have.
//
//	-tools N        also offer N tools named tool-0001 ... (a long list)
//	big {bytes}     a text block of that many bytes (a large result)
//	show-app        a tool with an MCP App: its _meta names ui://inspect/app.html,
//	                whose page calls add through its host and reports with ui/message
//	add {a, b}      the sum, as text and structuredContent {"sum"} with an output schema
//	bad-output      structuredContent that breaks its output schema
//	contents        one block of each kind the viewers show: an image, audio, and
//	                embedded PDF, CSV and HTML resources
//	form {...}      an input schema with a nested object, arrays (of strings, of
//	                objects, of an enum), an enum, defaults and required fields;
//	                answers with the arguments it got, as JSON text
package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const appURI = "ui://inspect/app.html"

// appPage is the App: it answers the host's handshake, waits for the
// tool's result, calls add through the host, shows both and tells the
// host what it saw.
const appPage = `<!doctype html><meta charset="utf-8"><title>inspect app</title><body><p id="out">waiting</p><script>
let id = 0; const pending = {};
function req(method, params) { const i = ++id; parent.postMessage({jsonrpc: "2.0", id: i, method, params}, "*"); return new Promise((r) => { pending[i] = r; }); }
window.addEventListener("message", async (ev) => {
  const m = ev.data;
  if (!m || m.jsonrpc !== "2.0") return;
  if (m.id !== undefined && pending[m.id]) { pending[m.id](m); delete pending[m.id]; return; }
  if (m.method === "ui/notifications/tool-result") {
    const text = (m.params.content || []).map((c) => c.text).join(" ");
    const sum = await req("tools/call", {name: "add", arguments: {a: 2, b: 3}});
    const s = sum.result ? sum.result.content[0].text : "error " + JSON.stringify(sum.error);
    document.getElementById("out").textContent = text + " / " + s;
    parent.postMessage({jsonrpc: "2.0", method: "ui/notifications/size-changed", params: {height: 140}}, "*");
    req("ui/message", {role: "user", content: [{type: "text", text: "app saw " + text + " and add gave " + s}]});
  }
});
req("ui/initialize", {protocolVersion: "2026-01-26", appInfo: {name: "inspect test app", version: "1"}, appCapabilities: {}})
  .then(() => parent.postMessage({jsonrpc: "2.0", method: "ui/notifications/initialized", params: {}}, "*"));
</script>`

type bigIn struct {
	Bytes int `json:"bytes" jsonschema:"how many bytes of text"`
}

type addIn struct {
	A float64 `json:"a" jsonschema:"first addend"`
	B float64 `json:"b" jsonschema:"second addend"`
}

type addOut struct {
	Sum float64 `json:"sum"`
}

type manyIn struct {
	Value string `json:"value,omitempty" jsonschema:"anything"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func main() {
	tools := flag.Int("tools", 0, "also offer this many tools")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("inspectpeer: ")
	s := mcp.NewServer(&mcp.Implementation{Name: "inspectpeer", Version: "1.0.0"}, nil)

	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "Returns a text block of the given size"},
		func(_ context.Context, _ *mcp.CallToolRequest, in bigIn) (*mcp.CallToolResult, any, error) {
			if in.Bytes < 0 || in.Bytes > 64<<20 {
				return nil, nil, fmt.Errorf("bytes must be within 0 and 64 MiB")
			}
			return text(strings.Repeat("x", in.Bytes)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two numbers"},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
			return text(fmt.Sprint(in.A + in.B)), addOut{Sum: in.A + in.B}, nil
		})
	s.AddTool(&mcp.Tool{Name: "bad-output", Description: "Answers with structured content its output schema refuses",
		InputSchema:  map[string]any{"type": "object"},
		OutputSchema: map[string]any{"type": "object", "properties": map[string]any{"sum": map[string]any{"type": "number"}}, "required": []string{"sum"}}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r := text("not a number")
			r.StructuredContent = map[string]any{"sum": "not a number"}
			return r, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "show-app", Description: "Has an MCP App", Meta: mcp.Meta{"ui": map[string]any{"resourceUri": appURI}}},
		func(_ context.Context, _ *mcp.CallToolRequest, _ manyIn) (*mcp.CallToolResult, any, error) {
			return text("app result"), nil, nil
		})
	s.AddResource(&mcp.Resource{URI: appURI, Name: "the app", MIMEType: "text/html;profile=mcp-app"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: appURI, MIMEType: "text/html;profile=mcp-app", Text: appPage}}}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "contents", Description: "One block of each kind the viewers show"},
		func(_ context.Context, _ *mcp.CallToolRequest, _ manyIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.ImageContent{MIMEType: "image/png", Data: tinyPNG()},
				&mcp.AudioContent{MIMEType: "audio/wav", Data: tinyWAV()},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://report.pdf", MIMEType: "application/pdf", Blob: []byte(tinyPDF)}},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://table.csv", MIMEType: "text/csv", Text: "name,count\nAda,1\n\"Lovelace, A.\",2\n"}},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://page.html", MIMEType: "text/html", Text: "<h1>hello html</h1><script>parent.postMessage('escaped', '*')</script>"}},
			}}, nil, nil
		})
	s.AddTool(&mcp.Tool{Name: "form", Description: "Answers with the arguments it got", InputSchema: formSchema},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("got " + string(req.Params.Arguments)), nil
		})
	for i := 1; i <= *tools; i++ {
		mcp.AddTool(s, &mcp.Tool{Name: fmt.Sprintf("tool-%04d", i), Description: fmt.Sprintf("Tool number %d of a long list", i)},
			func(_ context.Context, _ *mcp.CallToolRequest, in manyIn) (*mcp.CallToolResult, any, error) {
				return text(fmt.Sprintf("tool %d: %s", i, in.Value)), nil, nil
			})
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := s.Run(ctx, &mcp.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
		log.Fatal(err)
	}
}

func tinyPNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for x := range 8 {
		for y := range 8 {
			img.Set(x, y, color.RGBA{R: uint8(x * 32), G: 100, B: uint8(y * 32), A: 255})
		}
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}

// tinyWAV is a tenth of a second of silence, 8 kHz mono 8-bit PCM.
func tinyWAV() []byte {
	const n = 800
	var b bytes.Buffer
	w := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	w(uint32(36 + n))
	b.WriteString("WAVEfmt ")
	w(uint32(16))
	w(uint16(1))
	w(uint16(1))
	w(uint32(8000))
	w(uint32(8000))
	w(uint16(1))
	w(uint16(8))
	b.WriteString("data")
	w(uint32(n))
	b.Write(bytes.Repeat([]byte{128}, n))
	return b.Bytes()
}

const tinyPDF = "%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 100]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"

// formSchema is the form tool's input schema: what a generated form must
// model.
var formSchema = map[string]any{
	"type":     "object",
	"required": []string{"title", "owner"},
	"properties": map[string]any{
		"title":    map[string]any{"type": "string", "description": "What it is called"},
		"priority": map[string]any{"type": "string", "enum": []string{"low", "normal", "high"}, "default": "normal"},
		"count":    map[string]any{"type": "integer", "default": 3, "minimum": 0},
		"urgent":   map[string]any{"type": "boolean"},
		"owner": map[string]any{"type": "object", "required": []string{"name"}, "properties": map[string]any{
			"name":  map[string]any{"type": "string"},
			"email": map[string]any{"type": "string", "format": "email"},
		}},
		"tags":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		"days":   map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []string{"mon", "tue", "wed"}}},
		"points": map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "number"}, "y": map[string]any{"type": "number"}}}},
	},
}
