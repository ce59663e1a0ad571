package mcp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// This file holds the single-pass decoder behind DecodeMessage. It replaces
// json.Unmarshal into a struct, which cost a dozen allocations per message
// (reflection, a copy of every raw member, the scanner's state), with one
// allocation for a typical response: the *Message itself. Params, Result and
// Error.Data are sub-slices of the input.
//
// The decoder must accept and reject exactly what json.Unmarshal into a
// struct of the six members did, and produce the same Message: DecodeMessage
// was specified by that behaviour, and FuzzDecodeMatchesStd holds the two
// side by side. The rules of encoding/json (v1) that this mirrors, beyond the JSON
// grammar itself:
//
//   - the whole input is validated, including inside values that are kept
//     raw or ignored, and nesting deeper than 10000 containers is refused;
//   - member names are matched after unescaping, case-insensitively with
//     Unicode simple folding (so "ID", "Id" and "\u0069d" all mean "id", and
//     "jſonrpc" with U+017F means "jsonrpc");
//   - a repeated member overwrites the earlier one, except that null leaves a
//     string member ("jsonrpc", "method", "code", "message") as it was,
//     resets the id and the error, and is kept as the raw value "null" by
//     params, result and data; a second error object is decoded into the
//     first one, so members it lacks keep their earlier values;
//   - a value of the wrong type is an error, but only once the rest of the
//     input has been found to be valid JSON;
//   - strings decode with invalid UTF-8 and unpaired surrogate escapes each
//     replaced by U+FFFD.

// maxNestingDepth is encoding/json's limit on nested arrays and objects; the
// top-level object counts as one.
const maxNestingDepth = 10000

// A member names one of the members the decoder looks at.
type member uint8

const (
	memberOther member = iota
	memberJSONRPC
	memberID
	memberMethod
	memberParams
	memberResult
	memberError
	memberCode
	memberMessage
	memberData
)

// strFlags describes a scanned string literal, so that decoding it can take
// the copy-free path when nothing needs rewriting.
type strFlags uint8

const (
	strEscaped  strFlags = 1 << iota // holds a backslash escape
	strNonASCII                      // holds a byte >= 0x80
)

