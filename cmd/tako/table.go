package main

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"
)

// writeTable prints rows under header in columns two spaces apart. Every
// column but the last is as wide as its widest cell and never cut (a URI
// or a name is what the next command needs); the last is cut to fit the
// terminal, and not at all when w is not one (outputWidth). Cells must
// already be clean (cleanLine). With no rows it prints empty instead.
func writeTable(w io.Writer, empty string, header []string, rows [][]string) error {
	if len(rows) == 0 {
		_, err := io.WriteString(w, empty+"\n")
		return err
	}
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, r := range rows {
		for i := range len(r) - 1 {
			widths[i] = max(widths[i], utf8.RuneCountInString(r[i]))
		}
	}
	used := 0
	for _, n := range widths[:len(widths)-1] {
		used += n + 2
	}
	last := 0 // no bound
	if width := outputWidth(w); width > 0 {
		last = max(width-used, minSummary)
	}
	var b bytes.Buffer
	line := func(cells []string) {
		var l strings.Builder
		for i, c := range cells {
			if i == len(cells)-1 {
				l.WriteString(fit(c, last))
				break
			}
			l.WriteString(c + strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2))
		}
		b.WriteString(strings.TrimRight(l.String(), " "))
		b.WriteByte('\n')
	}
	line(header)
	for _, r := range rows {
		line(r)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// argName is one argument of a tool or a prompt, for its signature.
type argName struct {
	name     string
	required bool
}

// signature shows a name with its arguments as a call would take them:
// echo(message), required ones first as declared, optional ones in
// brackets, so add(a, b, [precision]).
func signature(name string, args []argName) string {
	name = cleanLine(name)
	if len(args) == 0 {
		return name
	}
	parts := make([]string, 0, len(args))
	for _, a := range args {
		if a.required {
			parts = append(parts, cleanLine(a.name))
		}
	}
	for _, a := range args {
		if !a.required {
			parts = append(parts, "["+cleanLine(a.name)+"]")
		}
	}
	return name + "(" + strings.Join(parts, ", ") + ")"
}
