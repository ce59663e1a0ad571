package mcp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// everyKeywordInputSchema uses every JSON Schema 2020-12 keyword the
// conformance suite and the spec care about, vendor keywords, an odd key
// order (type after $defs, required last), mixed white space (tabs, CRLF,
// runs of spaces), escapes that a decoder would normalise (\u00e9, \/), and
// number literals that a float round trip would change (1.50, -0, 1e2).
var everyKeywordInputSchema = strings.Join([]string{
	"{",
	`    "$schema": "https://json-schema.org/draft/2020-12/schema",`,
	"  \"$id\":\"https://example.com/schemas/order\",\r",
	`  "$defs": {`,
	`      "address": { "$anchor": "addr", "type": "object",`,
	"\t\t\"properties\": {\"street\": {\"type\": \"string\"}, \"zip\": {\"type\":\"string\",\"pattern\":\"^[0-9]{5}$\"}},",
	`        "required": ["street"] },`,
	`      "node": {"$dynamicAnchor": "node", "type": "object", "properties": {"children": {"type":"array","items":{"$dynamicRef":"#node"}}}}`,
	`  },`,
	"\t\"type\" :   \"object\",",
	`  "properties": {`,
	`    "shipTo": {"$ref": "#/$defs/address"},`,
	`    "billTo": {"$ref": "#addr"},`,
	`    "tree": {"$dynamicRef": "#node"},`,
	`    "kind": {"const": "order"},`,
	`    "priority": {"enum": ["low", "normal", "high", null, 1.50, -0, 1e2]},`,
	`    "region": {"type": "string", "x-mcp-header": "Region"},`,
	`    "coords": {"type": "array", "prefixItems": [{"type":"number"},{"type":"number"}], "items": false},`,
	`    "payment": {`,
	`      "allOf": [{"type":"object"}],`,
	`      "anyOf": [{"required":["card"]},{"required":["iban"]}],`,
	`      "oneOf": [{"properties":{"card":{"type":"string"}}},{"properties":{"iban":{"type":"string"}}}],`,
	`      "not": {"required": ["cash"]}`,
	`    },`,
	`    "note": {"type": "string", "description": "caf\u00e9 \"quoted\" \\ back\/slash ☕ 🚀"}`,
	`  },`,
	`  "if": {"properties": {"kind": {"const": "express"}}},`,
	`  "then": {"required": ["priority"]},`,
	`  "else": {"required": []},`,
	`  "dependentSchemas": {"billTo": {"required": ["shipTo"]}},`,
	`  "patternProperties": {"^x-": {"type": "string"}},`,
	`  "additionalProperties": false,`,
	`  "unevaluatedProperties": false,`,
	`  "x-vendor-extension": {"z": 1, "a": 2},`,
	`  "required": ["shipTo","kind"]`,
	"}",
}, "\n")

var everyKeywordOutputSchema = "{ \"type\":\"object\",\r\n \"properties\":{\"total\":{\"type\":\"number\",\"minimum\":0.00}," +
	"\"items\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/line\"},\"minItems\":1}}," +
	"\"$defs\":{\"line\":{\"type\":\"object\",\"unevaluatedProperties\":false}},\n\t\"required\":[\"total\"] }"

// toolsListWire is a tools/list response as a server might send it: pretty
// printed, with the schemas above inside.
func toolsListWire() []byte {
	return []byte("{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 2,\n  \"result\": {\n    \"tools\": [\n      {\n" +
		"        \"name\": \"json_schema_2020_12_tool\",\n" +
		"        \"inputSchema\": " + everyKeywordInputSchema + ",\n" +
		"        \"outputSchema\": " + everyKeywordOutputSchema + "\n" +
		"      }\n    ]\n  }\n}\n")
}

func compactString(t *testing.T, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(s)); err != nil {
		t.Fatalf("test schema is not JSON: %v", err)
	}
	return buf.Bytes()
}

