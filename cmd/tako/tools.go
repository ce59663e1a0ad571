package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// minSummary is the fewest columns a table's last column is cut to, on a
// terminal too narrow for the others.
const minSummary = 20

// toolsCommand implements `tako tools`.
func toolsCommand(inv *invocation) (operation, error) {
	switch {
	case len(inv.args) > 1:
		return nil, usagef("tools takes at most one tool name, got %d arguments (tako tools NAME describes one)", len(inv.args))
	case len(inv.args) == 1:
		name := inv.args[0]
		return func(ctx context.Context, t transport.Transport, stdout, _ io.Writer) error {
			return describeTool(ctx, t, stdout, name, inv.opts.format)
		}, nil
	}
	return func(ctx context.Context, t transport.Transport, stdout, _ io.Writer) error {
		if inv.opts.raw() {
			return writeList(ctx, t, stdout, mcp.MethodToolsList, t.ServerInfo().Capabilities.Tools != nil, inv.opts.format)
		}
		tools, err := t.ListTools(ctx)
		if err != nil && !notOffered(err) {
			return err
		}
		return writeToolTable(stdout, tools)
	}, nil
}

// writeToolTable prints the tools as three columns: name, hints and a
// one-line summary. Names are never shortened (they are what `tako call`
// needs); summaries are cut to fit the terminal (outputWidth), and not at
// all when w is not one. Everything the server sent is cleaned of control
// characters, so a hostile description cannot move the cursor or change
// the terminal's colours.
func writeToolTable(w io.Writer, tools []mcp.Tool) error {
	if len(tools) == 0 {
		_, err := io.WriteString(w, "(the server has no tools)\n")
		return err
	}
	const hintsHeader = "HINTS"
	nameWidth := len("NAME")
	names := make([]string, len(tools))
	for i := range tools {
		names[i] = signature(tools[i].Name, toolArgs(tools[i].InputSchema))
		nameWidth = max(nameWidth, utf8.RuneCountInString(names[i]))
	}
	summaryWidth := 0 // no bound
	if width := outputWidth(w); width > 0 {
		summaryWidth = max(width-nameWidth-len(hintsHeader)-4, minSummary)
	}

	var b bytes.Buffer
	row := func(name, hints, summary string) {
		line := name + strings.Repeat(" ", nameWidth-utf8.RuneCountInString(name)+2) +
			hints + strings.Repeat(" ", len(hintsHeader)-len(hints)+2) +
			fit(summary, summaryWidth)
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
