// Package mcp holds the Model Context Protocol's data model: JSON-RPC
// messages, the results and parameters of every method a client sends or
// answers, content blocks, capabilities, protocol versions and error codes,
// for every revision from 2024-11-05 to 2026-07-28.
//
// The types are plain structs that marshal to exactly the wire form. Fields
// that a client passes along without looking inside (JSON Schemas, tool
// arguments, structured content, _meta values it does not own) are kept as
// json.RawMessage so that nothing is lost or reordered on the way through:
// a tool's inputSchema reaches the caller byte for byte as the server sent it.
//
// The package does no I/O and starts no goroutines.
package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ID is a JSON-RPC request id: a string or an integer. The zero ID is "no id"
// and marks a notification.
type ID struct {
	str  string
	num  int64
	kind idKind
}

type idKind uint8

const (
	idNone idKind = iota
	idNumber
	idString
)

// Int64ID returns the integer id n.
func Int64ID(n int64) ID { return ID{num: n, kind: idNumber} }

// StringID returns the string id s.
func StringID(s string) ID { return ID{str: s, kind: idString} }

// IsValid reports whether id is a real id rather than the zero "no id".
func (id ID) IsValid() bool { return id.kind != idNone }

// IsString reports whether the id is a string id.
func (id ID) IsString() bool { return id.kind == idString }

// Int64 returns the integer value of a numeric id and whether it is one.
func (id ID) Int64() (int64, bool) { return id.num, id.kind == idNumber }

// String formats the id for logs: numbers bare, strings quoted.
func (id ID) String() string {
	switch id.kind {
	case idNumber:
		return strconv.FormatInt(id.num, 10)
	case idString:
		return strconv.Quote(id.str)
	}
	return "<no id>"
}

// Raw returns the id as it stands in JSON, for example 7 or "abc".
func (id ID) Raw() any {
	switch id.kind {
	case idNumber:
		return id.num
	case idString:
		return id.str
	}
	return nil
}

// AppendJSON appends the JSON form of id to b ("null" for the zero ID).
func (id ID) AppendJSON(b []byte) []byte {
	switch id.kind {
	case idNumber:
		return strconv.AppendInt(b, id.num, 10)
	case idString:
		return AppendJSONString(b, id.str)
	}
	return append(b, "null"...)
}

// MarshalJSON implements json.Marshaler.
func (id ID) MarshalJSON() ([]byte, error) { return id.AppendJSON(nil), nil }

// UnmarshalJSON implements json.Unmarshaler. It accepts strings, integers,
// integral floats such as 3.0 (some peers send those) and null.
func (id *ID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0:
		return errors.New("mcp: empty id")
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("mcp: bad string id: %w", err)
		}
		*id = StringID(s)
	case string(b) == "null":
		*id = ID{}
	default:
		n, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil {
			var ok bool
			if n, ok = parseIntegral(string(b)); !ok {
				return fmt.Errorf("mcp: id %s is neither a string nor an integer", b)
			}
		}
		*id = Int64ID(n)
	}
	return nil
}

// parseIntegral parses a JSON number written with a fraction or an exponent
// (3.0, 1e3, 12.50e1) and reports whether it is exactly an integer that fits
// in an int64. It works on the decimal digits rather than through float64:
// a float64 holds integers exactly only up to 2^53, so 9007199254740993.0
// would otherwise become the id 9007199254740992, and -9223372036854775809.0
// would become math.MinInt64, answering a different request.
func parseIntegral(s string) (int64, bool) {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	mant, exp := s, "0"
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, exp = s[:i], s[i+1:]
	}
	intPart, frac := mant, ""
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		intPart, frac = mant[:i], mant[i+1:]
		if frac == "" {
			return 0, false
		}
	}
	if !isDigits(intPart) || (frac != "" && !isDigits(frac)) {
		return 0, false
	}
	expNeg := false
	if exp != "" && (exp[0] == '+' || exp[0] == '-') {
		expNeg = exp[0] == '-'
		exp = exp[1:]
	}
	if !isDigits(exp) {
		return 0, false
	}
	// An exponent beyond a few digits can only mean "out of range" or "not
	// an integer"; capping it keeps the arithmetic below in bounds.
	e := 1 << 20
	if len(exp) <= 6 {
		e, _ = strconv.Atoi(exp)
	}
	if expNeg {
		e = -e
	}
	digits := strings.TrimLeft(intPart+frac, "0")
	e -= len(frac)
	if digits == "" {
		return 0, true
	}
	for digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		e++
	}
	if e < 0 || len(digits)+e > 19 {
		return 0, false
	}
	lit := digits + strings.Repeat("0", e)
	if neg {
		lit = "-" + lit
	}
	n, err := strconv.ParseInt(lit, 10, 64)
	return n, err == nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Message is one JSON-RPC 2.0 message in any of its three shapes:
