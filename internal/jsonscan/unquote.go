package jsonscan

import (
	"unicode/utf16"
	"unicode/utf8"
)

// Unquote decodes a scanned string literal, quotes included, as
// encoding/json does. Only a literal that needs rewriting is copied twice.
func Unquote(lit []byte, f Flags) string {
	s := lit[1 : len(lit)-1]
	if f&Escaped == 0 && (f&NonASCII == 0 || utf8.Valid(s)) {
		return string(s)
	}
	var buf [128]byte
	return string(AppendUnquoted(buf[:0], s))
}

// AppendUnquoted appends the decoded contents of a scanned string literal
// s, without its quotes, to b, with encoding/json's rules: each byte of
// invalid UTF-8 and each unpaired surrogate escape becomes U+FFFD.
func AppendUnquoted(b, s []byte) []byte {
	for r := 0; r < len(s); {
		c := s[r]
		switch {
		case c == '\\':
			switch e := s[r+1]; e {
			case 'u':
				rr := hex4(s[r+2 : r+6])
				r += 6
				if utf16.IsSurrogate(rr) {
					rr1 := rune(-1)
					if r+6 <= len(s) && s[r] == '\\' && s[r+1] == 'u' {
						rr1 = hex4(s[r+2 : r+6])
					}
					if dec := utf16.DecodeRune(rr, rr1); dec != utf8.RuneError {
						r += 6
						b = utf8.AppendRune(b, dec)
						continue
					}
					rr = utf8.RuneError
				}
				b = utf8.AppendRune(b, rr)
				continue
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			default: // '"', '\\', '/'
				b = append(b, e)
			}
			r += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			if rr == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, s[r:r+size]...)
			}
			r += size
		}
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
