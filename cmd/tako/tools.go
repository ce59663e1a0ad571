package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// tableWidth is the width the tools table fits in: a little more than the
// classic 80 columns, which every terminal has nowadays.
const tableWidth = 100

// toolsCommand implements `tako tools`.
func toolsCommand(inv *invocation) (operation, error) {
	if len(inv.args) > 0 {
		return nil, usagef("tools takes no arguments, got %q", inv.args[0])
	}
	return func(ctx context.Context, s *transport.Session, stdout io.Writer) error {
		if inv.opts.json {
			tools, err := listToolsRaw(ctx, s)
			if err != nil {
				return err
			}
			return writeToolsJSON(stdout, tools)
		}
		tools, err := s.ListTools(ctx)
		if err != nil {
			return err
		}
		return writeToolTable(stdout, tools)
	}, nil
}

// maxPages bounds a listing, as the engine's own ListTools does, so that a
// server that hands out new cursors forever cannot fill memory before the
// timeout.
const maxPages = 10000

// listToolsRaw fetches every page of tools/list and returns the tool
// objects as the server sent them. It does not go through mcp.Tool, so a
// field tako does not model, or a schema keyword in an unusual spelling,
// reaches --json output byte for byte. It follows the rules of the engine's
// ListTools: no tools capability means no tools, and only an absent
// nextCursor ends the list (or an empty one, before 2026-07-28).
func listToolsRaw(ctx context.Context, s *transport.Session) ([]json.RawMessage, error) {
	info := s.ServerInfo()
	if info.Capabilities.Tools == nil {
		return nil, nil
	}
	modern := mcp.IsModernVersion(info.ProtocolVersion)
	var (
		all    []json.RawMessage
		params any // nil for the first page, as the engine sends it
		seen   = make(map[string]bool)
	)
	for range maxPages {
		var raw json.RawMessage
		if err := s.Call(ctx, mcp.MethodToolsList, params, &raw); err != nil {
			return nil, err
		}
		var page struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor *string           `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, fmt.Errorf("malformed result: %v: %w", err, transport.ErrProtocol)
		}
		all = append(all, page.Tools...)
		next := page.NextCursor
		if next == nil || (!modern && *next == "") {
			return all, nil
		}
		if seen[*next] {
			return nil, fmt.Errorf("server returned cursor %q twice: %w", *next, transport.ErrProtocol)
		}
		seen[*next] = true
		params = &mcp.ListToolsParams{Cursor: next}
	}
	return nil, fmt.Errorf("more than %d pages: %w", maxPages, transport.ErrProtocol)
}

// writeToolsJSON prints {"tools":[...]} on one line, the tool objects
// copied unchanged; pipe it to jq to read it.
func writeToolsJSON(w io.Writer, tools []json.RawMessage) error {
	var b bytes.Buffer
	b.WriteString(`{"tools":[`)
	for i, t := range tools {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(t)
	}
	b.WriteString("]}\n")
	_, err := w.Write(b.Bytes())
	return err
}

// writeToolTable prints the tools as three columns: name, hints and a
// one-line summary. Names are never shortened (they are what `tako call`
// needs); summaries are cut to fit tableWidth. Everything the server sent is
// cleaned of control characters, so a hostile description cannot move the
// cursor or change the terminal's colours.
func writeToolTable(w io.Writer, tools []mcp.Tool) error {
	if len(tools) == 0 {
		_, err := io.WriteString(w, "(the server has no tools)\n")
		return err
	}
	const hintsHeader = "HINTS"
	nameWidth := len("NAME")
	names := make([]string, len(tools))
	for i := range tools {
		names[i] = cleanLine(tools[i].Name)
		nameWidth = max(nameWidth, utf8.RuneCountInString(names[i]))
	}
	summaryWidth := max(tableWidth-nameWidth-len(hintsHeader)-4, 20)

	var b bytes.Buffer
	row := func(name, hints, summary string) {
		line := name + strings.Repeat(" ", nameWidth-utf8.RuneCountInString(name)+2) +
			hints + strings.Repeat(" ", len(hintsHeader)-len(hints)+2) +
			truncate(summary, summaryWidth)
		b.WriteString(strings.TrimRight(line, " "))
		b.WriteByte('\n')
	}
	row("NAME", hintsHeader, "DESCRIPTION")
	for i := range tools {
		row(names[i], hintFlags(tools[i].Annotations), toolSummary(&tools[i]))
	}
	_, err := w.Write(b.Bytes())
	return err
}

// toolSummary is the tool's title, or else the first non-blank line of its
// description; both, as "Title: line", when the server gave both and they
// differ (a title is often a word, "Echo", and the description is what
// tells tools apart).
func toolSummary(t *mcp.Tool) string {
	title := cleanLine(t.Title)
	if title == "" && t.Annotations != nil {
		title = cleanLine(t.Annotations.Title)
	}
	var line string
	for l := range strings.SplitSeq(t.Description, "\n") {
		if line = cleanLine(l); line != "" {
			break
		}
	}
	switch {
	case title == "":
		return line
	case line == "" || line == title:
		return title
	}
	return title + ": " + line
}

// hintFlags shows the annotations a server declared true as four fixed
// columns (r read-only, d destructive, i idempotent, o open world), and
// nothing when the tool has no annotations. Absent hints show as "-" and
// not as the spec's defaults: the column tells what the server said.
func hintFlags(a *mcp.ToolAnnotations) string {
	if a == nil {
		return ""
	}
	flag := func(h *bool, c byte) byte {
		if h != nil && *h {
			return c
		}
		return '-'
	}
	return string([]byte{
		flag(a.ReadOnlyHint, 'r'),
		flag(a.DestructiveHint, 'd'),
		flag(a.IdempotentHint, 'i'),
		flag(a.OpenWorldHint, 'o'),
	})
}

// cleanLine makes s safe and tidy for one table cell: control characters
// (escape sequences, tabs, carriage returns) and other unprintable runes
// become spaces, runs of blanks collapse to one, and the ends are trimmed.
func cleanLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if !unicode.IsPrint(r) {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// truncate cuts s to at most n runes, ending with an ellipsis when it cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:n-1]), " ") + "…"
}