// decodeMessage is DecodeMessage's implementation.
func decodeMessage(data []byte) (*Message, error) {
	var (
		m       Message
		version []byte // the last "jsonrpc" string literal, quotes included
		semErr  error  // the first wrong-type error; reported only if the JSON is valid
	)
	i := skipSpace(data, 0)
	if i == len(data) {
		return nil, decodeError(errEnd)
	}
	if data[i] != '{' {
		return nil, decodeNonObject(data, i)
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		i++
	} else {
		for {
			var name member
			var err error
			if i, name, err = scanKey(data, i, keysMessage); err != nil {
				return nil, decodeError(err)
			}
			c := data[i]
			start := i
			switch name {
			case memberJSONRPC:
				switch c {
				case '"':
					i, _, err = scanString(data, i)
					version = data[start:i]
				case 'n':
					i, err = scanLiteral(data, i, "null")
				default:
					i, err = skipValue(data, i, 1)
					semErr = firstErr(semErr, typeError(c, "jsonrpc", "string"))
				}
			case memberID:
				switch {
				case c == '"':
					var f strFlags
					i, f, err = scanString(data, i)
					if err == nil {
						m.ID = StringID(decodeString(data[start:i], f))
					}
				case c == 'n':
					i, err = scanLiteral(data, i, "null")
					m.ID = ID{}
				case c == '-' || isDigit(c):
					var integer bool
					i, integer, err = scanNumber(data, i)
					if err == nil {
						id, ierr := decodeNumberID(data[start:i], integer)
						m.ID = id
						semErr = firstErr(semErr, ierr)
					}
				default:
					i, err = skipValue(data, i, 1)
					if err == nil {
						semErr = firstErr(semErr, fmt.Errorf("mcp: id %s is neither a string nor an integer", data[start:i]))
					}
				}
			case memberMethod:
				switch c {
				case '"':
					var f strFlags
					i, f, err = scanString(data, i)
					if err == nil {
						m.Method = decodeMethod(data[start:i], f)
					}
				case 'n':
					i, err = scanLiteral(data, i, "null")
				default:
					i, err = skipValue(data, i, 1)
					semErr = firstErr(semErr, typeError(c, "method", "string"))
				}
			case memberParams:
				i, err = skipValue(data, i, 1)
				m.Params = data[start:i:i]
			case memberResult:
				i, err = skipValue(data, i, 1)
				m.Result = data[start:i:i]
			case memberError:
				switch c {
				case 'n':
					i, err = scanLiteral(data, i, "null")
					m.Error = nil
				case '{':
					if m.Error == nil {
						m.Error = new(Error)
					}
					i, err = decodeErrorObject(data, i, m.Error, &semErr)
				default:
					i, err = skipValue(data, i, 1)
					semErr = firstErr(semErr, typeError(c, "error", "object"))
				}
			default:
				i, err = skipValue(data, i, 1)
			}
			if err != nil {
				return nil, decodeError(err)
			}
			i = skipSpace(data, i)
			if i == len(data) {
				return nil, decodeError(errEnd)
			}
			if data[i] == ',' {
				i = skipSpace(data, i+1)
				continue
			}
			if data[i] == '}' {
				i++
				break
			}
			return nil, decodeError(syntaxErr(data, i, "after object key:value pair"))
		}
	}
	if i = skipSpace(data, i); i != len(data) {
		return nil, decodeError(syntaxErr(data, i, "after top-level value"))
	}
	if semErr != nil {
		return nil, decodeError(semErr)
	}
	if string(version) != `"2.0"` {
		v := ""
		if version != nil {
			v = decodeString(version, strEscaped)
		}
		if v != "2.0" {
			return nil, fmt.Errorf("%w: jsonrpc member is %q", ErrNotJSONRPC, v)
		}
	}
	if string(m.Result) == "null" && (m.Error != nil || m.Method != "") {
		m.Result = nil
	}
	if m.Method != "" {
		if m.Result != nil || m.Error != nil {
			return nil, fmt.Errorf("%w: %s message carries a result or an error", ErrNotJSONRPC, m.Method)
		}
	} else {
		m.Params = nil
		if m.Error == nil && m.Result == nil {
			return nil, fmt.Errorf("%w: response without result or error", ErrNotJSONRPC)
		}
		if m.Error != nil && m.Result != nil {
			return nil, fmt.Errorf("%w: response with both result and error", ErrNotJSONRPC)
		}
		if m.Error == nil && !m.ID.IsValid() {
			return nil, fmt.Errorf("%w: result without id", ErrNotJSONRPC)
		}
	}
	p := new(Message)
	*p = m
	return p, nil
}

// decodeNonObject explains why an input whose top-level value is not an
// object is refused: it is not valid JSON, it is null (which encoding/json
// decoded as an empty message, so it lacks the "jsonrpc" member), or it is
// some other value that cannot be a message.
func decodeNonObject(data []byte, i int) error {
	end, err := skipValue(data, i, 0)
	if err != nil {
		return decodeError(err)
	}
	if j := skipSpace(data, end); j != len(data) {
		return decodeError(syntaxErr(data, j, "after top-level value"))
	}
	if data[i] == 'n' {
		return fmt.Errorf("%w: jsonrpc member is %q", ErrNotJSONRPC, "")
	}
	return decodeError(typeError(data[i], "message", "object"))
}

