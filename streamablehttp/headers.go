package streamablehttp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/tako-mcp/tako/mcp"
)

// The 2026-07-28 wire repeats parts of the body in headers so that proxies
// and gateways can route without parsing JSON (checklist §4C.2, §4C.3).

// modernInfo is what the headers of a 2026-07-28 request are made of.
type modernInfo struct {
	version string // _meta protocolVersion: "" means not a 2026 request
	name    string // Mcp-Name value, if the method has one
	hasName bool
	args    json.RawMessage // tools/call arguments
}

// metaVersionKey is looked for before parsing, so that legacy traffic pays
// for no JSON decoding here.
var metaVersionKey = []byte(`"` + mcp.MetaProtocolVersion + `"`)

// inspect reads what the headers need from a request's params.
func inspect(msg *mcp.Message) modernInfo {
	var mi modernInfo
	if !msg.IsRequest() || !bytes.Contains(msg.Params, metaVersionKey) {
		return mi
	}
	var p struct {
		Meta struct {
			Version string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
		Name      *string         `json:"name"`
		URI       *string         `json:"uri"`
		TaskID    *string         `json:"taskId"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(msg.Params, &p) != nil || !mcp.IsModernVersion(p.Meta.Version) {
		return mi
	}
	mi.version = p.Meta.Version
	var name *string
	switch msg.Method {
	case mcp.MethodToolsCall, mcp.MethodPromptsGet:
		name = p.Name
	case mcp.MethodResourcesRead:
		name = p.URI
	case "tasks/get", "tasks/update", "tasks/cancel":
		name = p.TaskID
	}
	if name != nil {
		mi.name, mi.hasName = *name, true
	}
	if msg.Method == mcp.MethodToolsCall {
		mi.args = p.Arguments
	}
	return mi
}

// paramHeader is one x-mcp-header annotation of a tool's inputSchema: the
// header Mcp-Param-<name> mirrors the argument at path.
type paramHeader struct {
	name string
	path []string
}

// setParamHeaders adds the Mcp-Param-* headers of one tools/call.
func setParamHeaders(h http.Header, specs []paramHeader, args json.RawMessage) {
	if len(specs) == 0 || len(args) == 0 {
		return
	}
	for _, sp := range specs {
		v, ok := lookupPath(args, sp.path)
		if !ok {
			continue
		}
		s, ok := headerScalar(v)
		if !ok {
			continue
		}
		h.Set("Mcp-Param-"+sp.name, encodeHeaderValue(s))
	}
}

// lookupPath follows object keys from the arguments' root.
func lookupPath(raw json.RawMessage, path []string) (json.RawMessage, bool) {
	for _, key := range path {
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return nil, false
		}
		v, ok := obj[key]
		if !ok {
			return nil, false
		}
		raw = v
	}
	return raw, true
}

// maxSafeInteger is 2^53-1: the largest integer every JSON peer reads
// exactly (checklist §4C.4).
const maxSafeInteger = 1<<53 - 1

// headerScalar turns a JSON string, integer or boolean into its header
// text. null, absence and every other type give no header.
func headerScalar(v json.RawMessage) (string, bool) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "", false
	}
	switch v[0] {
	case '"':
		var s string
		if json.Unmarshal(v, &s) != nil {
			return "", false
		}
		return s, true
	case 't', 'f':
		var b bool
		if json.Unmarshal(v, &b) != nil {
			return "", false
		}
		return strconv.FormatBool(b), true
	case 'n', '{', '[':
		return "", false
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		// 3.0 is an integer in JSON Schema.
		f, ferr := strconv.ParseFloat(string(v), 64)
		if ferr != nil || f != float64(int64(f)) {
			return "", false
		}
		n = int64(f)
	}
	if n > maxSafeInteger || n < -maxSafeInteger {
		return "", false
	}
	return strconv.FormatInt(n, 10), true
}

// encodeHeaderValue applies checklist §4C.3: plain when the value is safe
// visible ASCII (inner spaces allowed), else =?base64?...?=.
func encodeHeaderValue(s string) string {
	if needsBase64(s) {
		return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
	}
	return s
}

func needsBase64(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return true
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return true
		}
	}
	return strings.HasPrefix(strings.ToLower(s), "=?base64?") && strings.HasSuffix(s, "?=")
}

// Validation of x-mcp-header annotations (checklist §4C.4).

// subschemaKeys are the JSON Schema keywords that lead to subschemas other
// than through "properties": an annotation reached through them is invalid.
var subschemaKeys = []string{
	"items", "prefixItems", "additionalProperties", "patternProperties",
	"allOf", "anyOf", "oneOf", "not", "if", "then", "else",
	"$defs", "definitions", "dependentSchemas", "contains",
	"unevaluatedProperties", "unevaluatedItems", "propertyNames",
}

// toolHeaders returns the header annotations of one tool's input schema,
// or an error saying why the tool must be dropped.
func toolHeaders(schema json.RawMessage) ([]paramHeader, error) {
	if len(bytes.TrimSpace(schema)) == 0 || !bytes.Contains(schema, []byte(`"x-mcp-header"`)) {
		return nil, nil
	}
	var specs []paramHeader
	seen := map[string]bool{}
	var walk func(node json.RawMessage, path []string, viaProps bool) error
	walk = func(node json.RawMessage, path []string, viaProps bool) error {
		var obj map[string]json.RawMessage
		if json.Unmarshal(node, &obj) != nil {
			return nil // booleans and other non-object schemas hold no annotation
		}
		if raw, ok := obj["x-mcp-header"]; ok {
			if !viaProps || len(path) == 0 {
				return errors.New("x-mcp-header is reachable only through properties")
			}
			var name string
			if json.Unmarshal(raw, &name) != nil {
				return fmt.Errorf("x-mcp-header of %q is not a string", strings.Join(path, "."))
			}
			if err := checkToken(name); err != nil {
				return fmt.Errorf("x-mcp-header %q of %q: %w", name, strings.Join(path, "."), err)
			}
			if seen[strings.ToLower(name)] {
				return fmt.Errorf("x-mcp-header %q appears twice", name)
			}
			seen[strings.ToLower(name)] = true
			var typ string
			if json.Unmarshal(obj["type"], &typ) != nil || (typ != "string" && typ != "integer" && typ != "boolean") {
				return fmt.Errorf("x-mcp-header %q is on a property of type %s, not string, integer or boolean", name, obj["type"])
			}
			specs = append(specs, paramHeader{name: name, path: append([]string(nil), path...)})
		}
		if raw, ok := obj["properties"]; ok {
			var props map[string]json.RawMessage
			if json.Unmarshal(raw, &props) == nil {
				for k, v := range props {
					if err := walk(v, append(path[:len(path):len(path)], k), viaProps); err != nil {
						return err
					}
				}
			}
		}
		for _, key := range subschemaKeys {
			raw, ok := obj[key]
			if !ok || !bytes.Contains(raw, []byte(`"x-mcp-header"`)) {
				continue
			}
			return fmt.Errorf("x-mcp-header under %q", key)
		}
		return nil
	}
	if err := walk(schema, nil, true); err != nil {
		return nil, err
	}
	return specs, nil
}

// checkToken checks an RFC 9110 token.
func checkToken(s string) error {
	if s == "" {
		return errors.New("empty")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return fmt.Errorf("not an HTTP token (byte %q)", c)
		}
	}
	return nil
}

// filterTools checks every tool of a tools/list result, records the header
// annotations of the valid ones in known, and returns the result without
// the invalid ones (the original bytes when nothing was dropped, so that
// schemas reach the caller untouched).
func filterTools(result json.RawMessage, known map[string][]paramHeader, warn func(tool string, err error)) json.RawMessage {
	if !bytes.Contains(result, []byte(`"x-mcp-header"`)) {
		var r struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		if json.Unmarshal(result, &r) == nil {
			for _, t := range r.Tools {
				delete(known, t.Name)
			}
		}
		return result
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(result, &obj) != nil {
		return result
	}
	var tools []json.RawMessage
	if json.Unmarshal(obj["tools"], &tools) != nil {
		return result
	}
	kept := tools[:0:0]
	for _, raw := range tools {
		var t struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		if json.Unmarshal(raw, &t) != nil {
			kept = append(kept, raw)
			continue
		}
		specs, err := toolHeaders(t.InputSchema)
		if err != nil {
			warn(t.Name, err)
			delete(known, t.Name)
			continue
		}
		if len(specs) > 0 {
			known[t.Name] = specs
		} else {
			delete(known, t.Name)
		}
		kept = append(kept, raw)
	}
	if len(kept) == len(tools) {
		return result
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return result
	}
	obj["tools"] = b
	out, err := json.Marshal(obj)
	if err != nil {
		return result
	}
	return out
}
