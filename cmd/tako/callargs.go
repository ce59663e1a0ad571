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
	// Default is the value the server assumes when the argument is left
	// out; nil when the schema gives none.
	Default json.RawMessage `json:"default"`
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

// callInput is what the command line gave as a call's arguments: one JSON
// object, KEY=VALUE pairs, one word that is neither (a mistake, worded
// once the tool's schema can say what was meant), or nothing.
type callInput struct {
	json  json.RawMessage
	pairs []string
	bare  string
}

// typedArguments turns KEY=VALUE pairs into the JSON object of a call to
// tool, as toolArguments does.
func typedArguments(tool string, schema json.RawMessage, pairs []string) (json.RawMessage, error) {
	return toolArguments(tool, schema, callInput{pairs: pairs})
}

// toolArguments is the one rule of a call's arguments, whichever way they
// were given (doc.go, "call"): each KEY=VALUE is typed as the tool's input
// schema says (integer, number and boolean parsed, string as typed, array
// and object given as JSON); a required argument left out that has a
// default in the schema gets that default; and a key the schema forbids, a
// value that does not fit, or a required argument still missing is a usage
// error, every missing one named at once. A JSON object given whole is
// sent as typed, byte for byte, unless a default was filled in.
func toolArguments(tool string, schema json.RawMessage, in callInput) (json.RawMessage, error) {
	var s inputSchema
	if len(schema) > 0 {
		if err := json.Unmarshal(schema, &s); err != nil {
			if in.pairs == nil && in.bare == "" {
				return orEmpty(in.json), nil // the server checks what it can read
			}
			return nil, fmt.Errorf("the input schema of tool %q is not a JSON object: %v: give the arguments as one JSON object", tool, err)
		}
	}
	if in.bare != "" {
		return nil, bareArgument(tool, s, in.bare)
	}
	closed := bytes.Equal(bytes.TrimSpace(s.AdditionalProperties), []byte("false"))
	obj := map[string]json.RawMessage{}
	if in.json != nil {
		if err := json.Unmarshal(in.json, &obj); err != nil {
			return nil, usagef("the arguments must be one JSON object: %v", err)
		}
	}
	for _, pair := range in.pairs {
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
	filled := false
	var missing []string
	for _, r := range s.Required {
		if _, ok := obj[r]; ok {
			continue
		}
		if d := s.Properties[r].Default; len(d) > 0 {
			obj[r], filled = d, true
			continue
		}
		if !slices.Contains(missing, r) {
			missing = append(missing, r)
		}
	}
	switch len(missing) {
	case 0:
	case 1:
		return nil, usagef("tool %q needs the argument %s=...; it takes %s", tool, missing[0], argList(s))
	default:
		return nil, usagef("tool %q needs the arguments %s=...; it takes %s", tool, strings.Join(missing, "=... "), argList(s))
	}
	if in.json != nil && !filled {
		return in.json, nil
	}
	return json.Marshal(obj)
}

func orEmpty(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return json.RawMessage("{}")
	}
	return raw
}

// bareArgument is the error for a lone word where KEY=VALUE pairs or a
// JSON object belong ("call echo hi"): it suggests the pair meant when the
// tool has one argument to give.
func bareArgument(tool string, s inputSchema, word string) error {
	key := ""
	switch {
	case len(s.Required) == 1:
		key = s.Required[0]
	case len(s.Properties) == 1:
		for k := range s.Properties {
			key = k
		}
	}
	if key != "" {
		return usagef("call takes KEY=VALUE pairs or one JSON object, not %q: did you mean %s=%s?", truncate(word, 40), key, quoteWord(truncate(word, 40)))
	}
	return usagef("call takes KEY=VALUE pairs or one JSON object, not %q; tool %q takes %s", truncate(word, 40), tool, argList(s))
}

// quoteWord quotes w for a shell when it holds anything a shell would
// split or expand.
func quoteWord(w string) string {
	if w != "" && !strings.ContainsAny(w, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return w
	}
	return shellQuote(w)
}

// shellQuote quotes s for splitCommand (and a POSIX shell).
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
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

// unknownTool is the usage error for a tool the server does not list,
// with the nearest names when one looks like a typo of it.
func unknownTool(name string, tools []mcp.Tool) error {
	if len(tools) == 0 {
		return usagef("the server has no tools, so no tool %q", name)
	}
	var near []string
	for _, t := range tools {
		if d := editDistance(strings.ToLower(name), strings.ToLower(t.Name)); d <= max(1, len([]rune(name))/4) ||
			strings.Contains(strings.ToLower(t.Name), strings.ToLower(name)) {
			near = append(near, cleanLine(t.Name))
		}
	}
	if len(near) > 0 && len(near) <= 3 {
		return usagef("the server has no tool %q; did you mean %s? (tako tools lists them)", name, strings.Join(near, " or "))
	}
	return usagef("the server has no tool %q (tako tools lists its %d tools)", name, len(tools))
}

// editDistance is the number of edits (a rune inserted, deleted or
// changed, two neighbours swapped) between a and b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
