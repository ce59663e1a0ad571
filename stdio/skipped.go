package stdio

import (
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The account of lines skipped on stdout. A server that prints a banner or
// its logs to stdout (where its messages go) rather than stderr is common;
// its lines are skipped (checklist §3.3), and when the handshake then fails
// or times out, the account says why in the error, without a debug log.

// SkippedLinesError says that the server's stdout carried lines that are not
// JSON-RPC messages, and what the first of them was. transport.Connect adds
// it to the error of a failed handshake (Conn and NewStreamConn's Conn are
// transport.SkipReporters).
type SkippedLinesError struct {
	// Lines is how many lines were skipped.
	Lines int64
	// First is the start of the first skipped line, at most about 120
	// bytes, as printable text: terminal escapes removed, other control
	// characters made spaces, invalid UTF-8 replaced.
	First string
}

func (e *SkippedLinesError) Error() string { return "stdio: " + e.Summary() }

// Summary is the error's message without the package's prefix, for a
// program that words its own: "stdout carried 3 lines that are not
// JSON-RPC, the first: ...".
func (e *SkippedLinesError) Summary() string {
	if e.Lines == 1 {
		return fmt.Sprintf("stdout carried 1 line that is not JSON-RPC: %q", e.First)
	}
	return fmt.Sprintf("stdout carried %d lines that are not JSON-RPC, the first: %q", e.Lines, e.First)
}

// skipCount is the framer's account of skipped lines. The reading goroutine
// adds to it; Skipped reads it from any goroutine.
type skipCount struct {
	mu    sync.Mutex
	lines int64
	first string
}

func (s *skipCount) add(line []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lines == 0 {
		s.first = printable(line, previewSize)
	}
	s.lines++
}

// err returns a *SkippedLinesError if a line was skipped, else nil.
func (s *skipCount) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lines == 0 {
		return nil
	}
	return &SkippedLinesError{Lines: s.lines, First: s.first}
}

// printable turns the start of b into text that is safe on one line of a
// terminal: ANSI escape sequences (the colours of a logger) are removed,
// other control characters become spaces, invalid UTF-8 becomes U+FFFD,
// and the result is cut at max bytes, on a rune boundary, with "…", and
// trimmed of spaces.
func printable(b []byte, max int) string {
	out := make([]byte, 0, min(len(b), max)+3)
	for i := 0; i < len(b); {
		if b[i] == 0x1b {
			i = skipEscape(b, i)
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if unicode.IsControl(r) {
			r = ' '
		}
		if len(out)+utf8.RuneLen(r) > max {
			return strings.TrimSpace(string(out)) + "…"
		}
		out = utf8.AppendRune(out, r)
		i += n
	}
	return strings.TrimSpace(string(out))
}

// skipEscape returns the index after the escape sequence at b[i] (ESC): a
// CSI sequence (ESC [ parameters final), or ESC and the byte after it.
func skipEscape(b []byte, i int) int {
	i++
	if i >= len(b) || b[i] != '[' {
		return min(i+1, len(b))
	}
	for i++; i < len(b); i++ {
		if 0x40 <= b[i] && b[i] <= 0x7e {
			return i + 1
		}
	}
	return i
}
