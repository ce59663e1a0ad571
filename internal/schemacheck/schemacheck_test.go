package schemacheck

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func mustCompile(t *testing.T, schema string) *Schema {
	t.Helper()
	s, err := Compile(json.RawMessage(schema))
	if err != nil {
		t.Fatalf("Compile(%s): %v", schema, err)
	}
	return s
}

func valid(t *testing.T, s *Schema, doc string) error {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatal(err)
	}
	return s.Validate(v)
}

// TestOlderDialectsValidated: the dialects servers write besides
// 2020-12 keep their meaning: each schema refuses one document and
// accepts another, by the keyword its dialect spells its own way.
func TestOlderDialectsValidated(t *testing.T) {
	for _, c := range []struct {
		name, schema, bad, good string
	}{
		{"2020-12 by default", `{"type":"object","required":["n"]}`, `{}`, `{"n":1}`},
		{"draft-07 without its #", `{"$schema":"http://json-schema.org/draft-07/schema","type":"object","required":["n"]}`, `{}`, `{"n":1}`},
		{"draft-07 over https", `{"$schema":"https://json-schema.org/draft-07/schema#","if":{"required":["a"]},"then":{"required":["b"]}}`, `{"a":1}`, `{"a":1,"b":2}`},
		{"draft-06", `{"$schema":"http://json-schema.org/draft-06/schema#","properties":{"n":{"exclusiveMinimum":1}}}`, `{"n":1}`, `{"n":1.5}`},
		{"draft-04's boolean exclusiveMinimum", `{"$schema":"http://json-schema.org/draft-04/schema#","properties":{"n":{"type":"number","minimum":1,"exclusiveMinimum":true}}}`, `{"n":1}`, `{"n":1.5}`},
		{"draft-04's exclusiveMaximum false", `{"$schema":"http://json-schema.org/draft-04/schema#","properties":{"n":{"maximum":3,"exclusiveMaximum":false}}}`, `{"n":3.5}`, `{"n":3}`},
		{"draft-04 nested in definitions", `{"$schema":"http://json-schema.org/draft-04/schema#","definitions":{"pos":{"minimum":0,"exclusiveMinimum":true}},"properties":{"n":{"$ref":"#/definitions/pos"}}}`, `{"n":0}`, `{"n":2}`},
		{"draft-04 data that looks like a keyword is kept", `{"$schema":"http://json-schema.org/draft-04/schema#","properties":{"o":{"enum":[{"exclusiveMinimum":true,"minimum":1}]}}}`, `{"o":{"minimum":1}}`, `{"o":{"exclusiveMinimum":true,"minimum":1}}`},
		{"2019-09 tuple items", `{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"array","items":[{"type":"string"}],"additionalItems":false}`, `["a",1]`, `["a"]`},
		{"2019-09 list items", `{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"array","items":{"type":"string"}}`, `["a",1]`, `["a","b"]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := mustCompile(t, c.schema)
			if err := valid(t, s, c.bad); err == nil {
				t.Errorf("%s accepted", c.bad)
			}
			if err := valid(t, s, c.good); err != nil {
				t.Errorf("%s refused: %v", c.good, err)
			}
		})
	}
}

// TestSchemasRefused: what cannot be validated as written is an error at
// compile time, never a schema that checks something else.
func TestSchemasRefused(t *testing.T) {
	for _, c := range []struct{ schema, want string }{
		{`{"$schema":"https://example.com/my-meta-schema","type":"object"}`, "unsupported JSON Schema dialect"},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","$recursiveRef":"#"}`, "$recursiveRef"},
		{`{"$ref":"http://127.0.0.1:1/schema.json"}`, "external schema references are not followed: http://127.0.0.1:1/schema.json"},
		{`{"properties":{"a":{"$ref":"file:///etc/passwd"}}}`, "not followed"},
		{`{"type":5}`, "type"},
		{`{"minLength":"x"}`, "not a JSON Schema"},
		{`{"pattern":"(?<=a)b"}`, "pattern"},
		{`{"type":`, "not a JSON Schema"},
	} {
		_, err := Compile(json.RawMessage(c.schema))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Compile(%s): %v, want an error saying %q", c.schema, err, c.want)
		}
	}
	if _, err := Compile(json.RawMessage(`{"$schema":"https://example.com/x"}`)); !errors.Is(err, ErrDialect) {
		t.Errorf("an unknown dialect: %v, want ErrDialect", err)
	}
	if s, err := Compile(json.RawMessage(" \n")); s != nil || err != nil {
		t.Errorf("an empty schema: %v, %v; want nil, nil (nothing to check)", s, err)
	}
}

