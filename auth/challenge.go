package auth

import (
	"fmt"
	"net/http"
	"strings"
)

// maxChallengeLen bounds the WWW-Authenticate text parsed (all header lines
// together).
const maxChallengeLen = 16 << 10

// Challenge is one challenge of a WWW-Authenticate header (RFC 9110
// §11.6.1): a scheme and either auth parameters or a token68.
type Challenge struct {
	// Scheme is the auth scheme as sent, e.g. "Bearer" or "DPoP"; compare
	// it case-insensitively.
	Scheme string
	// Params holds the auth parameters, names lower-cased, values unquoted.
	Params map[string]string
	// Token68 is the token68 form, when the challenge has one instead of
	// parameters.
	Token68 string
}

// ParseChallenges parses WWW-Authenticate header values (all lines of the
// header, in order) strictly: a parameter given twice in one challenge, an
// unterminated quoted string, a bad escape, a missing value or stray
// characters are errors wrapping ErrMalformedChallenge, since a challenge a
// client misreads can send it to the wrong metadata.
func ParseChallenges(values []string) ([]Challenge, error) {
	n := 0
	for _, v := range values {
		n += len(v) + 2
	}
	if n > maxChallengeLen {
		return nil, fmt.Errorf("%w: %d bytes, more than %d", ErrMalformedChallenge, n, maxChallengeLen)
	}
	var out []Challenge
	for _, v := range values {
		cs, err := parseChallengeLine(v)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	return out, nil
}

// ResourceChallenge is what a client acts on in a 401 or 403 from an MCP
// server: the Bearer (or DPoP) challenge's parameters.
type ResourceChallenge struct {
	// Scheme is "Bearer" or "DPoP".
	Scheme string
	// ResourceMetadata is the protected resource metadata URL (RFC 9728
	// §5.1), or "".
	ResourceMetadata string
	// Scope lists the scopes the server wants, or nil.
	Scope []string
	// Error is the error code (RFC 6750 §3.1), e.g. "invalid_token" or
	// "insufficient_scope", or "use_dpop_nonce" (RFC 9449 §9).
	Error string
	// ErrorDescription is error_description, for diagnostics.
	ErrorDescription string
}

// ParseResourceChallenge reads the WWW-Authenticate header of h and returns
// its Bearer challenge, or its DPoP challenge when there is no Bearer one.
// A header that is absent or has neither gives an empty challenge and no
// error; one that does not parse gives an error wrapping
// ErrMalformedChallenge.
func ParseResourceChallenge(h http.Header) (*ResourceChallenge, error) {
	cs, err := ParseChallenges(h.Values("Www-Authenticate"))
	if err != nil {
		return nil, err
	}
	var pick *Challenge
	for i := range cs {
		switch {
		case strings.EqualFold(cs[i].Scheme, "Bearer"):
			pick = &cs[i]
		case strings.EqualFold(cs[i].Scheme, "DPoP") && pick == nil:
			pick = &cs[i]
		}
		if pick != nil && strings.EqualFold(pick.Scheme, "Bearer") {
			break
		}
	}
	rc := &ResourceChallenge{}
	if pick == nil {
		return rc, nil
	}
	rc.Scheme = pick.Scheme
	rc.ResourceMetadata = pick.Params["resource_metadata"]
	rc.Scope = strings.Fields(pick.Params["scope"])
	rc.Error = pick.Params["error"]
	rc.ErrorDescription = pick.Params["error_description"]
	return rc, nil
}

// parseChallengeLine parses one header line: a comma-separated list of
// challenges, each "scheme [token68 | param *(, param)]".
func parseChallengeLine(s string) ([]Challenge, error) {
	p := &chParser{s: s}
	var out []Challenge
	for {
		p.skipListSeparators()
		if p.eof() {
			return out, nil
		}
		scheme := p.token()
		if scheme == "" {
			return nil, p.errorf("expected an auth scheme")
		}
		c := Challenge{Scheme: scheme, Params: map[string]string{}}
		hadSpace := p.skipSpace()
		if p.eof() || p.peek() == ',' {
			out = append(out, c)
			continue
		}
		if !hadSpace {
			return nil, p.errorf("expected a space after scheme %q", scheme)
		}
		if !p.isParamAhead(p.i) {
			tok := p.token68()
			p.skipSpace()
			if tok == "" || !p.eof() && p.peek() != ',' {
				return nil, p.errorf("expected parameters or a token68 after scheme %q", scheme)
			}
			c.Token68 = tok
			out = append(out, c)
			continue
		}
		for {
			name := p.token()
			if name == "" {
				return nil, p.errorf("expected a parameter name")
			}
			p.skipSpace()
			if p.eof() || p.peek() != '=' {
				return nil, p.errorf("parameter %q has no value", name)
			}
			p.i++
			p.skipSpace()
			var val string
			if !p.eof() && p.peek() == '"' {
				v, err := p.quoted()
				if err != nil {
					return nil, err
				}
				val = v
			} else {
				val = p.token()
				if val == "" {
					return nil, p.errorf("parameter %q has an empty or invalid value", name)
				}
			}
			key := strings.ToLower(name)
			if _, dup := c.Params[key]; dup {
				return nil, p.errorf("parameter %q given twice", key)
			}
			c.Params[key] = val
			p.skipSpace()
			if p.eof() {
				break
			}
			if p.peek() != ',' {
				return nil, p.errorf("expected a comma after parameter %q", name)
			}
			// A comma: another parameter of this challenge, or the next
			// challenge (a token not followed by "=").
			save := p.i
			p.skipListSeparators()
			if p.eof() {
				break
			}
			if !p.isParamAhead(p.i) {
				p.i = save
				break
			}
		}
		out = append(out, c)
	}
}

type chParser struct {
	s string
	i int
}

func (p *chParser) eof() bool  { return p.i >= len(p.s) }
func (p *chParser) peek() byte { return p.s[p.i] }

func (p *chParser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s at byte %d", ErrMalformedChallenge, fmt.Sprintf(format, args...), p.i)
}

func (p *chParser) skipSpace() bool {
	start := p.i
	for !p.eof() && (p.peek() == ' ' || p.peek() == '\t') {
		p.i++
	}
	return p.i > start
}

func (p *chParser) skipListSeparators() {
	for !p.eof() && (p.peek() == ' ' || p.peek() == '\t' || p.peek() == ',') {
		p.i++
	}
}

// isParamAhead reports whether a token followed by optional space and "="
// starts at i (an auth-param rather than a new challenge's scheme).
func (p *chParser) isParamAhead(i int) bool {
	j := i
	for j < len(p.s) && isTokenChar(p.s[j]) {
		j++
	}
	if j == i {
		return false
	}
	for j < len(p.s) && (p.s[j] == ' ' || p.s[j] == '\t') {
		j++
	}
	if j >= len(p.s) || p.s[j] != '=' {
		return false
	}
	// "name=" followed by the end, a comma or another "=" is the padding
	// of a token68, not a parameter.
	j++
	for j < len(p.s) && (p.s[j] == ' ' || p.s[j] == '\t') {
		j++
	}
	return j < len(p.s) && p.s[j] != ',' && p.s[j] != '='
}

func (p *chParser) token() string {
	start := p.i
	for !p.eof() && isTokenChar(p.peek()) {
		p.i++
	}
	return p.s[start:p.i]
}

// token68 reads 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func (p *chParser) token68() string {
	start := p.i
	for !p.eof() && isToken68Char(p.peek()) {
		p.i++
	}
	if p.i == start {
		return ""
	}
	for !p.eof() && p.peek() == '=' {
		p.i++
	}
	return p.s[start:p.i]
}

func (p *chParser) quoted() (string, error) {
	p.i++ // opening quote
	var b strings.Builder
	for !p.eof() {
		c := p.peek()
		switch {
		case c == '"':
			p.i++
			return b.String(), nil
		case c == '\\':
			p.i++
			if p.eof() {
				return "", p.errorf("unterminated escape in a quoted string")
			}
			e := p.peek()
			if e < 0x20 && e != '\t' || e == 0x7f {
				return "", p.errorf("control character in a quoted string")
			}
			b.WriteByte(e)
			p.i++
		case c < 0x20 && c != '\t' || c == 0x7f:
			return "", p.errorf("control character in a quoted string")
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return "", p.errorf("unterminated quoted string")
}

func isTokenChar(c byte) bool {
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func isToken68Char(c byte) bool {
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
		return true
	}
	return strings.IndexByte("-._~+/", c) >= 0
}