//
//   - a request has an ID and a Method;
//   - a notification has a Method and no ID;
//   - a response has an ID (or, for an unparseable request, none) and either
//     Result or Error.
//
// One struct for all three keeps decoding to a single pass, as jsonrpc2 does.
// Params and Result stay raw JSON until a caller asks for a typed value.
type Message struct {
	ID     ID
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *Error
}

// IsRequest reports whether m is a request (a method and an id).
func (m *Message) IsRequest() bool { return m.Method != "" && m.ID.IsValid() }

// IsNotification reports whether m is a notification (a method, no id).
func (m *Message) IsNotification() bool { return m.Method != "" && !m.ID.IsValid() }

// IsResponse reports whether m is a response (no method).
func (m *Message) IsResponse() bool { return m.Method == "" }

// NewRequest returns a request message. params may be nil, raw JSON, or any
// value that marshals to a JSON object.
func NewRequest(id ID, method string, params any) (*Message, error) {
	raw, err := marshalParams(params)
	if err != nil {
		return nil, err
	}
	return &Message{ID: id, Method: method, Params: raw}, nil
}

// NewNotification returns a notification message.
func NewNotification(method string, params any) (*Message, error) {
	raw, err := marshalParams(params)
	if err != nil {
		return nil, err
	}
	return &Message{Method: method, Params: raw}, nil
}

// NewResponse returns a response to the request with the given id. If err is
// non-nil the response carries it as a JSON-RPC error (an *Error keeps its code
// and data; anything else becomes an internal error); otherwise result is
// marshalled into Result.
func NewResponse(id ID, result any, err error) (*Message, error) {
	m := &Message{ID: id}
	if err != nil {
		var rpcErr *Error
		if !errors.As(err, &rpcErr) {
			rpcErr = &Error{Code: CodeInternalError, Message: err.Error()}
		}
		m.Error = rpcErr
		return m, nil
	}
	raw, merr := marshalParams(result)
	if merr != nil {
		return nil, merr
	}
	if raw == nil {
		raw = json.RawMessage("{}")
	}
	m.Result = raw
	return m, nil
}

func marshalParams(v any) (json.RawMessage, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return v, nil
	case []byte:
		return json.RawMessage(v), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("mcp: marshal params: %w", err)
	}
	return b, nil
}

// ErrNotJSONRPC is wrapped by DecodeMessage when the input is valid JSON but
// not a JSON-RPC 2.0 message.
var ErrNotJSONRPC = errors.New("mcp: not a JSON-RPC 2.0 message")

// DecodeMessage parses one JSON-RPC message. It rejects batches (see
// DecodeMessages), a missing or wrong "jsonrpc" member, responses that
// carry neither result nor error or both, and requests or notifications that
// carry a result or an error. A null member counts as absent, since some
// peers send "result":null next to an error; params on a response are
// ignored.
//
// The returned message's Params, Result and Error.Data alias data; callers
// that reuse data must copy them first.
func DecodeMessage(data []byte) (*Message, error) {
	// A hand-written single pass (decode.go) rather than json.Unmarshal:
	// this is the hottest path of every round trip, and reflection cost a
	// dozen allocations per message where this costs one.
	return decodeMessage(data)
}