// decodeErrorObject decodes the error object starting at data[i] into e,
// which may already hold an earlier error member's values, and returns the
// offset after the object. A member of the wrong type is recorded in
// *semErr, if it holds no earlier error, and decoding goes on.
func decodeErrorObject(data []byte, i int, e *Error, semErr *error) (int, error) {
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, nil
	}
	for {
		var name member
		var err error
		if i, name, err = scanKey(data, i, keysError); err != nil {
			return i, err
		}
		c := data[i]
		start := i
		switch name {
		case memberCode:
			switch {
			case c == '-' || isDigit(c):
				var integer bool
				i, integer, err = scanNumber(data, i)
				if err == nil {
					n, ok := parseInt64(data[start:i], integer)
					if ok {
						e.Code = n
					} else {
						*semErr = firstErr(*semErr, typeError(c, "error.code", "int64"))
					}
				}
			case c == 'n':
				i, err = scanLiteral(data, i, "null")
			default:
				i, err = skipValue(data, i, 2)
				*semErr = firstErr(*semErr, typeError(c, "error.code", "int64"))
			}
		case memberMessage:
			switch c {
			case '"':
				var f strFlags
				i, f, err = scanString(data, i)
				if err == nil {
					e.Message = decodeString(data[start:i], f)
				}
			case 'n':
				i, err = scanLiteral(data, i, "null")
			default:
				i, err = skipValue(data, i, 2)
				*semErr = firstErr(*semErr, typeError(c, "error.message", "string"))
			}
		case memberData:
			i, err = skipValue(data, i, 2)
			e.Data = data[start:i:i]
		default:
			i, err = skipValue(data, i, 2)
		}
		if err != nil {
			return i, err
		}
		i = skipSpace(data, i)
		if i == len(data) {
			return i, errEnd
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return i + 1, nil
		default:
			return i, syntaxErr(data, i, "after object key:value pair")
		}
	}
}

// A keySet says which member names an object's members are matched
// against.
type keySet uint8

const (
	keysNone    keySet = iota // an object that is only skipped
	keysMessage               // the message object
	keysError                 // an error object
)

// scanKey reads an object member's name starting at data[i], and the colon
// after it, and returns the offset of the member's value (which is inside
// data) and which member of set the name means.
func scanKey(data []byte, i int, set keySet) (int, member, error) {
	if i == len(data) {
		return i, 0, errEnd
	}
	if data[i] != '"' {
		return i, 0, syntaxErr(data, i, "looking for beginning of object key string")
	}
	end, f, err := scanString(data, i)
	if err != nil {
		return end, 0, err
	}
	name := memberOther
	if set != keysNone {
		k := data[i+1 : end-1]
		if f != 0 {
			// Rare: an escaped or non-ASCII name. Decode it as
			// encoding/json does and fold it with Unicode rules.
			var buf [64]byte
			k = appendUnquoted(buf[:0], k)
			name = foldedMember(k)
		} else if set == keysMessage {
			name = messageMember(k)
		} else {
			name = errorMember(k)
		}
		// A name from the other object's set is unknown here.
		if set == keysMessage && name >= memberCode || set == keysError && name < memberCode {
			name = memberOther
		}
	}
	i = skipSpace(data, end)
	if i == len(data) {
		return i, 0, errEnd
	}
	if data[i] != ':' {
		return i, 0, syntaxErr(data, i, "after object key")
	}
	i = skipSpace(data, i+1)
	if i == len(data) {
		return i, 0, errEnd
	}
	return i, name, nil
}

// messageMember matches an ASCII member name of the message object,
// ignoring ASCII case.
func messageMember(k []byte) member {
	switch len(k) {
	case 2:
		if equalFoldLower(k, "id") {
			return memberID
		}
	case 5:
		if equalFoldLower(k, "error") {
			return memberError
		}
	case 6:
		switch k[0] | 0x20 {
		case 'm':
			if equalFoldLower(k, "method") {
				return memberMethod
			}
		case 'p':
			if equalFoldLower(k, "params") {
				return memberParams
			}
		case 'r':
			if equalFoldLower(k, "result") {
				return memberResult
			}
		}
	case 7:
		if equalFoldLower(k, "jsonrpc") {
			return memberJSONRPC
		}
	}
	return memberOther
}

// errorMember matches an ASCII member name of an error object, ignoring
// ASCII case.
func errorMember(k []byte) member {
	switch {
	case equalFoldLower(k, "code"):
		return memberCode
	case equalFoldLower(k, "message"):
		return memberMessage
	case equalFoldLower(k, "data"):
		return memberData
	}
	return memberOther
}

