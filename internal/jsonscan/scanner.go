package jsonscan

// An Event is why Scanner.Step stopped.
type Event uint8

const (
	// More: the input ran out. Step goes on from there with the next piece.
	More Event = iota
	// Begin: a key, or a value, that Step was asked to watch begins at the
	// returned offset. Depth and Key tell which.
	Begin
	// End: the watched key or value ended just before the returned offset.
	End
	// Done: the top-level value ended just before the returned offset.
	Done
	// Error: the input is not JSON at the returned offset. Step stays
	// stopped there.
	Error
)

// Scanner scans one JSON value, strictly, from input it is fed in pieces
// of any size: its whole state is in it between calls to Step. The zero
// value is ready for a top-level value.
type Scanner struct {
	state uint8 // what is due, or the kind of token in progress
	sub   uint8 // progress inside the token: its escape, number state or letters matched
	key   bool  // the token in progress, begun or ended is an object key
	begun bool  // Begin was reported for the token at the offset Step resumes at
	code  code  // why Step stopped with Error
	lit   byte  // the first letter of the literal in progress
	outer int   // containers around the value, as counted against MaxDepth
	level int   // containers open inside it

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
	stToken                    // at a key or value whose Begin was reported
	stString
	stNumber
	stLiteral
	stDone
	stError
)

// Depth returns the number of arrays and objects that enclose the key or
// value of the last Begin or End.
func (s *Scanner) Depth() int { return s.level }

// Key reports whether the token of the last Begin or End is an object key.
func (s *Scanner) Key() bool { return s.key }

// Step scans data from offset i until it runs out, the value ends, or the
// input is found invalid, and returns the offset reached and why it
// stopped. It also stops at the Begin and End of each key and value that
// watch or fewer arrays and objects enclose: with watch -1 it reports
// none; with 1, the top-level value and the keys and values of its
// members.
//
// It is written as a threaded state machine, each label a state, so that
// the whole-buffer Skip runs as fast as a hand-written skipper: the state
// lives in locals and goes back into s only when Step stops, and the jump
// table at the top is taken once per call, not once per token.
func (s *Scanner) Step(data []byte, i, watch int) (int, Event) {
	state, sub, level, key := s.state, s.sub, s.level, s.key
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
	case stToken:
		goto token
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
	if data[i] != ']' {
		goto token
	}
	i++
	level--
	goto ended
keyOrClose:
	if i = Space(data, i); i == len(data) {
		state = stKeyOrClose
		goto out
	}
	if data[i] == '}' {
		i++
		level--
		key = false
		goto ended
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
		if !s.begun {
			state, s.begun, ev = stToken, true, Begin
			goto out
		}
		s.begun = false
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
ended: // a token ended, or a container closed
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
		i++
		level--
		key = false
		goto ended
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

// err words the error Step stopped with at data[i].
func (s *Scanner) err(data []byte, i int) error {
	if s.code == errLiteral {
		return literalError(data, i, literal(s.lit), int(s.sub))
	}
	return syntaxError(data, i, contexts[s.code])
}

// push records the kind of the container opened at level.
func (s *Scanner) push(level int, object bool) {
	w, bit := level>>6, uint64(1)<<(level&63)
	p := &s.kinds
	if w > 0 {
		for len(s.deep) < w {
			s.deep = append(s.deep, 0)
		}
		p = &s.deep[w-1]
	}
	if object {
		*p |= bit
	} else {
		*p &^= bit
	}
}

// inObject reports whether the innermost of level open containers is an
// object.
func (s *Scanner) inObject(level int) bool {
	l := level - 1
	w := s.kinds
	if l >= 64 {
		w = s.deep[l>>6-1]
	}
	return w>>(l&63)&1 == 1
}