// TestProblemSaysWhereInOneLine: the library's chain of "validating"
// prefixes becomes one location, and a huge value refused is quoted
// only in part.
func TestProblemSaysWhereInOneLine(t *testing.T) {
	s := mustCompile(t, `{"type":"object","properties":{"note":{"type":"object","properties":{"text":{"type":"string","maxLength":5}}}}}`)
	err := valid(t, s, `{"note":{"text":"naïve café, \"quoted\"\nand a second line"}}`)
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("%v, want a *ValidationError", err)
	}
	if want := "at /properties/note/properties/text: maxLength:"; !strings.HasPrefix(ve.Problem, want) || strings.Contains(ve.Problem, "validating") {
		t.Errorf("problem %q, want it to start %q", ve.Problem, want)
	}
	if Message(err) != ve.Problem {
		t.Errorf("Message %q, want the problem", Message(err))
	}

	big := `{"note":{"text":"` + strings.Repeat("日本語のテキスト\\n", 100_000) + `"}}`
	err = valid(t, s, big)
	if err == nil || len(Message(err)) > maxProblemLine+len("…") || !strings.HasSuffix(Message(err), "…") {
		t.Errorf("the problem of a 2.4 MB value is %d bytes: %.200s", len(Message(err)), Message(err))
	}
	// An enum's message writes the value as it is, newlines and all.
	enum := mustCompile(t, `{"enum":["a","b"]}`)
	err = enum.Validate(strings.Repeat("eine Zeile, \"zitiert\"\n", 100_000))
	if msg := Message(err); err == nil || len(msg) > (maxProblemLines+1)*(maxProblemLine+4) || !strings.HasSuffix(msg, "more lines)") {
		t.Errorf("the problem of a value of 100,000 lines is %d bytes in %d lines", len(msg), strings.Count(msg, "\n")+1)
	}
}