// DecodeMessages parses a single message or, as 2025-03-26 allows, a batch
// (a JSON array of messages).
func DecodeMessages(data []byte) ([]*Message, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '[' {
		m, err := DecodeMessage(data)
		if err != nil {
			return nil, err
		}
		return []*Message{m}, nil
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(trimmed, &parts); err != nil {
		return nil, fmt.Errorf("mcp: decode batch: %w", err)
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: empty batch", ErrNotJSONRPC)
	}
	msgs := make([]*Message, 0, len(parts))
	for _, p := range parts {
		m, err := DecodeMessage(p)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// AppendJSON appends the compact JSON encoding of m to b. It writes the
// envelope by hand, so encoding costs no allocation beyond growing b; Params
// and Result must already be valid JSON.
func (m *Message) AppendJSON(b []byte) []byte {
	b = append(b, `{"jsonrpc":"2.0"`...)
	if m.ID.IsValid() || (m.Method == "") {
		b = append(b, `,"id":`...)
		b = m.ID.AppendJSON(b)
	}
	if m.Method != "" {
		b = append(b, `,"method":`...)
		b = AppendJSONString(b, m.Method)
		if len(m.Params) > 0 {
			b = append(b, `,"params":`...)
			b = appendCompact(b, m.Params)
		}
	} else if m.Error != nil {
		b = append(b, `,"error":`...)
		b = m.Error.appendJSON(b)
	} else {
		b = append(b, `,"result":`...)
		if len(m.Result) == 0 {
			b = append(b, "{}"...)
		} else {
			b = appendCompact(b, m.Result)
		}
	}
	return append(b, '}')
}

// MarshalJSON implements json.Marshaler.
func (m *Message) MarshalJSON() ([]byte, error) { return m.AppendJSON(nil), nil }

// UnmarshalJSON implements json.Unmarshaler. It decodes a copy of b, since
// DecodeMessage's Params and Result alias its input and encoding/json (a
// json.Decoder in particular) may reuse b once UnmarshalJSON returns.
func (m *Message) UnmarshalJSON(b []byte) error {
	d, err := DecodeMessage(bytes.Clone(b))
	if err != nil {
		return err
	}
	*m = *d
	return nil
}

// appendCompact appends raw JSON, removing the insignificant white space a
// newline-delimited framing cannot carry. Already-compact input (the common
// case, since encoding/json produces it) is copied as is.
func appendCompact(b []byte, raw []byte) []byte {
	if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return append(b, raw...)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		// Invalid JSON is the caller's bug; keep the bytes so the peer's
		// parse error points at it, but never let a newline split the frame.
		for _, c := range raw {
			if c != '\n' && c != '\r' {
				b = append(b, c)
			}
		}
		return b
	}
	return append(b, buf.Bytes()...)
}

// Error is a JSON-RPC error object. It implements error, so a call that the
// server refused returns an *Error that errors.As can recover with its Code
// and Data.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error formats the code and message, and the data when it is short, for
// logs and error chains.
func (e *Error) Error() string {
	if len(e.Data) > 0 && len(e.Data) < 512 {
		return fmt.Sprintf("jsonrpc error %d: %s (data: %s)", e.Code, e.Message, e.Data)
	}
	return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
}

// Is lets errors.Is match an *Error against another *Error by code alone, so
// that errors.Is(err, &mcp.Error{Code: mcp.CodeMethodNotFound}) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

func (e *Error) appendJSON(b []byte) []byte {
	b = append(b, `{"code":`...)
	b = strconv.AppendInt(b, e.Code, 10)
	b = append(b, `,"message":`...)
	b = AppendJSONString(b, e.Message)
	if len(e.Data) > 0 {
		b = append(b, `,"data":`...)
		b = appendCompact(b, e.Data)
	}
	return append(b, '}')
}

// JSON-RPC and MCP error codes. See the checklist's §2 for which era uses
// which.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603

	// CodeResourceNotFound is the 2024-11-05…2025-11-25 code for an unknown
	// resource; 2026-07-28 uses CodeInvalidParams instead.
	CodeResourceNotFound = -32002
	// CodeURLElicitationRequired (2025-11-25) carries URL elicitations in
	// its data.
	CodeURLElicitationRequired = -32042
	// CodeHeaderMismatch (2026-07-28): an HTTP header disagrees with the body.
	CodeHeaderMismatch = -32020
	// CodeMissingRequiredClientCapability (2026-07-28): the request needs a
	// capability the client did not declare.
	CodeMissingRequiredClientCapability = -32021
	// CodeUnsupportedProtocolVersion (2026-07-28): data lists the supported
	// versions.
	CodeUnsupportedProtocolVersion = -32022
	// CodeUserRejected is sent by a client whose user refused a sampling
	// request.
	CodeUserRejected = -1
)

// UnsupportedVersionData is the data of a CodeUnsupportedProtocolVersion
// error (and of the -32602 some legacy servers send for the same reason).
type UnsupportedVersionData struct {
	Supported []string `json:"supported"`
	Requested string   `json:"requested,omitempty"`
}

// AppendJSONString appends s as a JSON string literal. It escapes only what
// JSON requires (and U+2028/U+2029), and replaces invalid UTF-8 with U+FFFD as
// encoding/json does, so its output never contains a raw newline.
func AppendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == 0xFFFD && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"
