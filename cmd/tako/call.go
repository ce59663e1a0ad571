package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// callCommand implements `tako call NAME [ARGUMENTS]`, where ARGUMENTS is
// one JSON object or KEY=VALUE pairs. What can be checked without the
// server (the JSON, the shape of the pairs) is checked here, before any
// server starts, so that a typo costs nothing; the rest once the tool's
// input schema is known (toolArguments).
func callCommand(inv *invocation) (operation, error) {
	if len(inv.args) == 0 {
		return nil, usagef("call needs a tool name: tako call NAME [KEY=VALUE ... | JSON] (tako tools lists them)")
	}
	name, rest := inv.args[0], inv.args[1:]
	if name == "" {
		return nil, usagef("call needs a non-empty tool name")
	}
	var in callInput
	switch {
	case len(rest) == 1 && strings.HasPrefix(strings.TrimSpace(rest[0]), "{"),
		len(rest) == 1 && strings.HasPrefix(strings.TrimSpace(rest[0]), "["):
		var err error
		if in.json, err = parseArguments(rest[0]); err != nil {
			return nil, err
		}
	case len(rest) == 1 && !strings.Contains(rest[0], "="):
		// "call echo hi": worded once the schema says what was meant.
		in.bare = rest[0]
	case len(rest) > 0:
		for _, a := range rest {
			if k, _, ok := strings.Cut(a, "="); !ok || k == "" {
				if strings.ContainsAny(a, "{}[]") {
					return nil, usagef("call takes a tool name and one JSON object or KEY=VALUE pairs, got %d arguments (quote the JSON)", len(rest))
				}
				return nil, usagef("call wants KEY=VALUE pairs or one JSON object, not %q", truncate(a, 40))
			}
		}
		in.pairs = rest
	}
	return func(ctx context.Context, t transport.Transport, stdout, stderr io.Writer) error {
		// The tool is looked up whichever way the arguments came, so that
		// an unknown name or a missing argument is the same usage error
		// (exit status 2) with or without them.
		tools, err := t.ListTools(ctx)
		if err != nil {
			return &stageError{stage: mcp.MethodToolsList, err: err}
		}
		i := slices.IndexFunc(tools, func(tl mcp.Tool) bool { return tl.Name == name })
		if i < 0 {
			return unknownTool(name, tools)
		}
		params := &mcp.CallToolParams{Name: name}
		if params.Arguments, err = toolArguments(name, tools[i].InputSchema, in); err != nil {
			return err
		}
		ctx = transport.WithProgress(ctx, func(p mcp.ProgressParams) { printProgress(stderr, p) })
		if inv.opts.raw() {
			// Raw, so that the output is the result as the protocol has
			// it, fields tako does not model included.
			var raw json.RawMessage
			if err := transport.Call(ctx, t, mcp.MethodToolsCall, params, &raw); err != nil {
				return err
			}
			var flag struct {
				IsError bool `json:"isError"`
			}
			if err := json.Unmarshal(raw, &flag); err != nil {
				return fmt.Errorf("malformed result: %v: %w", err, transport.ErrProtocol)
			}
			if err := writeRaw(stdout, raw, inv.opts.format); err != nil {
				return err
			}
			if flag.IsError {
				return &toolError{name: name}
			}
			return nil
		}
		res, err := t.CallTool(ctx, params)
		if err != nil {
			return err
		}
		if err := writeContent(stdout, res); err != nil {
			return err
		}
		if res.IsError {
			return &toolError{name: name}
		}
		return nil
	}, nil
}

// parseArguments checks that s is one JSON object and returns it compacted
// (stdio frames messages by lines, so a pretty-printed argument must lose
// its newlines somewhere; doing it here keeps the error on the command line).
func parseArguments(s string) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return nil, usagef("the arguments are not valid JSON: %v", err)
	}
	if b.Len() == 0 || b.Bytes()[0] != '{' {
		return nil, usagef("the arguments must be a JSON object such as '{\"key\":1}', not %s", truncate(b.String(), 40))
	}
	return b.Bytes(), nil
}

// writeContent prints a call result for a person: each content block on
// its own line(s), and the structured content as indented JSON when no
// block carried text (servers are asked to mirror it in a text block, and
// printing both would show everything twice).
func writeContent(w io.Writer, r *mcp.CallToolResult) error {
	var b bytes.Buffer
	text := func(s string) {
		s = showText(s) // a person reads it: no escape sequences reach the terminal
		b.WriteString(s)
		if !strings.HasSuffix(s, "\n") {
			b.WriteByte('\n')
		}
	}
	hasText := false
	for i := range r.Content {
		c := &r.Content[i]
		switch c.Type {
		case mcp.ContentText:
			text(c.Text)
			hasText = true
		case mcp.ContentImage, mcp.ContentAudio:
			fmt.Fprintf(&b, "[%s %s, %d bytes]\n", c.Type, orUnknown(c.MIMEType), c.Data.Size())
		case mcp.ContentResourceLink:
			if c.Link != nil {
				text(cleanLine(c.Link.URI))
			}
		case mcp.ContentResource:
			switch res := c.Resource; {
			case res == nil:
				b.WriteString("[resource without contents]\n")
			case res.Text != nil:
				text(*res.Text)
				hasText = true
			case res.Blob != nil:
				fmt.Fprintf(&b, "[resource %s %s, %d bytes]\n", cleanLine(res.URI), orUnknown(res.MIMEType), res.Blob.Size())
			default:
				fmt.Fprintf(&b, "[resource %s without text or blob]\n", cleanLine(res.URI))
			}
		default:
			fmt.Fprintf(&b, "[%s block]\n", cleanLine(c.Type))
		}
	}
	if !hasText {
		if s := bytes.TrimSpace(r.StructuredContent); len(s) > 0 && !bytes.Equal(s, []byte("null")) {
			var ind bytes.Buffer
			if err := json.Indent(&ind, s, "", "  "); err != nil {
				b.WriteString(showText(string(s))) // not JSON after all: show it as it came
			} else {
				b.Write(escapeUnprintable(ind.Bytes()))
			}
			b.WriteByte('\n')
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

func orUnknown(mime string) string {
	if mime = cleanLine(mime); mime == "" {
		return "(no MIME type)"
	}
	return mime
}

// toolError is a call whose result has isError set: the tool ran and
// failed. tako exits with status 1.
type toolError struct{ name string }

func (e *toolError) Error() string { return fmt.Sprintf("tool %q reported an error", e.name) }