// TestSchemaPreservation checks the promise of Tool's doc comment: a tool's
// schemas reach the caller byte for byte as the server sent them, and go
// back out with their keys, escapes and numbers untouched (white space
// removed, as one-line framing requires).
func TestSchemaPreservation(t *testing.T) {
	m, err := DecodeMessage(toolsListWire())
	if err != nil {
		t.Fatal(err)
	}
	var res ListToolsResult
	if err := json.Unmarshal(m.Result, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 1 {
		t.Fatalf("got %d tools", len(res.Tools))
	}
	tool := res.Tools[0]

	t.Run("decode keeps the exact bytes", func(t *testing.T) {
		if string(tool.InputSchema) != everyKeywordInputSchema {
			t.Errorf("inputSchema changed on decode:\n got %q\nwant %q", tool.InputSchema, everyKeywordInputSchema)
		}
		if string(tool.OutputSchema) != everyKeywordOutputSchema {
			t.Errorf("outputSchema changed on decode:\n got %q\nwant %q", tool.OutputSchema, everyKeywordOutputSchema)
		}
	})

	wantIn := compactString(t, everyKeywordInputSchema)
	wantOut := compactString(t, everyKeywordOutputSchema)

	reDecode := func(t *testing.T, b []byte) Tool {
		t.Helper()
		var again ListToolsResult
		if err := json.Unmarshal(b, &again); err != nil {
			t.Fatalf("re-encoded result does not decode: %v\n%s", err, b)
		}
		return again.Tools[0]
	}

	t.Run("json.Marshal of the result", func(t *testing.T) {
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		again := reDecode(t, b)
		if !bytes.Equal(again.InputSchema, wantIn) {
			t.Errorf("inputSchema after re-encode:\n got %s\nwant %s", again.InputSchema, wantIn)
		}
		if !bytes.Equal(again.OutputSchema, wantOut) {
			t.Errorf("outputSchema after re-encode:\n got %s\nwant %s", again.OutputSchema, wantOut)
		}
		if !bytes.Contains(b, wantIn) {
			t.Errorf("encoded result does not contain the schema bytes verbatim")
		}
	})

	t.Run("as a result in a message", func(t *testing.T) {
		raw, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := NewResponse(Int64ID(2), json.RawMessage(raw), nil)
		if err != nil {
			t.Fatal(err)
		}
		line := resp.AppendJSON(nil)
		if bytes.ContainsAny(line, "\r\n") {
			t.Fatalf("framed message contains a line break: %q", line)
		}
		m2, err := DecodeMessage(line)
		if err != nil {
			t.Fatal(err)
		}
		if again := reDecode(t, m2.Result); !bytes.Equal(again.InputSchema, wantIn) {
			t.Errorf("inputSchema through a message:\n got %s\nwant %s", again.InputSchema, wantIn)
		}
	})

	t.Run("echoed as a tools/call argument", func(t *testing.T) {
		// The conformance scenario json-schema-2020-12-preservation calls
		// json_schema_echo with {schema: <the observed inputSchema>}.
		args, err := json.Marshal(map[string]json.RawMessage{"schema": tool.InputSchema})
		if err != nil {
			t.Fatal(err)
		}
		req, err := NewRequest(Int64ID(3), MethodToolsCall, &CallToolParams{Name: "json_schema_echo", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		m3, err := DecodeMessage(req.AppendJSON(nil))
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Arguments struct {
				Schema json.RawMessage `json:"schema"`
			} `json:"arguments"`
		}
		if err := json.Unmarshal(m3.Params, &p); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(p.Arguments.Schema, wantIn) {
			t.Errorf("echoed schema:\n got %s\nwant %s", p.Arguments.Schema, wantIn)
		}
	})

	t.Run("html characters with SetEscapeHTML(false)", func(t *testing.T) {
		// json.Marshal escapes <, > and & (the meaning is the same); an
		// encoder told not to must get the schema's bytes unchanged, which
		// requires the MarshalJSON methods on the way to defer to it.
		schema := `{"type":"string","pattern":"^<[a-z]+>&$","x-mcp-header":"A&B"}`
		in := ListToolsResult{Tools: []Tool{{Name: "h", InputSchema: json.RawMessage(schema)}}}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(in); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), schema) {
			t.Errorf("schema not verbatim in %s", buf.String())
		}
		std, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		if again := reDecode(t, std); !jsonEqual(t, again.InputSchema, []byte(schema)) {
			t.Errorf("json.Marshal changed the schema's meaning: %s", again.InputSchema)
		}
	})

	t.Run("x-mcp-header stays reachable", func(t *testing.T) {
		var s struct {
			Properties map[string]map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(tool.InputSchema, &s); err != nil {
			t.Fatal(err)
		}
		if got := string(s.Properties["region"]["x-mcp-header"]); got != `"Region"` {
			t.Errorf("x-mcp-header = %s", got)
		}
	})
}

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("not JSON: %s", a)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("not JSON: %s", b)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}