// foldedMember matches a decoded member name that may hold non-ASCII runes
// against every name the decoder knows, folding case as encoding/json does
// (bytes.EqualFold's rules: "ſ", U+017F, matches "s").
func foldedMember(k []byte) member {
	for _, m := range [...]struct {
		name string
		m    member
	}{
		{"jsonrpc", memberJSONRPC}, {"id", memberID}, {"method", memberMethod},
		{"params", memberParams}, {"result", memberResult}, {"error", memberError},
		{"code", memberCode}, {"message", memberMessage}, {"data", memberData},
	} {
		if bytes.EqualFold(k, []byte(m.name)) {
			return m.m
		}
	}
	return memberOther
}

// equalFoldLower reports whether the ASCII name k equals lower, a lower-case
// ASCII word, ignoring case. A byte b with b|0x20 == c, for a letter c, is c
// or its upper case.
func equalFoldLower(k []byte, lower string) bool {
	if len(k) != len(lower) {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i]|0x20 != lower[i] {
			return false
		}
	}
	return true
}

// decodeNumberID turns a validated JSON number into an id, with exactly the
// rules of ID.UnmarshalJSON; plain integers of up to 18 digits, which is
// what every peer sends, take a path that does not allocate.
func decodeNumberID(tok []byte, integer bool) (ID, error) {
	if integer {
		if n, ok := parseSmallInt(tok); ok {
			return Int64ID(n), nil
		}
	}
	var id ID
	err := id.UnmarshalJSON(tok)
	return id, err
}

// parseInt64 parses a validated JSON number as strconv.ParseInt does, which
// is how encoding/json fills an int64: no fraction, no exponent, in range.
func parseInt64(tok []byte, integer bool) (int64, bool) {
	if !integer {
		return 0, false
	}
	if n, ok := parseSmallInt(tok); ok {
		return n, true
	}
	n, err := strconv.ParseInt(string(tok), 10, 64)
	return n, err == nil
}

// parseSmallInt parses a validated JSON integer of at most 18 digits, which
// always fits in an int64.
func parseSmallInt(tok []byte) (int64, bool) {
	d := tok
	if d[0] == '-' {
		d = d[1:]
	}
	if len(d) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range d {
		n = n*10 + int64(c-'0')
	}
	if tok[0] == '-' {
		n = -n
	}
	return n, true
}

// decodeMethod decodes a method name. The names of the protocol are
// returned as constants, so that decoding a request or notification from
// the server allocates nothing for its method.
func decodeMethod(lit []byte, f strFlags) string {
	if f == 0 {
		switch s := lit[1 : len(lit)-1]; string(s) {
		case NotificationProgress:
			return NotificationProgress
		case NotificationMessage:
			return NotificationMessage
		case NotificationCancelled:
			return NotificationCancelled
		case NotificationToolsListChanged:
			return NotificationToolsListChanged
		case NotificationPromptsListChanged:
			return NotificationPromptsListChanged
		case NotificationResourcesListChanged:
			return NotificationResourcesListChanged
		case NotificationResourceUpdated:
			return NotificationResourceUpdated
		case NotificationElicitationComplete:
			return NotificationElicitationComplete
		case NotificationSubscriptionsAck:
			return NotificationSubscriptionsAck
		case NotificationTasksStatus:
			return NotificationTasksStatus
		case NotificationTasks:
			return NotificationTasks
		case MethodPing:
			return MethodPing
		case MethodRootsList:
			return MethodRootsList
		case MethodSamplingCreateMessage:
			return MethodSamplingCreateMessage
		case MethodElicitationCreate:
			return MethodElicitationCreate
		}
	}
	return decodeString(lit, f)
}

// decodeString decodes a validated JSON string literal (quotes included) as
// encoding/json does. Only a literal that needs rewriting is copied twice.
func decodeString(lit []byte, f strFlags) string {
	s := lit[1 : len(lit)-1]
	if f&strEscaped == 0 && (f&strNonASCII == 0 || utf8.Valid(s)) {
		return string(s)
	}
	var buf [128]byte
	return string(appendUnquoted(buf[:0], s))
}

