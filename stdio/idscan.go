package stdio

import (
	"bytes"
	"encoding/json"

	"github.com/tako-mcp/tako/mcp"
)

// idScanner finds the top-level "id" and "method" members of a JSON object
// fed to it in pieces, without holding the object: it is how an oversized
// line is attributed to its call while it is being discarded. It tracks only
// what that needs (string and escape state, nesting depth, and where it is
// in the top-level object) and captures just the bytes of top-level keys and
// of the id's value, each bounded. The id may come anywhere, before or after
// a huge "result"; an "id" nested deeper, or inside a string, is not the id.
//
// It does not validate JSON. On valid input it agrees with encoding/json
// (FuzzScanID checks that): keys are compared after unescaping, and of
// duplicate "id" members the last one counts. On invalid input it reports
// whatever it saw and never fails.
type idScanner struct {
	depth     int // nesting depth: 1 inside the top-level object
	state     scanState
	inString  bool
	escaped   bool // the previous string byte was a backslash
	scalar    bool // inside a bare literal (number, true, false, null) at depth 1
	capturing bool // bytes of the current key or id value go to buf
	overflow  bool // the capture passed its limit
	limit     int
	buf       []byte
	isID      bool // the current top-level member's key is "id"
	done      bool // the top-level value ended, or is not an object

	id        mcp.ID
	hasID     bool
	hasMethod bool
}

type scanState uint8

const (
	stStart scanState = iota // before the top-level value
	stKey                    // in the top-level object, expecting a key or '}'
	stColon                  // after a key, expecting ':'
	stValue                  // after ':', expecting a value
	stAfter                  // after a value, expecting ',' or '}'
)

const (
	// maxKeyCapture bounds a captured key: enough for "method" with every
	// letter \u-escaped, so any key longer than this is neither.
	maxKeyCapture = 64
	// maxIDCapture bounds the raw form of an id value. An id longer than
	// this is treated as absent: the call then fails by its own timeout
	// rather than by this error.
	maxIDCapture = 1024
)

// result returns the top-level id, if the object had a valid one (a string
// or an integer), and whether it had a "method" member.
func (s *idScanner) result() (id mcp.ID, request bool) {
	if s.hasID {
		id = s.id
	}
	return id, s.hasMethod
}

// feed scans the next piece of input.
func (s *idScanner) feed(p []byte) {
	for i := 0; i < len(p); i++ {
		if s.done {
			return
		}
		c := p[i]
		if s.inString {
			if !s.capturing && !s.escaped {
				// Nothing to keep: jump to the next byte that can end the
				// string or start an escape. Huge payloads are strings, so
				// this is where the time goes.
				j := bytes.IndexAny(p[i:], `"\`)
				if j < 0 {
					return
				}
				i += j
				c = p[i]
			}
			if s.capturing {
				s.capture(c)
			}
			switch {
			case s.escaped:
				s.escaped = false
			case c == '\\':
				s.escaped = true
			case c == '"':
				s.inString = false
				if s.depth == 1 {
					s.endString()
				}
			}
			continue
		}
		if s.scalar {
			if isLiteralByte(c) {
				if s.capturing {
					s.capture(c)
				}
				continue
			}
			s.endScalar() // and c is handled below
		}
		if s.depth > 1 {
			switch c {
			case '"':
				s.inString = true
			case '{', '[':
				s.depth++
			case '}', ']':
				s.depth--
				if s.depth == 1 {
					s.state = stAfter
				}
			}
			continue
		}
		if isSpace(c) {
			continue
		}
		if s.depth == 0 {
			if c == '{' && s.state == stStart {
				s.depth, s.state = 1, stKey
			} else {
				s.done = true // a batch, a scalar, or trailing bytes
			}
			continue
		}
		switch c {
		case '"':
			s.inString = true
			switch {
			case s.state == stKey:
				s.startCapture(maxKeyCapture, c)
			case s.state == stValue && s.isID:
				s.startCapture(maxIDCapture, c)
			}
		case ':':
			if s.state == stColon {
				s.state = stValue
			}
		case ',':
			s.state, s.isID = stKey, false
		case '{', '[':
			s.depth++
		case '}':
			s.depth, s.done = 0, true
		case ']':
			// Not valid at depth 1; ignore it.
		default:
			if s.state == stValue {
				s.scalar = true
				if s.isID {
					s.startCapture(maxIDCapture, c)
				}
			}
		}
	}
}

func (s *idScanner) startCapture(limit int, first byte) {
	s.buf = append(s.buf[:0], first)
	s.capturing, s.overflow, s.limit = true, false, limit
}

func (s *idScanner) capture(c byte) {
	if len(s.buf) >= s.limit {
		s.overflow = true
		return
	}
	s.buf = append(s.buf, c)
}

// endString handles the end of a string at depth 1: a key, or a value.
func (s *idScanner) endString() {
	switch s.state {
	case stKey:
		s.capturing = false
		s.isID = !s.overflow && keyIs(s.buf, "id")
		if !s.overflow && keyIs(s.buf, "method") {
			s.hasMethod = true
		}
		if s.isID {
			// A later "id" member replaces an earlier one, as in
			// encoding/json; until its value is read there is none.
			s.hasID = false
		}
		s.state = stColon
	case stValue:
		if s.isID {
			s.finishID()
		}
		s.state = stAfter
	}
}

func (s *idScanner) endScalar() {
	s.scalar = false
	if s.isID {
		s.finishID()
	}
	s.state = stAfter
}

func (s *idScanner) finishID() {
	s.capturing = false
	if s.overflow {
		return
	}
	var id mcp.ID
	if id.UnmarshalJSON(s.buf) == nil && id.IsValid() {
		s.id, s.hasID = id, true
	}
}

// keyIs reports whether raw, a quoted JSON string, is name once unescaped.
func keyIs(raw []byte, name string) bool {
	if len(raw) < 2 {
		return false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1:len(raw)-1]) == name
	}
	var k string
	return json.Unmarshal(raw, &k) == nil && k == name
}

// isLiteralByte reports whether c can continue a bare JSON literal.
func isLiteralByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '+' || c == '.'
}
