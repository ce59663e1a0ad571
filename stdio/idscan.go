package stdio

import (
	"bytes"

	"github.com/tako-mcp/tako/internal/jsonscan"
	"github.com/tako-mcp/tako/mcp"
)

// idScanner finds the top-level "id" and "method" members of a JSON object
// fed to it in pieces, without holding the object: it is how an oversized
// line is attributed to its call while it is being discarded. The scanning
// is jsonscan's, which reports where the top-level object's keys and values
// begin and end; this keeps just the bytes of those keys and of the id's
// value, each bounded. The id may come anywhere, before or after a huge
// "result"; an "id" nested deeper, or inside a string, is not the id.
//
// On a JSON object it agrees with encoding/json (FuzzScanID checks that):
// keys are compared after unescaping, and of duplicate "id" members the
// last one counts. On invalid input it stops at the first error and
// reports what it saw before it, and never fails.
type idScanner struct {
	sc        jsonscan.Scanner
	done      bool // the top-level value ended, is not an object, or is not JSON
	capturing bool // the current key or id value goes to buf
	overflow  bool // the capture passed its limit
	limit     int
	buf       []byte
	isID      bool // the current top-level member's key is "id"

	id        mcp.ID
	hasID     bool
	hasMethod bool
}

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
	for i := 0; i < len(p) && !s.done; {
		j, ev := s.sc.Step(p, i, 1)
		if s.capturing {
			s.capture(p[i:j])
		}
		i = j
		switch ev {
		case jsonscan.More:
		case jsonscan.Begin:
			switch {
			case s.sc.Depth() == 0:
				s.done = p[i] != '{' // a batch or a scalar
			case s.sc.Key():
				s.startCapture(maxKeyCapture)
			case s.isID:
				s.startCapture(maxIDCapture)
			}
		case jsonscan.End:
			if s.sc.Key() {
				s.endKey()
			} else if s.isID {
				s.endID()
			}
		default: // Done or Error
			s.done = true
		}
	}
}

func (s *idScanner) startCapture(limit int) {
	s.buf = s.buf[:0]
	s.capturing, s.overflow, s.limit = true, false, limit
}

func (s *idScanner) capture(b []byte) {
	if s.overflow || len(s.buf)+len(b) > s.limit {
		s.overflow = true
		return
	}
	s.buf = append(s.buf, b...)
}

func (s *idScanner) endKey() {
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
}

func (s *idScanner) endID() {
	s.capturing = false
	var id mcp.ID
	if !s.overflow && id.UnmarshalJSON(s.buf) == nil && id.IsValid() {
		s.id, s.hasID = id, true
	}
}

// keyIs reports whether raw, a scanned key with its quotes, is name once
// unescaped.
func keyIs(raw []byte, name string) bool {
	k := raw[1 : len(raw)-1]
	if bytes.IndexByte(k, '\\') >= 0 {
		var buf [maxKeyCapture]byte
		k = jsonscan.AppendUnquoted(buf[:0], k)
	}
	return string(k) == name
}
