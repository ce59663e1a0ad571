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
func splitCommand(s string) ([]string, error) { return splitWords(s, false) }

// splitShellLine splits a line typed at tako shell as splitCommand does,
// except that a word that starts with { or [ is a JSON value, taken whole
// up to its matching bracket, quotes and blanks in it included, so that
// call echo {"message": "hi there"} needs no quoting around the JSON.
func splitShellLine(s string) ([]string, error) { return splitWords(s, true) }

// jsonEnd returns the index just past the JSON object or array that starts
// at s[i], or -1 when its brackets do not close: brackets inside strings
// are not counted, and a string ends at an unescaped quote.
func jsonEnd(s string, i int) int {
	depth, inString := 0, false
	for j := i; j < len(s); j++ {
		c := s[j]
		switch {
		case inString && c == '\\':
			j++
		case inString:
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth--; depth == 0 {
				return j + 1
			}
		}
	}
	return -1
}

func splitWords(s string, keepJSON bool) ([]string, error) {
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
			if keepJSON && !inWord && (c == '{' || c == '[') {
				end := jsonEnd(s, i)
				if end < 0 {
					return nil, fmt.Errorf("the JSON at offset %d does not close its %q", i, c)
				}
				if end == len(s) || strings.IndexByte(" \t\n", s[end]) >= 0 {
					words = append(words, s[i:end])
					i = end - 1
					continue
				}
			}
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
