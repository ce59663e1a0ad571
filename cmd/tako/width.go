package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"

	"github.com/chzyer/readline"
)

// terminalWidther is an output that knows the width of the terminal it is
// shown on: the shell's, whose writes go through the line editor.
type terminalWidther interface {
	// TerminalWidth is the terminal's width in columns, or 0 when the
	// output is not a terminal.
	TerminalWidth() int
}

// outputWidth is how wide a table written to w may be: the terminal's
// width when w is one, else 0, no bound: a table piped into a file, a
// pager or grep is never cut, so nothing a script looks for is lost.
func outputWidth(w io.Writer) int {
	switch w := w.(type) {
	case terminalWidther:
		return w.TerminalWidth()
	case *os.File:
		return fileWidth(w)
	}
	return 0
}

// fileWidth is the width of the terminal f is, or 0 when it is none.
func fileWidth(f *os.File) int {
	fd := int(f.Fd())
	if !readline.IsTerminal(fd) {
		return 0
	}
	if cols, _, err := readline.GetSize(fd); err == nil && cols > 0 {
		return cols
	}
	return 80 // a terminal that does not say: the classic width
}

// fit cuts s to n runes when n is a bound (greater than zero).
func fit(s string, n int) string {
	if n <= 0 {
		return s
	}
	return truncate(s, n)
}

// showText makes a server's text safe to write to a person's terminal, as
// cleanLine does for a table cell but keeping the lines: escape sequences
// (CSI, such as the colours "\x1b[2m", and OSC, such as a title or a
// hyperlink) are dropped, and every other control character but tab and
// newline is shown as ^X (or \u escape for those beyond ASCII), so that a
// server cannot move the cursor, rewrite what is on the screen or set the
// clipboard. A CRLF line end is a newline. --format json is untouched:
// its bytes are the server's.
func showText(s string) string {
	if !needsShowing(s) {
		return s
	}
	var b strings.Builder
	r := []rune(s)
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case c == '\n' || c == '\t':
			b.WriteRune(c)
		case c == '\r' && i+1 < len(r) && r[i+1] == '\n':
			// CRLF: the newline follows.
		case c == 0x1b && i+1 < len(r) && r[i+1] == '[', c == 0x9b:
			// CSI: parameters and intermediates, then one final byte.
			if c == 0x1b {
				i++
			}
			for i+1 < len(r) && r[i+1] >= 0x20 && r[i+1] <= 0x3f {
				i++
			}
			for i+1 < len(r) && r[i+1] >= 0x20 && r[i+1] <= 0x2f {
				i++
			}
			if i+1 < len(r) && r[i+1] >= 0x40 && r[i+1] <= 0x7e {
				i++
			}
		case c == 0x1b && i+1 < len(r) && r[i+1] == ']', c == 0x9d:
			// OSC: up to BEL or ST (ESC \).
			if c == 0x1b {
				i++
			}
			for i+1 < len(r) && r[i+1] != 0x07 && r[i+1] != 0x9c && !(r[i+1] == 0x1b && i+2 < len(r) && r[i+2] == '\\') {
				i++
			}
			switch {
			case i+1 < len(r) && r[i+1] == 0x1b:
				i += 2
			case i+1 < len(r):
				i++
			}
		case c < 0x20 || c == 0x7f:
			b.WriteByte('^')
			b.WriteRune(c ^ 0x40)
		case c == 0x200c || c == 0x200d:
			b.WriteRune(c) // the joiners of emoji and scripts
		case !unicode.IsPrint(c) && !unicode.IsSpace(c) || c == 0x85 || c == 0x2028 || c == 0x2029:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// needsShowing reports whether s holds a rune showText changes.
func needsShowing(s string) bool {
	for _, c := range s {
		if c != '\n' && c != '\t' && (c < 0x20 || c == 0x7f || !unicode.IsPrint(c) && c != ' ') {
			return true
		}
	}
	return false
}