// appendUnquoted appends the decoded contents of a validated JSON string
// literal s (without its quotes) to b, with encoding/json's rules: each byte
// of invalid UTF-8 and each unpaired surrogate escape becomes U+FFFD.
func appendUnquoted(b, s []byte) []byte {
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

// skipSpace returns the offset of the first byte at or after i that is not
// JSON white space.
func skipSpace(data []byte, i int) int {
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

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// SWAR constants for testing eight string bytes at once.
const (
	swarOnes = 0x0101010101010101
	swarHigh = 0x8080808080808080
)

// scanString validates the string literal starting at data[i] (a quote) and
// returns the offset after its closing quote, and whether it holds escapes
// or non-ASCII bytes. Invalid UTF-8 is allowed, as encoding/json allows it.
func scanString(data []byte, i int) (int, strFlags, error) {
	var f strFlags
	i++
	for {
		i, f = scanPlain(data, i, f)
		if i == len(data) {
			return i, f, errEnd
		}
		switch data[i] {
		case '"':
			return i + 1, f, nil
		case '\\':
			f |= strEscaped
			if i+1 == len(data) {
				return i + 1, f, errEnd
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for k := i + 2; k < i+6; k++ {
					if k == len(data) {
						return k, f, errEnd
					}
					if unhex(data[k]) == 0xFF {
						return k, f, syntaxErr(data, k, "in \\u hexadecimal character escape")
					}
				}
				i += 6
			default:
				return i + 1, f, syntaxErr(data, i+1, "in string escape code")
			}
		default: // a control character
			return i, f, syntaxErr(data, i, "in string literal")
		}
	}
}

// scanPlain returns the offset of the first quote, backslash or control
// character at or after data[i], or len(data), adding strNonASCII to f if
// it passes a byte >= 0x80. It tests eight bytes at a time.
func scanPlain(data []byte, i int, f strFlags) (int, strFlags) {
	for i+8 <= len(data) {
		w := binary.LittleEndian.Uint64(data[i:])
		special := hasLess(w, 0x20) | hasLess(w^('"'*swarOnes), 1) | hasLess(w^('\\'*swarOnes), 1)
		if special != 0 {
			// The lowest flagged byte is exactly the first special one
			// (see hasLess); only the bytes before it are plain.
			k := bits.TrailingZeros64(special) >> 3
			if w&swarHigh&(1<<(8*k)-1) != 0 {
				f |= strNonASCII
			}
			return i + k, f
		}
		if w&swarHigh != 0 {
			f |= strNonASCII
		}
		i += 8
	}
	for ; i < len(data); i++ {
		c := data[i]
		if c == '"' || c == '\\' || c < 0x20 {
			break
		}
		if c >= utf8.RuneSelf {
			f |= strNonASCII
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

// scanNumber validates the number starting at data[i] (a minus sign or a
// digit) against the JSON grammar and returns the offset after it and
// whether it is an integer (no fraction, no exponent).
func scanNumber(data []byte, i int) (int, bool, error) {
	if data[i] == '-' {
		i++
		if i == len(data) {
			return i, false, errEnd
		}
	}
	switch c := data[i]; {
	case c == '0':
		i++
	case '1' <= c && c <= '9':
		i++
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	default:
		return i, false, syntaxErr(data, i, "in numeric literal")
	}
	integer := true
	if i < len(data) && data[i] == '.' {
		integer = false
		i++
		if i == len(data) {
			return i, false, errEnd
		}
		if !isDigit(data[i]) {
			return i, false, syntaxErr(data, i, "after decimal point in numeric literal")
		}
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		integer = false
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i == len(data) {
			return i, false, errEnd
		}
		if !isDigit(data[i]) {
			return i, false, syntaxErr(data, i, "in exponent of numeric literal")
		}
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	}
	return i, integer, nil
}

// scanLiteral checks that lit (true, false or null) starts at data[i].
func scanLiteral(data []byte, i int, lit string) (int, error) {
	for k := 0; k < len(lit); k++ {
		if i+k == len(data) {
			return i + k, errEnd
		}
		if data[i+k] != lit[k] {
			return i + k, syntaxErr(data, i+k, "in literal "+lit+" (expecting "+quoteChar(lit[k])+")")
		}
	}
	return i + len(lit), nil
}

// skipValue validates the JSON value starting at data[i] and returns the
// offset after it. depth is the number of arrays and objects around the
// value. It walks nested values with a loop and a bit stack (1 for an
// object, 0 for an array) rather than by recursion, so that deep input
// cannot exhaust the goroutine's stack.
func skipValue(data []byte, i, depth int) (int, error) {
	var inline [4]uint64 // 256 levels before the stack moves to the heap
	stack := inline[:]
	level := 0 // containers opened here and not yet closed
	var err error
	for {
		// data[i] starts a value.
		if i == len(data) {
			return i, errEnd
		}
		switch c := data[i]; c {
		case '"':
			if i, _, err = scanString(data, i); err != nil {
				return i, err
			}
		case '{', '[':
			if depth+level >= maxNestingDepth {
				return i, syntaxErr(data, i, "exceeded max depth")
			}
			w, bit := level>>6, uint64(1)<<(level&63)
			if w == len(stack) {
				stack = append(stack, 0)
			}
			if c == '{' {
				stack[w] |= bit
			} else {
				stack[w] &^= bit
			}
			level++
			i = skipSpace(data, i+1)
			if i == len(data) {
				return i, errEnd
			}
			if c == '{' {
				if data[i] == '}' {
					i++
					level--
					break
				}
				if i, _, err = scanKey(data, i, keysNone); err != nil {
					return i, err
				}
				continue
			}
			if data[i] == ']' {
				i++
				level--
				break
			}
			continue
		case 't':
			if i, err = scanLiteral(data, i, "true"); err != nil {
				return i, err
			}
		case 'f':
			if i, err = scanLiteral(data, i, "false"); err != nil {
				return i, err
			}
		case 'n':
			if i, err = scanLiteral(data, i, "null"); err != nil {
				return i, err
			}
		default:
			if c != '-' && !isDigit(c) {
				return i, syntaxErr(data, i, "looking for beginning of value")
			}
			if i, _, err = scanNumber(data, i); err != nil {
				return i, err
			}
		}
		// A value ended at data[i]: close containers until one goes on.
		for {
			if level == 0 {
				return i, nil
			}
			i = skipSpace(data, i)
			if i == len(data) {
				return i, errEnd
			}
			inObject := stack[(level-1)>>6]>>((level-1)&63)&1 == 1
			c := data[i]
			if c == ',' {
				i = skipSpace(data, i+1)
				if inObject {
					if i, _, err = scanKey(data, i, keysNone); err != nil {
						return i, err
					}
				}
				break
			}
			if inObject && c == '}' || !inObject && c == ']' {
				i++
				level--
				continue
			}
			if inObject {
				return i, syntaxErr(data, i, "after object key:value pair")
			}
			return i, syntaxErr(data, i, "after array element")
		}
	}
}

// errEnd reports input that ends inside a value.
var errEnd = errors.New("unexpected end of JSON input")

// syntaxErr describes invalid JSON at data[i], in encoding/json's words.
func syntaxErr(data []byte, i int, context string) error {
	return fmt.Errorf("invalid character %s %s (offset %d)", quoteChar(data[i]), context, i)
}

// typeError reports a member whose value, starting with c, has the wrong
// JSON type.
func typeError(c byte, field, want string) error {
	kind := "number"
	switch c {
	case '"':
		kind = "string"
	case '{':
		kind = "object"
	case '[':
		kind = "array"
	case 't', 'f':
		kind = "bool"
	case 'n':
		kind = "null"
	}
	return fmt.Errorf("cannot unmarshal %s into %s of type %s", kind, field, want)
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func decodeError(err error) error {
	return fmt.Errorf("mcp: decode message: %w", err)
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
