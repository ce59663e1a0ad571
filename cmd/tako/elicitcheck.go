package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/tako-mcp/tako/internal/schemacheck"
)

// check validates one typed answer against the field's schema, and says
// what is wrong in words a person acts on ("email wants an email address
// such as name@example.com").
func (f *formField) check(v any) error {
	if f.schema == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	err = f.schema.Validate(doc)
	var ve *jsonschema.ValidationError
	if err == nil || !errors.As(err, &ve) {
		return err
	}
	return errors.New(f.name + " " + answerProblem(ve))
}

// answerProblem words the first leaf of a validation error.
func answerProblem(ve *jsonschema.ValidationError) string {
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	switch k := ve.ErrorKind.(type) {
	case *kind.Format:
		return fmt.Sprintf("wants %s, not %s", formatExample(k.Want), quoteAny(k.Got))
	case *kind.MinLength:
		return fmt.Sprintf("wants at least %d characters, not %d", k.Want, k.Got)
	case *kind.MaxLength:
		return fmt.Sprintf("wants at most %d characters, not %d", k.Want, k.Got)
	case *kind.Minimum:
		return fmt.Sprintf("wants a number of at least %s, not %s", ratString(k.Want), ratString(k.Got))
	case *kind.Maximum:
		return fmt.Sprintf("wants a number of at most %s, not %s", ratString(k.Want), ratString(k.Got))
	case *kind.ExclusiveMinimum:
		return fmt.Sprintf("wants a number above %s, not %s", ratString(k.Want), ratString(k.Got))
	case *kind.ExclusiveMaximum:
		return fmt.Sprintf("wants a number below %s, not %s", ratString(k.Want), ratString(k.Got))
	case *kind.MinItems:
		return fmt.Sprintf("wants at least %d choices, not %d", k.Want, k.Got)
	case *kind.MaxItems:
		return fmt.Sprintf("wants at most %d choices, not %d", k.Want, k.Got)
	case *kind.Enum:
		vals := make([]string, len(k.Want))
		for i, w := range k.Want {
			vals[i] = quoteAny(w)
		}
		return "wants one of " + strings.Join(vals, ", ")
	case *kind.Pattern:
		return fmt.Sprintf("must match the pattern %s", k.Want)
	}
	return "does not fit the form: " + schemacheck.Message(ve)
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
