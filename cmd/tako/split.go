package main

import (
	"errors"
	"fmt"
	"strings"
)

// splitCommand splits s into words the way a POSIX shell splits a simple
// command, so that --stdio "CMD ARGS..." reads as it would in a terminal:
//
//   - blanks (space, tab, newline) separate words;
//   - 'single quotes' keep everything literally, up to the next quote;
//   - "double quotes" keep everything literally except that a backslash
//     escapes $ ` " \ and newline (and is kept before any other character);
//   - outside quotes a backslash keeps the next character literally, and a
//     backslash before a newline joins the lines;
//   - quoted and unquoted pieces next to each other form one word, and a
//     pair of quotes with nothing between them is an empty word.
//
// Nothing is expanded: $VAR, ~, * and ? stay as they are, because no shell
// runs (DESIGN.md rule 6). For the same reason an unquoted operator (| & ; <
// > ( ) or a backquote) is an error rather than a literal argument: a user
// who writes "server | tee log" expects a pipe that would silently not
// happen. Quote the character to pass it on.
func splitCommand(s string) ([]string, error) {
	var (
		words   []string
		cur     strings.Builder
		inWord  bool // cur holds a word, possibly empty (after '' or "")
		quote   byte // 0, '\'' or '"': the quote we are inside
		quoteAt int  // where that quote opened, for the error message
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch quote {
		case '\'':
			if c == '\'' {
				quote = 0
				continue
			}
			cur.WriteByte(c)
		case '"':
			switch c {
			case '"':
				quote = 0
			case '\\':
				if i+1 == len(s) {
					return nil, fmt.Errorf("unterminated double quote at offset %d", quoteAt)
				}
				switch next := s[i+1]; next {
				case '$', '`', '"', '\\':
					cur.WriteByte(next)
					i++
				case '\n':
					i++ // line continuation
				default:
					cur.WriteByte('\\')
				}
			default:
				cur.WriteByte(c)
			}
		default:
			switch c {
			case ' ', '\t', '\n':
				if inWord {
					words = append(words, cur.String())
					cur.Reset()
					inWord = false
				}
			case '\'', '"':
				quote, quoteAt, inWord = c, i, true
			case '\\':
				if i+1 == len(s) {
					return nil, errors.New("backslash at the end of the command")
				}
				i++
				if s[i] != '\n' {
					cur.WriteByte(s[i])
					inWord = true
				}
			case '|', '&', ';', '<', '>', '(', ')', '`':
				return nil, fmt.Errorf("unquoted %q at offset %d: tako runs no shell (quote it to pass it as an argument)", c, i)
			default:
				cur.WriteByte(c)
				inWord = true
			}
		}
	}
	switch quote {
	case '\'':
		return nil, fmt.Errorf("unterminated single quote at offset %d", quoteAt)
	case '"':
		return nil, fmt.Errorf("unterminated double quote at offset %d", quoteAt)
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, errors.New("empty command")
	}
	return words, nil
}
