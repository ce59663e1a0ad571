package jsonscan

// An Event is why Scanner.Step stopped.
type Event uint8

const (
	More  Event = iota // the input ran out: Step goes on with the next piece
	End                // a watched key or value ended at the returned offset
	Done               // the top-level value ended at the returned offset
	Error              // the input is not JSON at the returned offset
)

// Scanner scans one JSON value, strictly, from input fed to it in pieces
// of any size: its whole state is in it between calls to Step. It reports
// the end of each key and value down to the depth it is asked to watch,
// and the bytes of the watched token that each call scanned, which is how
// the id recovery captures a key that two pieces split. Value uses it for
// arrays and objects. The zero value is ready for a top-level value.
type Scanner struct {
	state   uint8 // what is due, or the kind of token in progress
	sub     uint8 // progress inside the token: its escape, number state or letters matched
	key     bool  // the token in progress is an object key
	code    code  // why Step stopped with Error
	lit     byte  // the first letter of the literal in progress
	tokKey  bool  // the innermost watched token is a key
	partial bool  // Step stopped inside the innermost watched token
	tokAt   int   // its depth
	start   int   // where its bytes begin in the last Step's data
	level   int   // containers open
	outer   int   // containers around the value, as counted against MaxDepth

	// Bit l is 1 if the container at level l+1 is an object, 0 if it is
	// an array; past 64 levels, the bits go on in deep.
	kinds uint64
	deep  []uint64
}

// Grammar states: what is due next, or the token in progress.
const (
	stValue       uint8 = iota // a value
	stElemOrClose              // after '[': a value or ']'
	stKeyOrClose               // after '{': a key or '}'
	stKey                      // after ',' in an object
	stColon                    // after a key
	stAfter                    // after a value in a container: ',' or its closer
	stString
	stNumber
	stLiteral
	stDone
	stError
)

// The innermost watched key or value, the one that ended at an End or that
// a More stopped inside (Partial), is described by:

// Depth returns the number of arrays and objects around it.
func (s *Scanner) Depth() int { return s.tokAt }

// Key reports whether it is an object key.
func (s *Scanner) Key() bool { return s.tokKey }

// Start returns the offset in the data of the last call to Step where its
// bytes begin: where it begins, or where that call began if it began in an
// earlier piece. (An array or object whose own members are watched is the
// exception: its Start is that of its last watched member.)
func (s *Scanner) Start() int { return s.start }

// Partial reports whether Step stopped for More inside it.
func (s *Scanner) Partial() bool { return s.partial }

// Complete reports whether the input may end where Step stopped: the
// top-level value ended, or it is a number that only more digits would
// go on.
func (s *Scanner) Complete() bool {
	return s.state == stDone || s.state == stNumber && s.level == 0 && numComplete(s.sub)
}

// Err words why the input is not a JSON value, as encoding/json does,
// once Step stopped at data[i] with Error, or with More and the input ends.
func (s *Scanner) Err(data []byte, i int) error {
	switch {
	case s.state != stError:
		return ErrEnd
	case s.code == errLiteral:
		return literalError(data, i, literal(s.lit), int(s.sub))
	}
	return syntaxError(data, i, contexts[s.code])
}

