// Package schemacheck compiles the JSON Schemas that servers send (a tool's
// input and output schemas, an elicitation form) for validation, the one
// way the registry, the transport engine and the CLI all use: the 2020-12
// dialect unless the schema names another, and no external reference ever
// followed.
//
// The validator is github.com/google/jsonschema-go, which validates
// 2020-12 and draft-07. It replaced santhosh-tekuri/jsonschema, whose
// package init compiles the meta-schemas of five drafts at every start of
// every program that links transport: 1.7 MB and about 7 ms, a fifth of a
// connected stdio client's RSS (bench/README.md [c]). What that library
// did and this one does not, this package does: the older dialects
// servers still write (draft-04 and -06 as draft-07, 2019-09 as 2020-12;
// dialect.go), "format" asserted for an elicitation form (format.go), and
// errors that name where the value went wrong in one short line per
// problem.
package schemacheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// Schema is a compiled schema. Validate is safe for concurrent use.
type Schema struct {
	rs *jsonschema.Resolved
	// formats are the formats asserted: "" for the root's own, else a
	// property of the root object by name (an elicitation form's
	// properties are flat). Nil unless compiled by CompileAsserting.
	formats map[string]string
}

// Compile compiles raw. An empty schema compiles to nil: nothing to check.
// A schema that is not JSON, is not a schema, names a dialect this
// package cannot validate, or refers to anything outside itself is an
// error.
func Compile(raw json.RawMessage) (*Schema, error) {
	return compile(raw, false)
}

// CompileAsserting is Compile with "format" checked rather than taken as
// an annotation: an elicitation form's string fields name formats (email,
// uri, date, date-time) that an answer must match before it is sent. The
// formats checked are the root's and those of the root's properties,
// which is where a form (flat by the spec) has them.
func CompileAsserting(raw json.RawMessage) (*Schema, error) {
	return compile(raw, true)
}

func compile(raw json.RawMessage, assertFormat bool) (*Schema, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, nil
	}
	raw, err := toSupportedDialect(raw)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("not a JSON Schema: %w", err)
	}
	rs, err := s.Resolve(&jsonschema.ResolveOptions{Loader: noLoader})
	if err != nil {
		return nil, err
	}
	// After Resolve, which refuses references outside the document in
	// its words; it follows no cycle, where Validate would.
	if mayRefer(raw) {
		var doc any
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, fmt.Errorf("not a JSON Schema: %w", err)
		}
		if err := checkRefCycles(doc, s.Schema == draft07); err != nil {
			return nil, err
		}
	}
	out := &Schema{rs: rs}
	if assertFormat {
		out.formats = assertedFormats(&s)
	}
	return out, nil
}

// noLoader refuses every external $ref. A schema comes from a server we do
// not control: following its references would let it make us fetch URLs or
// read local files (checklist §2: never auto-dereference a network $ref).
// References inside the document (#/$defs/...) need no loader.
func noLoader(uri *url.URL) (*jsonschema.Schema, error) {
	return nil, fmt.Errorf("external schema references are not followed: %s", uri.Redacted())
}

// mayRefer reports whether the schema raw may hold a $ref or a
// $dynamicRef, without which it has no cycle: false only when no key can
// end in "ref" or "Ref", even one written with \u escapes.
func mayRefer(raw []byte) bool {
	return bytes.Contains(raw, []byte(`ref"`)) || bytes.Contains(raw, []byte(`Ref"`)) || bytes.Contains(raw, []byte(`\u`))
}

// Validate checks v, a value as encoding/json decodes JSON into an any
// (map[string]any, []any, float64, string, bool, nil;
// jsonvalue.Decode makes one faster), and returns a
// *ValidationError saying what is wrong.
func (s *Schema) Validate(v any) error {
	if err := s.rs.Validate(v); err != nil {
		p := problem(err)
		if missing := s.missingRequired(v); missing != "" && !strings.HasPrefix(p, "required:") {
			// The validator stops at its first problem; a model that left
			// out an argument and mistyped another learns both at once.
			p += "\n" + missing
		}
		return &ValidationError{Problem: p}
	}
	if err := s.checkFormats(v); err != nil {
		return err
	}
	return nil
}

// missingRequired words the root's required properties that the object
// v lacks, "" when it lacks none or is not an object.
func (s *Schema) missingRequired(v any) string {
	obj, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	var missing []string
	for _, name := range s.rs.Schema().Required {
		if _, ok := obj[name]; !ok {
			missing = append(missing, strconv.Quote(name))
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return truncate("required: missing properties: ["+strings.Join(missing, " ")+"]", maxProblemLine)
}

// ValidationError is a value that does not match its schema.
type ValidationError struct {
	// Problem says what is wrong and where, in a line or a few (one per
	// alternative that failed, for anyOf and oneOf).
	Problem string
	// Format is set when the value is a string of the wrong format.
	Format *FormatError
}

func (e *ValidationError) Error() string { return e.Problem }

// FormatError is a string that does not have the format its schema
// names.
type FormatError struct {
	Property string // the property of the form, "" for the root
	Format   string // email, uri, date, date-time, time
	Value    string
}

// Message returns what a validation error says is wrong and where.
func Message(err error) string {
	if ve, ok := errors.AsType[*ValidationError](err); ok {
		return ve.Problem
	}
	return err.Error()
}

// maxProblemLine bounds each line of a problem, and maxProblemLines
// their number: the library quotes the value it refused, and a value may
// be a result of megabytes, with a newline in every line of it (an enum's
// message writes a string unquoted).
const (
	maxProblemLine  = 400
	maxProblemLines = 8
)

// problem rewrites the library's error, whose lines read "validating
// root: validating /properties/a: minLength: ...", as "at
// /properties/a: minLength: ...": the innermost schema location, then
// what is wrong.
func problem(err error) string {
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		where := ""
		for {
			rest, ok := strings.CutPrefix(l, "validating ")
			if !ok {
				break
			}
			at, after, ok := strings.Cut(rest, ": ")
			if !ok {
				break
			}
			where, l = at, after
		}
		if where != "" && where != "root" {
			l = "at " + where + ": " + l
		}
		lines[i] = truncate(l, maxProblemLine)
	}
	if n := len(lines) - maxProblemLines; n > 0 {
		lines = append(lines[:maxProblemLines], fmt.Sprintf("… (%d more lines)", n))
	}
	return strings.Join(lines, "\n")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
