package mcpgrpc

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"
)

// structEncoder writes a Struct as JSON straight from the message, the bytes
// encoding/json gives for s.AsMap() (keys sorted, HTML characters escaped,
// numbers in the same form), without building that map. Going through AsMap
// and json.Marshal allocated a map, an interface value for every member,
// reflection state and a growing buffer per schema: for a list of 2,002
// tools with ~2 KB schemas that was half the client's heap for the call.
//
// One encoder serves many Structs: its buffer and key scratch are reused,
// and each result is copied out at its exact size.
type structEncoder struct {
	buf  []byte
	keys []string // the keys of the objects being written, innermost last
}

// raw returns s as a JSON object; nil gives nil.
func (e *structEncoder) raw(s *structpb.Struct) (json.RawMessage, error) {
	if s == nil {
		return nil, nil
	}
	var err error
	e.buf, err = e.appendStruct(e.buf[:0], s)
	if err != nil {
		return nil, err
	}
	out := make(json.RawMessage, len(e.buf))
	copy(out, e.buf)
	if cap(e.buf) > maxKeptEncodeBuffer {
		e.buf = nil
	}
	return out, nil
}

// maxKeptEncodeBuffer is the largest buffer an encoder keeps between
// Structs; one grown by a huge value is dropped.
const maxKeptEncodeBuffer = 1 << 20

func (e *structEncoder) appendStruct(b []byte, s *structpb.Struct) ([]byte, error) {
	fields := s.GetFields()
	if len(fields) == 0 {
		return append(b, '{', '}'), nil
	}
	start := len(e.keys)
	for k := range fields {
		e.keys = append(e.keys, k)
	}
	end := len(e.keys)
	slices.Sort(e.keys[start:end])
	b = append(b, '{')
	var err error
	for i := start; i < end; i++ {
		// e.keys may move while a member is written (its own objects
		// append keys), so it is indexed afresh each time.
		k := e.keys[i]
		if i > start {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		if b, err = e.appendValue(b, fields[k]); err != nil {
			break
		}
	}
	clear(e.keys[start:end])
	e.keys = e.keys[:start]
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

func (e *structEncoder) appendValue(b []byte, v *structpb.Value) ([]byte, error) {
	switch k := v.GetKind().(type) {
	case *structpb.Value_NumberValue:
		return appendJSONFloat(b, k.NumberValue)
	case *structpb.Value_StringValue:
		return appendJSONString(b, k.StringValue), nil
	case *structpb.Value_BoolValue:
		return strconv.AppendBool(b, k.BoolValue), nil
	case *structpb.Value_StructValue:
		return e.appendStruct(b, k.StructValue)
	case *structpb.Value_ListValue:
		b = append(b, '[')
		var err error
		for i, item := range k.ListValue.GetValues() {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = e.appendValue(b, item); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	}
	// NullValue, or no kind at all: AsMap gives nil for both.
	return append(b, "null"...), nil
}

// appendJSONFloat formats f as encoding/json does; NaN and the infinities,
// which JSON cannot hold, are an error, as they are there.
func appendJSONFloat(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, 64))
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// 1e-07 becomes 1e-7, as in encoding/json.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

const hexDigits = "0123456789abcdef"

// appendJSONString quotes s as encoding/json does by default: <, > and &
// escaped for HTML, invalid UTF-8 replaced by U+FFFD, U+2028 and U+2029
// escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
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
		if r == utf8.RuneError && size == 1 {
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