// Step scans data from offset i until the input runs out, the value ends,
// the input is found invalid, or a key or value that watch or fewer arrays
// and objects enclose ends: with watch -1 it reports none; with 1, the
// members of a top-level object (and the elements of a top-level array).
//
// It is written as a threaded state machine, each label a state, so that
// it runs through a whole buffer as fast as a hand-written skipper: the
// state lives in locals and goes back into s only when Step stops, and the
// jump table at the top is taken once per call, not once per token.
func (s *Scanner) Step(data []byte, i, watch int) (int, Event) {
	state, sub, level, key := s.state, s.sub, s.level, s.key
	s.start = i
	var (
		ev  Event
		c   code
		b   byte
		obj bool
	)
	switch state {
	case stElemOrClose:
		goto elemOrClose
	case stKeyOrClose:
		goto keyOrClose
	case stKey:
		goto nextKey
	case stColon:
		goto colon
	case stAfter:
		goto after
	case stString:
		goto str
	case stNumber:
		goto number
	case stLiteral:
		goto literal
	case stDone:
		return i, Done
	case stError:
		return i, Error
	}

	// Each label is a state; state is set only on the way out.
value:
	key = false
	if i = Space(data, i); i == len(data) {
		state = stValue
		goto out
	}
	goto token
elemOrClose:
	key = false
	if i = Space(data, i); i == len(data) {
		state = stElemOrClose
		goto out
	}
	if data[i] == ']' {
		goto closes
	}
	goto token
keyOrClose:
	if i = Space(data, i); i == len(data) {
		state = stKeyOrClose
		goto out
	}
	if data[i] == '}' {
		goto closes
	}
	goto keyStart
nextKey:
	if i = Space(data, i); i == len(data) {
		state = stKey
		goto out
	}
keyStart:
	if data[i] != '"' {
		c = errKey
		goto fail
	}
	key = true
token: // data[i] begins a key or a value
	if level <= watch {
		s.start, s.partial, s.tokAt, s.tokKey = i, true, level, key
	}
	switch b = data[i]; b {
	case '"':
		// Most strings hold no escape and end in the same piece: find
		// the closing quote without the escape machinery.
		if i, _ = scanPlain(data, i+1, 0); i < len(data) && data[i] == '"' {
			i++
			goto ended
		}
		sub = 0
		goto str
	case '{', '[':
		if s.outer+level >= MaxDepth {
			c = errDepth
			goto fail
		}
		s.push(level, b == '{')
		level++
		i++
		if b == '{' {
			goto keyOrClose
		}
		goto elemOrClose
	case 't', 'f', 'n':
		i, sub, s.lit = i+1, 1, b
		goto literal
	}
	if b != '-' && !isDigit(b) {
		c = errValue
		goto fail
	}
	sub = numStart
number:
	if i, sub, c = scanNumber(data, i, sub); c != done {
		state = stNumber
		goto stopped
	}
	goto ended
str:
	if i, sub, _, c = scanString(data, i, sub, 0); c != done {
		state = stString
		goto stopped
	}
	goto ended
literal:
	{
		k := int(sub)
		i, k, c = scanLiteral(data, i, literal(s.lit), k)
		sub = uint8(k)
	}
	if c != done {
		state = stLiteral
		goto stopped
	}
	goto ended
closes: // data[i] closes the innermost container
	i++
	level--
	key = false
	if level <= watch {
		s.tokAt, s.tokKey = level, false
	}
ended: // a token ended, or a container closed
	if level <= watch {
		s.partial = false
	}
	if key {
		if level <= watch {
			state, ev = stColon, End
			goto out
		}
		goto colon
	}
	if level == 0 {
		state, ev = stDone, Done
		goto out
	}
	if level <= watch {
		state, ev = stAfter, End
		goto out
	}
after:
	if i = Space(data, i); i == len(data) {
		state = stAfter
		goto out
	}
	obj = s.inObject(level)
	switch b = data[i]; {
	case b == ',':
		i++
		if obj {
			goto nextKey
		}
		goto value
	case obj && b == '}' || !obj && b == ']':
		goto closes
	case obj:
		c = errMember
	default:
		c = errElement
	}
	goto fail
colon:
	if i = Space(data, i); i == len(data) {
		state = stColon
		goto out
	}
	if data[i] != ':' {
		c = errColon
		goto fail
	}
	i++
	goto value
stopped:
	if c == more {
		goto out
	}
fail:
	state, s.code, ev = stError, c, Error
out:
	s.state, s.sub, s.level, s.key = state, sub, level, key
	return i, ev
}

// literal returns the literal that starts with b: true, false or null.
func literal(b byte) string {
	switch b {
	case 't':
		return "true"
	case 'f':
		return "false"
	}
	return "null"
}

// push records the kind of the container opened at level.
func (s *Scanner) push(level int, object bool) {
	w, bit := s.kindWord(level), uint64(1)<<(level&63)
	if object {
		*w |= bit
	} else {
		*w &^= bit
	}
}

// inObject reports whether the innermost of level open containers is an
// object.
func (s *Scanner) inObject(level int) bool {
	return *s.kindWord(level - 1)>>((level-1)&63)&1 == 1
}

// kindWord returns the word that holds the kind of the container opened at
// level l.
func (s *Scanner) kindWord(l int) *uint64 {
	if l < 64 {
		return &s.kinds
	}
	for len(s.deep) < l>>6 {
		s.deep = append(s.deep, 0)
	}
	return &s.deep[l>>6-1]
}
