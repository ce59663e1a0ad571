// Package jsonscan is the one JSON scanner under tako's hand-written
// decoders: the message envelope (mcp.DecodeMessage), the tools/call fast
// path (mcp.DecodeCallToolResult), and the recovery of an over-cap
// response's id in stdio, which sees the response as a stream of chunks.
//
// Why: each of those once carried its own copy of the string, escape and
// depth state, and copies of a grammar drift apart. Here the grammar lives
// once; the decoders keep only which members they look at and what they
// make of them.
//
// One state machine serves whole buffers and streams. Each token scanner
// (scanString, scanNumber, scanLiteral) takes its state and returns it, so
// that it can stop where a piece of input ends and go on with the next. A
// Scanner strings them into values, with the open containers, over as many
// pieces as it is fed, and stops as well at the end of each key and value
// down to a depth it is asked to watch: that is the id recovery's view of a
// line. The decoders walk their own objects with Open, Key and Next, and
// scan each member with Value: a string or a number by its token scanner
// at once (most members are one), anything else by a Scanner. Whole-buffer
// use reads "out of input" as ErrEnd, except after a complete number.
//
// The state: inside a token, the escape in progress in a string (a
// backslash just read, or how many \u hex digits are due), the part of a
// number reached, or how much of a literal has matched; around tokens,
// what is due next (a value, a key, a colon, a comma or a closer) and the
// kinds of the open containers, as a bit stack.
//
// The rules are encoding/json's (v1), to which each decoder built on this
// is held by a differential fuzz test:
//   - the JSON grammar exactly, so that invalid input is an error anywhere,
//     even inside a value no one looks at;
//   - no more than MaxDepth nested arrays and objects, counting the
//     outermost;
//   - strings may hold invalid UTF-8 but no control character; decoding
//     one replaces each byte of invalid UTF-8, and each unpaired surrogate
//     escape, with U+FFFD;
//   - errors are worded as encoding/json words them.
package jsonscan

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// MaxDepth is encoding/json's limit on nested arrays and objects; the
// outermost counts as one.
const MaxDepth = 10000

// ErrEnd reports input that ends inside a value.
var ErrEnd = errors.New("unexpected end of JSON input")

// Flags describe a scanned value: a string's, so that decoding it can take
// the copy-free path when nothing needs rewriting, or a number's.
type Flags uint8

const (
	Escaped  Flags = 1 << iota // a string holds a backslash escape
	NonASCII                   // a string holds a byte >= 0x80
	Integer                    // a number has no fraction and no exponent
)

// A code is a token scanner's outcome. Errors are codes rather than error
// values so that scanning allocates nothing; wholeErr and Scanner.Err word
// them.
type code uint8

const (
	done code = iota
	more      // the input ran out inside the token
	errString
	errEscape
	errHex
	errNumber
	errFraction
	errExponent
	errLiteral // worded by literalError
	errValue
	errKey
	errColon
	errMember
	errElement
	errDepth
)

var contexts = [...]string{
	errString:   "in string literal",
	errEscape:   "in string escape code",
	errHex:      `in \u hexadecimal character escape`,
	errNumber:   "in numeric literal",
	errFraction: "after decimal point in numeric literal",
	errExponent: "in exponent of numeric literal",
	errValue:    "looking for beginning of value",
	errKey:      "looking for beginning of object key string",
	errColon:    "after object key",
	errMember:   "after object key:value pair",
	errElement:  "after array element",
	errDepth:    "exceeded max depth",
}

// wholeErr turns the code of a token that failed in a whole buffer into an
// error: there, running out of input is the end of it. It is kept out of
// line, away from the callers' hot paths.
//
//go:noinline
func wholeErr(data []byte, i int, c code) error {
	if c == more {
		return ErrEnd
	}
	return syntaxError(data, i, contexts[c])
}

