package schemacheck

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// assertedFormats collects the formats CompileAsserting checks: the
// root's, and those of the root's properties.
func assertedFormats(s *jsonschema.Schema) map[string]string {
	formats := map[string]string{}
	if s.Format != "" {
		formats[""] = s.Format
	}
	for name, p := range s.Properties {
		if p != nil && p.Format != "" {
			formats[name] = p.Format
		}
	}
	if len(formats) == 0 {
		return nil
	}
	return formats
}

// checkFormats checks the asserted formats of v. Only strings have a
// format (a number whose schema names one is the type check's to refuse),
// and a format this package does not know is taken as an annotation, as
// JSON Schema allows.
func (s *Schema) checkFormats(v any) error {
	if s.formats == nil {
		return nil
	}
	check := func(prop string, v any) error {
		str, ok := v.(string)
		if !ok {
			return nil
		}
		f := s.formats[prop]
		if valid, known := FormatValid(f, str); !known || valid {
			return nil
		}
		fe := &FormatError{Property: prop, Format: f, Value: str}
		where := ""
		if prop != "" {
			where = "at /properties/" + prop + ": "
		}
		return &ValidationError{Problem: truncate(fmt.Sprintf("%sformat: %q is not a valid %s", where, str, f), maxProblemLine), Format: fe}
	}
	if _, ok := s.formats[""]; ok {
		if err := check("", v); err != nil {
			return err
		}
	}
	obj, _ := v.(map[string]any)
	for prop := range s.formats {
		if x, ok := obj[prop]; ok && prop != "" {
			if err := check(prop, x); err != nil {
				return err
			}
		}
	}
	return nil
}

// FormatValid says whether s has format f, and whether f is a format
// this package knows: those an elicitation form may name (email, uri,
// date, date-time) and time. It is the check CompileAsserting makes, for
// a caller that words its own message.
func FormatValid(f, s string) (valid, known bool) {
	switch f {
	case "email":
		return isEmail(s), true
	case "uri":
		u, err := url.Parse(s)
		return err == nil && u.Scheme != "" && !strings.ContainsAny(s, " \t\r\n"), true
	case "date":
		_, err := time.Parse(time.DateOnly, s)
		return err == nil, true
	case "date-time":
		// RFC 3339 allows a lowercase t and z; Go's layout does not.
		_, err := time.Parse(time.RFC3339Nano, strings.ToUpper(s))
		return err == nil, true
	case "time":
		_, err := time.Parse("15:04:05.999999999Z07:00", strings.ToUpper(s))
		return err == nil, true
	}
	return false, false
}

// isEmail checks an RFC 5321 mailbox: a dot-atom or quoted local part of
// at most 64 bytes, and a host name or an address literal.
func isEmail(s string) bool {
	at := strings.LastIndexByte(s, '@')
	if at <= 0 || at == len(s)-1 || at > 64 {
		return false
	}
	local, domain := s[:at], s[at+1:]
	if strings.HasPrefix(local, `"`) {
		if len(local) < 2 || !strings.HasSuffix(local, `"`) {
			return false
		}
	} else {
		for _, atom := range strings.Split(local, ".") {
			if atom == "" || strings.ContainsFunc(atom, func(r rune) bool {
				return r <= ' ' || r == 0x7f || strings.ContainsRune(`()<>[]:;@\,"`, r)
			}) {
				return false
			}
		}
	}
	if lit, ok := strings.CutPrefix(domain, "["); ok {
		lit, ok = strings.CutSuffix(lit, "]")
		lit = strings.TrimPrefix(lit, "IPv6:")
		_, err := netip.ParseAddr(lit)
		return ok && err == nil
	}
	return isHostname(domain)
}

// isHostname checks RFC 1123 host name syntax: labels of letters, digits
// and hyphens, none starting or ending with a hyphen, at most 63 bytes
// each and 253 in all. Non-ASCII labels (IDNs) are allowed as they are.
func isHostname(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for _, l := range strings.Split(s, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, r := range l {
			if r < 0x80 && !(r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				return false
			}
		}
	}
	return true
}
