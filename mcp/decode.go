package mcp

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/tako-mcp/tako/internal/jsonscan"
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
// side by side. The JSON grammar, its depth limit and its strings are
// jsonscan's; the rules of encoding/json's struct decoding (v1) are kept
// here:
//
//   - member names are matched after unescaping, case-insensitively with
//     Unicode simple folding (so "ID", "Id" and "\u0069d" all mean "id", and
//     "jſonrpc" with U+017F means "jsonrpc");
//   - a repeated member overwrites the earlier one, except that null leaves a
//     string member ("jsonrpc", "method", "code", "message") as it was,
//     resets the id and the error, and is kept as the raw value "null" by
//     params, result and data; a second error object is decoded into the
//     first one, so members it lacks keep their earlier values;
//   - a value of the wrong type is an error, but only once the rest of the
//     input has been found to be valid JSON.

// A member names one of the members the decoder looks at: first the message
// object's, then the error object's.
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

var memberNames = [...]string{"", "jsonrpc", "id", "method", "params", "result", "error", "code", "message", "data"}

// decodeMessage is DecodeMessage's implementation.
func decodeMessage(data []byte) (*Message, error) {
	var (
		m       Message
		version []byte // the last "jsonrpc" string literal, quotes included
		semErr  error  // the first wrong-type error; reported only if the JSON is valid
	)
	i := jsonscan.Space(data, 0)
	if i == len(data) {
		return nil, decodeError(jsonscan.ErrEnd)
	}
	if data[i] != '{' {
		return nil, decodeNonObject(data, i)
	}
	i, empty := jsonscan.Open(data, i)
	for more := !empty; more; {
		key, kf, start, err := jsonscan.Key(data, i)
		if err != nil {
			return nil, decodeError(err)
		}
		name, c := lookup(key, kf, memberJSONRPC, memberError), data[start]
		var end int
		var f jsonscan.Flags
		if name == memberError && c == '{' {
			if m.Error == nil {
				m.Error = new(Error)
			}
			end, err = decodeErrorObject(data, start, m.Error, &semErr)
		} else {
			end, f, err = jsonscan.Value(data, start, 1)
		}
		if err == nil {
			i, more, err = jsonscan.Next(data, end, '}')
		}
		if err != nil {
			return nil, decodeError(err)
		}
		v := data[start:end:end]
		switch name {
		case memberJSONRPC:
			if isString(c, "jsonrpc", &semErr) {
				version = v
			}
		case memberID:
			switch {
			case c == '"':
				m.ID = StringID(jsonscan.Unquote(v, f))
			case c == 'n':
				m.ID = ID{}
			case c == '-' || isDigit(c):
				id, ierr := decodeNumberID(v, f&jsonscan.Integer != 0)
				m.ID = id
				semErr = firstErr(semErr, ierr)
			default:
				semErr = firstErr(semErr, fmt.Errorf("mcp: id %s is neither a string nor an integer", v))
			}
		case memberMethod:
			if isString(c, "method", &semErr) {
				m.Method = decodeMethod(v, f)
			}
		case memberParams:
			m.Params = v
		case memberResult:
			m.Result = v
		case memberError:
			if c == 'n' {
				m.Error = nil
			} else if c != '{' {
				semErr = firstErr(semErr, typeError(c, "error", "object"))
			}
		}
	}
	if err := jsonscan.Finish(data, i); err != nil {
		return nil, decodeError(err)
	}
	if semErr != nil {
		return nil, decodeError(semErr)
	}
	if string(version) != `"2.0"` {
		v := ""
		if version != nil {
			v = jsonscan.Unquote(version, jsonscan.Escaped|jsonscan.NonASCII) // flags unknown: assume both
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
	end, _, err := jsonscan.Value(data, i, 0)
	if err == nil {
		err = jsonscan.Finish(data, end)
	}
	if err != nil {
		return decodeError(err)
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
	i, empty := jsonscan.Open(data, i)
	for more := !empty; more; {
		key, kf, start, err := jsonscan.Key(data, i)
		end, f := start, jsonscan.Flags(0)
		if err == nil {
			end, f, err = jsonscan.Value(data, start, 2)
		}
		if err == nil {
			i, more, err = jsonscan.Next(data, end, '}')
		}
		if err != nil {
			return i, err
		}
		v, c := data[start:end:end], data[start]
		switch lookup(key, kf, memberCode, memberData) {
		case memberCode:
			if n, ok := parseInt64(v, f&jsonscan.Integer != 0); ok {
				e.Code = n
			} else if c != 'n' {
				*semErr = firstErr(*semErr, typeError(c, "error.code", "int64"))
			}
		case memberMessage:
			if isString(c, "error.message", semErr) {
				e.Message = jsonscan.Unquote(v, f)
			}
		case memberData:
			e.Data = v
		}
	}
	return i, nil
}

// isString reports whether a member value starting with c sets a member
// that encoding/json decodes into a string. A string does; null leaves
// the member as it was; any other value is a type error, which is kept in
// *semErr.
func isString(c byte, field string, semErr *error) bool {
	if c != '"' && c != 'n' {
		*semErr = firstErr(*semErr, typeError(c, field, "string"))
	}
	return c == '"'
}

// lookup matches a member name, as encoding/json matches it, against the
// names of the members from first to last. An ASCII name without escapes,
// the rule, is compared ignoring ASCII case with the one known name that
// has its first letter and length; any other is unescaped and folded with
// Unicode's rules (bytes.EqualFold's: "ſ", U+017F, matches "s").
func lookup(name []byte, f jsonscan.Flags, first, last member) member {
	if f == 0 {
		if len(name) == 0 {
			return memberOther
		}
		m := memberSlots[nameSlot(name[0], len(name))]
		if m < first || m > last || !equalFoldLower(name, memberNames[m]) {
			return memberOther
		}
		return m
	}
	var buf [64]byte
	name = jsonscan.AppendUnquoted(buf[:0], name)
	for m := first; m <= last; m++ {
		if bytes.EqualFold(name, []byte(memberNames[m])) {
			return m
		}
	}
	return memberOther
}

// memberSlots holds each known name's member at its nameSlot, a hash that
// no two of them share.
var memberSlots = func() (slots [32]member) {
	for m := memberJSONRPC; m <= memberData; m++ {
		slots[nameSlot(memberNames[m][0], len(memberNames[m]))] = m
	}
	return slots
}()

func nameSlot(first byte, n int) int { return (int(first|0x20) + n) & 31 }

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

// knownMethods are the methods that a client receives, which decodeMethod
// returns as constants, so that decoding a request or notification from the
// server allocates nothing for its method.
var knownMethods = [...]string{
	NotificationProgress, NotificationMessage, NotificationCancelled, NotificationToolsListChanged,
	NotificationPromptsListChanged, NotificationResourcesListChanged, NotificationResourceUpdated,
	NotificationElicitationComplete, NotificationSubscriptionsAck, NotificationTasksStatus, NotificationTasks,
	MethodPing, MethodRootsList, MethodSamplingCreateMessage, MethodElicitationCreate,
}

// decodeMethod decodes a method name's literal.
func decodeMethod(lit []byte, f jsonscan.Flags) string {
	if f == 0 {
		for _, name := range knownMethods {
			if string(lit[1:len(lit)-1]) == name {
				return name
			}
		}
	}
	return jsonscan.Unquote(lit, f)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// typeError reports a member whose value, starting with c, has the wrong
// JSON type.
func typeError(c byte, field, want string) error {
	kind := "number"
	if k := strings.IndexByte(`"{[tfn`, c); k >= 0 {
		kind = [...]string{"string", "object", "array", "bool", "bool", "null"}[k]
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