// Space returns the offset of the first byte at or after i that is not
// JSON white space.
func Space(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// Open steps into the array or object whose opening bracket is data[i].
// It returns the offset of the first element or key, or, if there is none,
// the offset after the closing bracket and true.
func Open(data []byte, i int) (int, bool) {
	closer := data[i] + 2 // ']' is '[' + 2, and '}' is '{' + 2
	i = Space(data, i+1)
	if i < len(data) && data[i] == closer {
		return i + 1, true
	}
	return i, false
}

// Key reads the object key at data[i] and the colon after it. It returns
// the key's contents (between the quotes, still escaped) and flags, and
// the offset of the member's value, which is inside data.
func Key(data []byte, i int) (key []byte, f Flags, value int, err error) {
	if i == len(data) {
		return nil, 0, i, ErrEnd
	}
	if data[i] != '"' {
		return nil, 0, i, syntaxError(data, i, contexts[errKey])
	}
	end, f, err := scanWhole(data, i)
	if err != nil {
		return nil, 0, end, err
	}
	key = data[i+1 : end-1]
	if i = Space(data, end); i == len(data) {
		return nil, 0, i, ErrEnd
	}
	if data[i] != ':' {
		return nil, 0, i, syntaxError(data, i, contexts[errColon])
	}
	if i = Space(data, i+1); i == len(data) {
		return nil, 0, i, ErrEnd
	}
	return key, f, i, nil
}

// Next reads what follows an element or member of the container that
// closer ends: past a comma, it returns the offset of the next one and
// true; past the closer, the offset after it and false.
func Next(data []byte, i int, closer byte) (int, bool, error) {
	i = Space(data, i)
	switch {
	case i == len(data):
		return i, false, ErrEnd
	case data[i] == ',':
		return Space(data, i+1), true, nil
	case data[i] == closer:
		return i + 1, false, nil
	case closer == '}':
		return i, false, syntaxError(data, i, contexts[errMember])
	}
	return i, false, syntaxError(data, i, contexts[errElement])
}

// Finish checks that nothing but white space follows the top-level value,
// which ended at offset i.
func Finish(data []byte, i int) error {
	if i = Space(data, i); i != len(data) {
		return syntaxError(data, i, "after top-level value")
	}
	return nil
}

// Value scans the value starting at data[i], inside depth arrays and
// objects, and returns the offset after it and, for a string, its flags,
// or for an integer (no fraction, no exponent), Integer. Strings and
// numbers, the usual members, are scanned here; any other value by a
// Scanner.
func Value(data []byte, i, depth int) (int, Flags, error) {
	if i == len(data) {
		return i, 0, ErrEnd
	}
	switch b := data[i]; {
	case b == '"':
		return scanWhole(data, i)
	case b == '-' || isDigit(b):
		end, st, c := scanNumber(data, i, numStart)
		if c == done || c == more && numComplete(st) {
			var f Flags
			if st == numZero || st == numInt {
				f = Integer
			}
			return end, f, nil
		}
		return end, 0, wholeErr(data, end, c)
	}
	s := Scanner{outer: depth}
	end, ev := s.Step(data, i, -1)
	switch ev {
	case Done:
		return end, 0, nil
	case More:
		return end, 0, ErrEnd
	}
	return end, 0, s.Err(data, end)
}

// scanWhole scans the string literal whose opening quote is data[i] in a
// whole buffer. Most strings hold no escape: it finds their closing quote
// without the escape machinery.
func scanWhole(data []byte, i int) (int, Flags, error) {
	end, f := scanPlain(data, i+1, 0)
	c := errString
	switch {
	case end == len(data):
		c = more
	case data[end] == '"':
		return end + 1, f, nil
	case data[end] == '\\':
		end, _, f, c = scanString(data, end+1, escBackslash, f|Escaped)
	}
	if c != done {
		return end, f, wholeErr(data, end, c)
	}
	return end, f, nil
}

// escBackslash is a string's escape state just after a backslash; 1 to 4
// count the hex digits of a \u escape still due, and 0 is no escape.
const escBackslash = 5

// scanString scans a string from data[i], with esc the escape in progress
// there and f the flags so far. It returns the offset after the closing
// quote (done), len(data) (more: esc and f to go on with), or the offset
// of the offending byte.
func scanString(data []byte, i int, esc uint8, f Flags) (int, uint8, Flags, code) {
	if esc != 0 {
		goto escape
	}
plain:
	if i, f = scanPlain(data, i, f); i == len(data) {
		return i, 0, f, more
	}
	switch data[i] {
	case '"':
		return i + 1, 0, f, done
	case '\\':
		f |= Escaped
		esc = escBackslash
		i++
	default:
		return i, 0, f, errString
	}
escape:
	for ; esc != 0; i++ {
		if i == len(data) {
			return i, esc, f, more
		}
		switch c := data[i]; {
		case esc < escBackslash:
			if unhex(c) > 0xF {
				return i, esc, f, errHex
			}
			esc--
		case c == 'u':
			esc = 4
		case c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't':
			esc = 0
		default:
			return i, esc, f, errEscape
		}
	}
	goto plain
}

// SWAR constants for testing eight string bytes at once.
const (
	swarOnes = 0x0101010101010101
	swarHigh = 0x8080808080808080
)

// scanPlain returns the offset of the first quote, backslash or control
// character at or after data[i], or len(data), adding NonASCII to f if it
// passes a byte >= 0x80. Long strings are where the time goes, so it tests
// eight bytes at a time.
func scanPlain(data []byte, i int, f Flags) (int, Flags) {
	for i+8 <= len(data) {
		w := binary.LittleEndian.Uint64(data[i:])
		special := hasLess(w, 0x20) | hasLess(w^('"'*swarOnes), 1) | hasLess(w^('\\'*swarOnes), 1)
		if special != 0 {
			// The lowest flagged byte is exactly the first special one
			// (see hasLess); only the bytes before it are plain.
			k := bits.TrailingZeros64(special) >> 3
			if w&swarHigh&(1<<(8*k)-1) != 0 {
				f |= NonASCII
			}
			return i + k, f
		}
		if w&swarHigh != 0 {
			f |= NonASCII
		}
		i += 8
	}
	for ; i < len(data); i++ {
		c := data[i]
		if c == '"' || c == '\\' || c < 0x20 {
			break
		}
		if c >= utf8.RuneSelf {
			f |= NonASCII
		}
	}
	return i, f
}

// hasLess has the high bit of a byte set where that byte of x is less than
// n, for n <= 0x80, at least for the lowest such byte, and is zero exactly
// when there is none (the "hasless" bit trick: the lowest byte below n
// borrows into its own high bit; a byte >= n can set its high bit only if
// it was already set, which the &^ x clears). Higher bytes may be flagged
// wrongly by the borrow, so only the lowest flag is to be trusted.
func hasLess(x, n uint64) uint64 {
	return (x - n*swarOnes) &^ x & swarHigh
}

// The states of a number: the part of it reached. numEnd and numBad are
// not states but what a byte does: end the number there, or make it
// invalid.
const (
	numStart uint8 = iota // before the minus sign or first digit
	numMinus              // after the minus sign
	numZero               // after a leading 0
	numInt                // in the integer's digits
	numDot                // after the decimal point
	numFrac               // in the fraction's digits
	numE                  // after the e
	numESign              // after the exponent's sign
	numExp                // in the exponent's digits
	numEnd
	numBad
)

// numNext is the number grammar: the state after a byte of each class
// (other, '-', '0', '1' to '9', '.', 'e' or 'E', '+') in each state.
var numNext = [numEnd][7]uint8{
	numStart: {numBad, numMinus, numZero, numInt, numBad, numBad, numBad},
	numMinus: {numBad, numBad, numZero, numInt, numBad, numBad, numBad},
	numZero:  {numEnd, numEnd, numEnd, numEnd, numDot, numE, numEnd},
	numInt:   {numEnd, numEnd, numInt, numInt, numDot, numE, numEnd},
	numDot:   {numBad, numBad, numFrac, numFrac, numBad, numBad, numBad},
	numFrac:  {numEnd, numEnd, numFrac, numFrac, numEnd, numE, numEnd},
	numE:     {numBad, numESign, numExp, numExp, numBad, numBad, numESign},
	numESign: {numBad, numBad, numExp, numExp, numBad, numBad, numBad},
	numExp:   {numEnd, numEnd, numExp, numExp, numEnd, numEnd, numEnd},
}

var numClass = func() (t [256]uint8) {
	t['-'], t['0'], t['.'], t['e'], t['E'], t['+'] = 1, 2, 4, 5, 5, 6
	for c := '1'; c <= '9'; c++ {
		t[c] = 3
	}
	return t
}()

// numRuns are the states that a digit keeps: the loop runs through their
// digits without the tables.
const numRuns = 1<<numInt | 1<<numFrac | 1<<numExp

// numComplete reports whether a number in state st is whole if no digit
// follows.
func numComplete(st uint8) bool { return numNext[st][0] == numEnd }

// scanNumber scans a number from data[i] in state st. A number ends only at
// a byte that cannot continue it: it returns that byte's offset (done, or
// an error if the number is not whole there), or len(data) (more).
func scanNumber(data []byte, i int, st uint8) (int, uint8, code) {
	for ; i < len(data); i++ {
		c := data[i]
		if numRuns>>st&1 == 1 && isDigit(c) {
			continue
		}
		switch next := numNext[st][numClass[c]]; next {
		case numEnd:
			return i, st, done
		case numBad:
			return i, st, numErrors[st]
		default:
			st = next
		}
	}
	return i, st, more
}

// numErrors words a byte that makes a number invalid, by the state it
// comes in, as encoding/json does.
var numErrors = [numEnd]code{numStart: errNumber, numMinus: errNumber, numDot: errFraction, numE: errExponent, numESign: errExponent}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// scanLiteral matches lit from its byte k on against data from i on, and
// returns the offsets reached in data and lit.
func scanLiteral(data []byte, i int, lit string, k int) (int, int, code) {
	for ; k < len(lit); i, k = i+1, k+1 {
		if i == len(data) {
			return i, k, more
		}
		if data[i] != lit[k] {
			return i, k, errLiteral
		}
	}
	return i, k, done
}

func literalError(data []byte, i int, lit string, k int) error {
	return syntaxError(data, i, "in literal "+lit+" (expecting "+quoteChar(lit[k])+")")
}

// unhex returns the value of the hex digit c, or 0xFF if it is not one.
func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10
	}
	return 0xFF
}

// syntaxError describes invalid JSON at data[i], in encoding/json's words.
func syntaxError(data []byte, i int, context string) error {
	return fmt.Errorf("invalid character %s %s (offset %d)", quoteChar(data[i]), context, i)
}

// quoteChar formats c for an error message, as encoding/json does.
func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}
