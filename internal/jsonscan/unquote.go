package jsonscan

import (
	"bytes"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Unquote decodes a scanned string literal, quotes included, as
// encoding/json does, into a string that is the literal's only copy. f are
// the literal's flags as Value returned them; a caller that does not have
// them passes Escaped|NonASCII.
//
// A literal with escapes is measured first and then written once into
// memory of exactly its decoded size. Why: appending into a buffer that
// grows as it goes, and copying that into a string, allocated about six
// times the string's size (append grows a large slice by a quarter at a
// time, and every step is a new copy), and the text of a tool result has
// an escape on every line (\n, \", \t, \u001b). The measuring pass finds
// the escapes with bytes.IndexByte and costs a fraction of the writing.
func Unquote(lit []byte, f Flags) string {
	s := lit[1 : len(lit)-1]
	valid := f&NonASCII == 0 || utf8.Valid(s)
	if f&Escaped == 0 && valid {
		return string(s)
	}
	var b strings.Builder
	b.Grow(unquotedLen(s, valid))
	for len(s) > 0 {
		k := bytes.IndexByte(s, '\\')
		if k < 0 {
			k = len(s)
		}
		writeRun(&b, s[:k], valid)
		if k == len(s) {
			break
		}
		r, w := escape(s, k)
		if r < utf8.RuneSelf {
			b.WriteByte(byte(r))
		} else {
			b.WriteRune(r)
		}
		s = s[k+w:]
	}
	return b.String()
}

// unquotedLen is the size of the decoded contents of a scanned string
// literal s, without its quotes. valid says s is valid UTF-8.
func unquotedLen(s []byte, valid bool) int {
	n := 0
	for len(s) > 0 {
		k := bytes.IndexByte(s, '\\')
		if k < 0 {
			k = len(s)
		}
		if valid {
			n += k
		} else {
			n += len(appendRun(nil, s[:k]))
		}
		if k == len(s) {
			break
		}
		r, w := escape(s, k)
		n += utf8.RuneLen(r)
		s = s[k+w:]
	}
	return n
}

// writeRun writes a run of s that holds no escape, replacing each byte of
// invalid UTF-8 with U+FFFD unless valid says there is none.
func writeRun(b *strings.Builder, run []byte, valid bool) {
	if valid || utf8.Valid(run) {
		b.Write(run)
		return
	}
	for r := 0; r < len(run); {
		rr, size := utf8.DecodeRune(run[r:])
		if rr == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.Write(run[r : r+size])
		}
		r += size
	}
}

// appendRun appends a run that holds no escape, each byte of invalid UTF-8
// replaced with U+FFFD.
func appendRun(b, run []byte) []byte {
	for r := 0; r < len(run); {
		c := run[r]
		if c < utf8.RuneSelf {
			b = append(b, c)
			r++
			continue
		}
		rr, size := utf8.DecodeRune(run[r:])
		if rr == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, run[r:r+size]...)
		}
		r += size
	}
	return b
}

// escape decodes the escape that starts with the backslash at s[i], which
// scanString has checked, and returns the rune it stands for and how many
// bytes it takes. A surrogate pair of \u escapes is one rune; an unpaired
// surrogate is U+FFFD, as encoding/json has it.
func escape(s []byte, i int) (rune, int) {
	switch e := s[i+1]; e {
	case 'u':
		r := hex4(s[i+2 : i+6])
		if !utf16.IsSurrogate(r) {
			return r, 6
		}
		if i+12 <= len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
			if dec := utf16.DecodeRune(r, hex4(s[i+8:i+12])); dec != utf8.RuneError {
				return dec, 12
			}
		}
		return utf8.RuneError, 6
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	default: // '"', '\\', '/'
		return rune(e), 2
	}
}

// AppendUnquoted appends the decoded contents of a scanned string literal
// s, without its quotes, to b, with encoding/json's rules: each byte of
// invalid UTF-8 and each unpaired surrogate escape becomes U+FFFD.
func AppendUnquoted(b, s []byte) []byte {
	for len(s) > 0 {
		k := bytes.IndexByte(s, '\\')
		if k < 0 {
			return appendRun(b, s)
		}
		b = appendRun(b, s[:k])
		r, w := escape(s, k)
		b = utf8.AppendRune(b, r)
		s = s[k+w:]
	}
	return b
}

// hex4 decodes four hex digits that scanString has checked.
func hex4(h []byte) rune {
	var r rune
	for _, c := range h[:4] {
		r = r<<4 | rune(unhex(c))
	}
	return r
}