// TestFormatsAsserted: CompileAsserting checks the formats an elicitation
// form names, on the root and on the root's properties; Compile takes
// them as annotations, as JSON Schema's default is.
func TestFormatsAsserted(t *testing.T) {
	cases := []struct {
		format    string
		good, bad []string
	}{
		{"email", []string{"ada@example.com", "a.b+c@sub.example.co.uk", `"ada lovelace"@example.com`, "ada@[127.0.0.1]", "ada@[IPv6:::1]", "zoë@例え.jp"},
			[]string{"ada(at)example.com", "ada@", "@example.com", "ada@@example.com", "a..b@example.com", "ada@exa mple.com", "ada@-example.com", "Ada <ada@example.com>"}},
		{"uri", []string{"https://example.com/page?q=1#frag", "urn:isbn:0451450523", "mailto:ada@example.com"},
			[]string{"not a uri", "/relative/path", "example.com", "https://exa mple.com/"}},
		{"date", []string{"1815-12-10", "2024-02-29"}, []string{"10/12/1815", "2023-02-29", "1815-12-10T00:00:00Z", "tomorrow"}},
		{"date-time", []string{"2025-12-31T23:59:00Z", "2025-12-31t23:59:00.123+01:00"}, []string{"2025-12-31", "2025-12-31 23:59:00", "tomorrow", "2025-12-31T25:00:00Z"}},
		{"time", []string{"23:59:00Z", "08:30:00.5+02:00"}, []string{"23:59", "noon"}},
	}
	for _, c := range cases {
		form, err := CompileAsserting(json.RawMessage(`{"type":"object","properties":{"f":{"type":"string","format":"` + c.format + `"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		field, err := CompileAsserting(json.RawMessage(`{"type":"string","format":"` + c.format + `"}`))
		if err != nil {
			t.Fatal(err)
		}
		plain := mustCompile(t, `{"type":"string","format":"`+c.format+`"}`)
		for _, g := range c.good {
			if err := form.Validate(map[string]any{"f": g}); err != nil {
				t.Errorf("%s %q refused: %v", c.format, g, err)
			}
		}
		for _, b := range c.bad {
			err := form.Validate(map[string]any{"f": b})
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Format == nil || ve.Format.Property != "f" || ve.Format.Format != c.format || ve.Format.Value != b {
				t.Errorf("%s %q in a form: %v, want a FormatError naming f", c.format, b, err)
			}
			if err := field.Validate(b); err == nil {
				t.Errorf("%s %q as the root: accepted", c.format, b)
			}
			if err := plain.Validate(b); err != nil {
				t.Errorf("%s %q without assertion: %v, want format taken as an annotation", c.format, b, err)
			}
		}
	}
	// A format this package does not know is an annotation even when
	// asserted.
	s, _ := CompileAsserting(json.RawMessage(`{"type":"string","format":"x-colour"}`))
	if err := s.Validate("mauve"); err != nil {
		t.Errorf("an unknown format: %v", err)
	}
}

// TestRefCycleRefused: a schema whose $ref leads back to where it started
// without a step into the value crashed the client: the validator
// followed it until the stack overflowed, which kills the process. Such a
// schema is refused when compiled; a recursive schema, which steps into
// the value at each turn, is not.
func TestRefCycleRefused(t *testing.T) {
	for _, schema := range []string{
		`{"$ref":"#"}`,
		`{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/a"}}}`,
		`{"allOf":[{"$ref":"#"}]}`,
		`{"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/b"}]},"b":{"not":{"$ref":"#/$defs/a"}}},"properties":{"x":{"$ref":"#/$defs/a"}}}`,
		`{"$ref":"#/properties/a","properties":{"a":{"$ref":"#"}}}`,
		`{"$defs":{"n":{"$anchor":"node","if":{"$ref":"#node"}}},"$ref":"#node"}`,
		`{"$id":"https://example.com/root","$defs":{"x":{"$id":"other","$ref":"https://example.com/other"}}}`,
		`{"$dynamicAnchor":"meta","$dynamicRef":"#meta"}`,
		`{"dependentSchemas":{"a":{"$ref":"#"}}}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"a":{"$ref":"#/definitions/b"},"b":{"$ref":"#/definitions/a"}},"$ref":"#/definitions/a"}`,
		`{"$schema":"http://json-schema.org/draft-04/schema#","definitions":{"a":{"id":"#a","allOf":[{"$ref":"#a"}]}}}`,
		"{\"\\u0024ref\":\"#\"}",
		`{"$r\u0065f":"#"}`,
	} {
		_, err := Compile(json.RawMessage(schema))
		if !errors.Is(err, ErrRefCycle) {
			t.Errorf("Compile(%s): %v, want ErrRefCycle", schema, err)
		}
	}
	for _, schema := range []string{
		`{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#"}}}}`,
		`{"$defs":{"tree":{"type":"object","additionalProperties":{"$ref":"#/$defs/tree"}}},"$ref":"#/$defs/tree"}`,
		`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"type":"string"}},"allOf":[{"$ref":"#/$defs/a"},{"$ref":"#/$defs/a"}]}`,
		`{"$defs":{"a b/c~d":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a%20b~1c~0d"}}}`,
		`{"$defs":{"any":true,"none":false},"properties":{"x":{"$ref":"#/$defs/any"},"y":{"allOf":[{"$ref":"#/$defs/any"}]}}}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"n":{"type":"object","properties":{"next":{"$ref":"#/definitions/n"}}}},"$ref":"#/definitions/n","allOf":[{"$ref":"#"}]}`,
	} {
		s := mustCompile(t, schema)
		if err := valid(t, s, `{"children":[{"children":[]}],"x":"a","next":{"next":{}}}`); err != nil && !strings.Contains(err.Error(), "type") {
			t.Errorf("%s: %v", schema, err)
		}
	}
}

// FuzzCompileAndValidate: whatever schema a server sends and whatever
// value is checked against it, compiling and validating return an error
// or nothing; they do not panic, and they do not run away.
func FuzzCompileAndValidate(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"]}`,
		`{"$ref":"#/$defs/a","$defs":{"a":{"anyOf":[{"type":"string"},{"$ref":"#/$defs/b"}]},"b":{"type":"array","items":{"$ref":"#/$defs/a"}}}}`,
		`{"$schema":"http://json-schema.org/draft-04/schema#","properties":{"n":{"minimum":1,"exclusiveMinimum":true}}}`,
		`{"$schema":"https://json-schema.org/draft/2019-09/schema","items":[{"type":"string"}],"additionalItems":false}`,
		`{"$dynamicAnchor":"m","properties":{"x":{"$dynamicRef":"#m"}}}`,
		`{"if":{"required":["a"]},"then":{"required":["b"]},"else":{"not":{}}}`,
		`{"type":"string","format":"email","pattern":"^[a-z]+@"}`,
	} {
		f.Add([]byte(s), []byte(`{"n":1,"a":[1,"x",{"b":null}],"x":"x"}`))
	}
	f.Fuzz(func(t *testing.T, schema, value []byte) {
		for _, compile := range []func(json.RawMessage) (*Schema, error){Compile, CompileAsserting} {
			s, err := compile(schema)
			if err != nil || s == nil {
				continue
			}
			var v any
			if json.Unmarshal(value, &v) == nil {
				_ = s.Validate(v)
			}
		}
	})
}
