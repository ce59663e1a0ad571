package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// describeTool implements `tako tools NAME`: one tool whole, where the
// table has room for a line: its title, full description, hints, each
// argument with its type, default and description, and the input and
// output schemas as indented JSON. --format json prints the tool as the
// server listed it, byte for byte.
func describeTool(ctx context.Context, t transport.Transport, w io.Writer, name, format string) error {
	if format == "json" || format == "pretty" {
		var list struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if err := transport.Call(ctx, t, mcp.MethodToolsList, nil, &list); err != nil {
			return err
		}
		var names []mcp.Tool
		for _, raw := range list.Tools {
			var tl mcp.Tool
			if json.Unmarshal(raw, &tl) == nil && tl.Name == name {
				return writeRaw(w, raw, format)
			}
			names = append(names, tl)
		}
		return unknownTool(name, names)
	}
	tools, err := t.ListTools(ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(tools, func(tl mcp.Tool) bool { return tl.Name == name })
	if i < 0 {
		return unknownTool(name, tools)
	}
	_, err = w.Write(toolDescription(&tools[i]))
	return err
}

// toolDescription is the text of tako tools NAME.
func toolDescription(tl *mcp.Tool) []byte {
	var b bytes.Buffer
	b.WriteString(signature(tl.Name, toolArgs(tl.InputSchema)))
	if h := hintWords(tl.Annotations); h != "" {
		b.WriteString("  [" + h + "]")
	}
	b.WriteByte('\n')
	title := cleanLine(tl.Title)
	if title == "" && tl.Annotations != nil {
		title = cleanLine(tl.Annotations.Title)
	}
	if title != "" {
		b.WriteString(title + "\n")
	}
	if d := strings.TrimSpace(tl.Description); d != "" {
		b.WriteByte('\n')
		for l := range strings.SplitSeq(d, "\n") {
			b.WriteString(strings.TrimRight(cleanText(l), " ") + "\n")
		}
	}
	if args := argumentLines(tl.InputSchema); len(args) > 0 {
		b.WriteString("\nArguments:\n")
		for _, l := range args {
			b.WriteString("  " + l + "\n")
		}
	}
	for _, s := range []struct {
		title  string
		schema json.RawMessage
	}{{"Input schema", tl.InputSchema}, {"Output schema", tl.OutputSchema}} {
		if len(bytes.TrimSpace(s.schema)) == 0 {
			continue
		}
		var ind bytes.Buffer
		if json.Indent(&ind, s.schema, "  ", "  ") != nil {
			continue
		}
		b.WriteString("\n" + s.title + ":\n  ")
		b.Write(escapeUnprintable(ind.Bytes()))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// hintWords spells out the annotations a server declared true.
func hintWords(a *mcp.ToolAnnotations) string {
	if a == nil {
		return ""
	}
	var w []string
	for _, h := range []struct {
		v    *bool
		name string
	}{{a.ReadOnlyHint, "read-only"}, {a.DestructiveHint, "destructive"}, {a.IdempotentHint, "idempotent"}, {a.OpenWorldHint, "open world"}} {
		if h.v != nil && *h.v {
			w = append(w, h.name)
		}
	}
	return strings.Join(w, ", ")
}

// argProperty is what the argument list shows of a property.
type argProperty struct {
	Type        json.RawMessage   `json:"type"`
	Description string            `json:"description"`
	Default     json.RawMessage   `json:"default"`
	Enum        []json.RawMessage `json:"enum"`
}

// argumentLines lists a schema's properties in the schema's order, one
// line each: name, type, required or default, choices, description.
func argumentLines(schema json.RawMessage) []string {
	var s struct {
		Properties map[string]argProperty `json:"properties"`
		Required   []string               `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	args := toolArgs(schema)
	width := 0
	for _, a := range args {
		width = max(width, len([]rune(cleanLine(a.name))))
	}
	var lines []string
	for _, a := range args {
		p := s.Properties[a.name]
		var notes []string
		if ts := (propSchema{Type: p.Type}).types(); len(ts) > 0 {
			notes = append(notes, strings.Join(ts, " or "))
		}
		if a.required {
			notes = append(notes, "required")
		}
		if len(p.Default) > 0 {
			notes = append(notes, "default "+cleanLine(compactJSON(p.Default)))
		}
		if len(p.Enum) > 0 {
			vals := make([]string, len(p.Enum))
			for i, v := range p.Enum {
				vals[i] = cleanLine(compactJSON(v))
			}
			notes = append(notes, "one of "+strings.Join(vals, ", "))
		}
		n := cleanLine(a.name)
		line := n + strings.Repeat(" ", width-len([]rune(n))) + "  (" + strings.Join(notes, "; ") + ")"
		if d := summary("", "", p.Description); d != "" {
			line += " " + d
		}
		lines = append(lines, line)
	}
	return lines
}

// escapeUnprintable writes every unprintable rune of indented JSON but
// the newlines and spaces of its layout as a \u escape: inside a string
// that is the same JSON, and a terminal shows it rather than obeys it
// (U+009B, for one, starts an escape sequence).
func escapeUnprintable(b []byte) []byte {
	var out bytes.Buffer
	for _, r := range string(b) {
		switch {
		case r == '\n' || r == ' ' || unicode.IsPrint(r):
			out.WriteRune(r)
		case r > 0xFFFF:
			out.WriteString(fmt.Sprintf(`\u%04x`, 0xD800+((r-0x10000)>>10)))
			out.WriteString(fmt.Sprintf(`\u%04x`, 0xDC00+((r-0x10000)&0x3FF)))
		default:
			out.WriteString(fmt.Sprintf(`\u%04x`, r))
		}
	}
	return out.Bytes()
}
