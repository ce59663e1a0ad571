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
)

// The 2026-07-28 wire repeats parts of the body in headers so that proxies
// and gateways can route without parsing JSON (checklist §4C.2, §4C.3).

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
