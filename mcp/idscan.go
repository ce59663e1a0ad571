package mcp

import (
	"bytes"

	"github.com/tako-mcp/tako/internal/jsonscan"
)

// IDScanner finds the top-level "id" and "method" members of a JSON object
// fed to it in pieces, without holding the object or requiring it to be
// valid: it is how a message that cannot be read (too large to hold, or
// malformed) is attributed to its call, so that the call fails at once
// rather than at its deadline. stdio uses it on an oversized line while
// it discards it; ResponseID on a message that did not decode. The scanning
// is a jsonscan.Scanner watching the top-level members; this keeps just
// the bytes of their keys and of the id's value, each bounded. The id may
// come anywhere, before or after a huge "result"; an "id" nested deeper,
// or inside a string, is not the id.
//
// On a JSON object it agrees with encoding/json (FuzzScanID checks that):
// keys are compared after unescaping, and of duplicate "id" members the
// last one counts. On invalid input it stops at the first error and
// reports what it saw before it, and never fails.
type IDScanner struct {
	sc       jsonscan.Scanner
	done     bool // the top-level value ended or is not JSON
	buf      []byte
	overflow bool // the capture passed its limit
	isID     bool // the current top-level member's key is "id"

	id        ID // the last valid top-level id
	hasMethod bool
	// hasReply records a top-level "jsonrpc", "result" or "error" member:
	// what makes an object with an id a response gone wrong rather than,
	// say, a log record that happens to have an "id".
	hasReply bool
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

// Result returns the top-level id, if the object had a valid one (a string
// or an integer), and whether it had a "method" member.
func (s *IDScanner) Result() (id ID, request bool) {
	return s.id, s.hasMethod
}

// Feed scans the next piece of input.
func (s *IDScanner) Feed(p []byte) {
	for i := 0; i < len(p) && !s.done; {
		j, ev := s.sc.Step(p, i, 1)
		key := s.sc.Key()
		if s.sc.Depth() == 1 && (key || s.isID) && (ev == jsonscan.End || s.sc.Partial()) {
			limit := maxIDCapture
			if key {
				limit = maxKeyCapture
			}
			if piece := p[s.sc.Start():j]; s.overflow || len(s.buf)+len(piece) > limit {
				s.overflow = true
			} else {
				s.buf = append(s.buf, piece...)
			}
		}
		i = j
		switch ev {
		case jsonscan.More:
			continue
		case jsonscan.End:
			if s.sc.Depth() == 1 {
				s.member(key)
			}
		default: // Done or Error
			s.done = true
		}
	}
}

// member takes in a top-level key, or a value, that ended, whose bytes
// are in s.buf unless it overflowed.
func (s *IDScanner) member(key bool) {
	ok := !s.overflow
	switch {
	case key:
		s.isID = ok && keyIs(s.buf, "id")
		s.hasMethod = s.hasMethod || ok && keyIs(s.buf, "method")
		s.hasReply = s.hasReply || ok && (keyIs(s.buf, "jsonrpc") || keyIs(s.buf, "result") || keyIs(s.buf, "error"))
		if s.isID {
			// A later "id" member replaces an earlier one, as in
			// encoding/json; until its value is read there is none.
			s.id = ID{}
		}
	case s.isID:
		var id ID
		if ok && id.UnmarshalJSON(s.buf) == nil && id.IsValid() {
			s.id = id
		}
	}
	s.buf, s.overflow = s.buf[:0], false
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

// ResponseID returns the id of data, a message that failed to decode, when
// it looks like a response: a top-level object with a valid id, a
// "jsonrpc", "result" or "error" member, and no "method". The rest of
// data need not be valid (a bad escape, nesting past the limit, a wrong
// "jsonrpc" value); the scan stops at the first syntax error and keeps what
// it found before it. A Conn that cannot decode a response uses it to fail
// exactly the call it belonged to.
func ResponseID(data []byte) (ID, bool) {
	var s IDScanner
	s.Feed(data)
	id, request := s.Result()
	if request || !s.hasReply || !id.IsValid() {
		return ID{}, false
	}
	return id, true
}
