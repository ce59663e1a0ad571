package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/tako-mcp/tako/mcp"
)

// propSchema is what tako reads of one property of a tool's input schema
// to type a KEY=VALUE argument.
type propSchema struct {
	// Type is a JSON Schema type name or a list of them.
	Type json.RawMessage `json:"type"`
}

// inputSchema is what tako reads of a tool's input schema.
type inputSchema struct {
	Properties           map[string]propSchema `json:"properties"`
	Required             []string              `json:"required"`
	AdditionalProperties json.RawMessage       `json:"additionalProperties"`
}

// types returns the type names a property allows, "null" left out (a
// value typed on the command line is never null).
func (p propSchema) types() []string {
	var one string
	if json.Unmarshal(p.Type, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(p.Type, &many)
	return slices.DeleteFunc(many, func(s string) bool { return s == "null" })
}

// typedArguments turns KEY=VALUE pairs into the JSON object of a call to
// tool, each value typed as the tool's input schema says: integer, number
// and boolean parsed, string as typed, array and object given as JSON. A
// value that does not fit, or a key the schema forbids, is a usage error
// that names the type wanted.
func typedArguments(tool string, schema json.RawMessage, pairs []string) (json.RawMessage, error) {
	var s inputSchema
	if len(schema) > 0 {
		if err := json.Unmarshal(schema, &s); err != nil {
			return nil, fmt.Errorf("the input schema of tool %q is not a JSON object: %v: give the arguments as one JSON object", tool, err)
		}
	}
	closed := bytes.Equal(bytes.TrimSpace(s.AdditionalProperties), []byte("false"))
	obj := make(map[string]json.RawMessage, len(pairs))
	for _, pair := range pairs {
		k, v, _ := strings.Cut(pair, "=")
		prop, known := s.Properties[k]
		if !known && closed {
			return nil, usagef("tool %q has no argument %q; it takes %s", tool, k, argList(s))
		}
		val, err := typedValue(prop.types(), v)
		if err != nil {
			return nil, usagef("argument %s of tool %q: %v", k, tool, err)
		}
		obj[k] = val
	}
	for _, r := range s.Required {
		if _, ok := obj[r]; !ok {
			return nil, usagef("tool %q needs the argument %s=...; it takes %s", tool, r, argList(s))
		}
	}
	return json.Marshal(obj)
}

// typedValue encodes v as the first of types it fits, or as a string when
// the schema gives no type.
func typedValue(types []string, v string) (json.RawMessage, error) {
	if len(types) == 0 {
		return json.Marshal(v)
	}
	for _, t := range types {
		switch t {
		case "string":
			return json.Marshal(v)
		case "integer":
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				return json.Marshal(n)
			}
		case "number":
			if f, err := strconv.ParseFloat(v, 64); err == nil && !strings.ContainsAny(v, "xXpP_") {
				return json.RawMessage(strconv.FormatFloat(f, 'g', -1, 64)), nil
			}
		case "boolean":
			if b, err := strconv.ParseBool(v); err == nil {
				return json.Marshal(b)
			}
		case "array", "object":
			var b bytes.Buffer
			open := map[string]byte{"array": '[', "object": '{'}[t]
			if json.Compact(&b, []byte(v)) == nil && b.Len() > 0 && b.Bytes()[0] == open {
				return b.Bytes(), nil
			}
		}
	}
	want := strings.Join(types, " or ")
	switch types[0] {
	case "array":
		want = "an array as JSON, such as '[1,2]'"
	case "object":
		want = `an object as JSON, such as '{"k":1}'`
	case "integer":
		want = "an integer"
	case "number":
		want = "a number"
	case "boolean":
		want = "true or false"
	}
	return nil, fmt.Errorf("want %s, not %q", want, truncate(v, 40))
}

// argList names the arguments a schema declares, for a message.
func argList(s inputSchema) string {
	if len(s.Properties) == 0 {
		return "no arguments"
	}
	args := make([]argName, 0, len(s.Properties))
	for k := range s.Properties {
		args = append(args, argName{name: k, required: slices.Contains(s.Required, k)})
	}
	slices.SortFunc(args, func(a, b argName) int { return strings.Compare(a.name, b.name) })
	return signature("", args)
}

// toolArgs lists a tool's arguments in the order its schema's properties
// come, required ones marked, for the tools table.
func toolArgs(schema json.RawMessage) []argName {
	var s inputSchema
	if json.Unmarshal(schema, &s) != nil || len(s.Properties) == 0 {
		return nil
	}
	// Go maps lose the schema's order, so read the keys again in order.
	var ordered struct {
		Properties orderedKeys `json:"properties"`
	}
	_ = json.Unmarshal(schema, &ordered)
	args := make([]argName, 0, len(ordered.Properties))
	for _, k := range ordered.Properties {
		args = append(args, argName{name: k, required: slices.Contains(s.Required, k)})
	}
	return args
}

// orderedKeys decodes the keys of a JSON object in the order they come.
type orderedKeys []string

func (o *orderedKeys) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		return err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		k, _ := tok.(string)
		*o = append(*o, k)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return err
		}
	}
	return nil
}

// printProgress shows one progress notification of a call on stderr.
func printProgress(w io.Writer, p mcp.ProgressParams) {
	fmt.Fprintln(w, "progress "+progressText(p))
}

// progressText is a progress notification in a few words: "2/5: message".
func progressText(p mcp.ProgressParams) string {
	line := strconv.FormatFloat(p.Progress, 'f', -1, 64)
	if p.Total != nil {
		line += "/" + strconv.FormatFloat(*p.Total, 'f', -1, 64)
	}
	if m := cleanLine(p.Message); m != "" {
		line += ": " + truncate(m, 200)
	}
	return line
}
