package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/tako-mcp/tako/internal/jsonvalue"
	"github.com/tako-mcp/tako/internal/schemacheck"
)

// check validates one typed answer against the field's schema, and says
// what is wrong in words a person acts on ("email wants an email address
// such as name@example.com"). The property's own keywords are worded
// here; the compiled schema then checks the answer as the engine will
// check the whole form, for whatever else the property says.
func (f *formField) check(v any) error {
	if msg := f.prop.problem(v); msg != "" {
		return errors.New(f.name + " " + msg)
	}
	if f.schema == nil {
		return nil
	}
	// Through JSON, as the engine and the server will read it.
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	doc, err := jsonvalue.Decode(b)
	if err != nil {
		return err
	}
	if err := f.schema.Validate(doc); err != nil {
		return errors.New(f.name + " does not fit the form: " + schemacheck.Message(err))
	}
	return nil
}

// problem words the first keyword of p that v fails, "" when none does.
func (p *formProperty) problem(v any) string {
	switch v := v.(type) {
	case string:
		if valid, known := schemacheck.FormatValid(p.Format, v); known && !valid {
			return fmt.Sprintf("wants %s, not %s", formatExample(p.Format), quoteAny(v))
		}
		n := utf8.RuneCountInString(v)
		if p.MinLength != nil && n < *p.MinLength {
			return fmt.Sprintf("wants at least %d characters, not %d", *p.MinLength, n)
		}
		if p.MaxLength != nil && n > *p.MaxLength {
			return fmt.Sprintf("wants at most %d characters, not %d", *p.MaxLength, n)
		}
		if p.Pattern != "" {
			// A pattern Go cannot compile is the schema check's to report.
			if re, err := regexp.Compile(p.Pattern); err == nil && !re.MatchString(v) {
				return fmt.Sprintf("must match the pattern %s", p.Pattern)
			}
		}
	case int64, float64:
		x := ratOf(v)
		bound := func(n *json.Number, fails func(int) bool, words string) string {
			b := ratOf(n)
			if b == nil || !fails(x.Cmp(b)) {
				return ""
			}
			return fmt.Sprintf("wants a number %s %s, not %s", words, ratString(b), ratString(x))
		}
		for _, msg := range []string{
			bound(p.Minimum, func(c int) bool { return c < 0 }, "of at least"),
			bound(p.Maximum, func(c int) bool { return c > 0 }, "of at most"),
			bound(p.ExclusiveMinimum, func(c int) bool { return c <= 0 }, "above"),
			bound(p.ExclusiveMaximum, func(c int) bool { return c >= 0 }, "below"),
		} {
			if msg != "" {
				return msg
			}
		}
	case []string:
		if p.MinItems != nil && len(v) < *p.MinItems {
			return fmt.Sprintf("wants at least %d choices, not %d", *p.MinItems, len(v))
		}
		if p.MaxItems != nil && len(v) > *p.MaxItems {
			return fmt.Sprintf("wants at most %d choices, not %d", *p.MaxItems, len(v))
		}
	}
	return ""
}

// ratOf is the exact value of a typed answer or of a bound the server
// wrote; nil for an absent bound or one that is not a number.
func ratOf(v any) *big.Rat {
	switch v := v.(type) {
	case int64:
		return new(big.Rat).SetInt64(v)
	case float64:
		return new(big.Rat).SetFloat64(v)
	case *json.Number:
		if v == nil {
			return nil
		}
		r, ok := new(big.Rat).SetString(v.String())
		if !ok {
			return nil
		}
		return r
	}
	return nil
}

// formatExample says what a format looks like.
func formatExample(format string) string {
	switch format {
	case "email":
		return "an email address such as name@example.com"
	case "uri":
		return "a URI such as https://example.com/page"
	case "date":
		return "a date such as 2025-12-31"
	case "date-time":
		return "a date and time such as 2025-12-31T23:59:00Z"
	case "time":
		return "a time such as 23:59:00Z"
	}
	return "a value of the format " + format
}

func quoteAny(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func ratString(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	return strings.TrimRight(strings.TrimRight(r.FloatString(6), "0"), ".")
}

// limits describes the ranges and lengths a property sets, for its prompt.
func (p *formProperty) limits() []string {
	var out []string
	switch {
	case p.Minimum != nil && p.Maximum != nil:
		out = append(out, fmt.Sprintf("%s to %s", p.Minimum, p.Maximum))
	case p.Minimum != nil:
		out = append(out, fmt.Sprintf("at least %s", p.Minimum))
	case p.Maximum != nil:
		out = append(out, fmt.Sprintf("at most %s", p.Maximum))
	}
	switch {
	case p.MinLength != nil && p.MaxLength != nil:
		out = append(out, fmt.Sprintf("%d to %d characters", *p.MinLength, *p.MaxLength))
	case p.MinLength != nil:
		out = append(out, fmt.Sprintf("at least %d characters", *p.MinLength))
	case p.MaxLength != nil:
		out = append(out, fmt.Sprintf("at most %d characters", *p.MaxLength))
	}
	return out
}
