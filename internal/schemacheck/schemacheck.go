// Package schemacheck compiles the JSON Schemas that servers send (a tool's
// input and output schemas) for validation, the one way the registry and
// the transport engine both use: the 2020-12 dialect unless the schema
// names another, and no external reference ever followed.
package schemacheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// noLoader refuses every external $ref. A schema comes from a server we do
// not control: following its references would let it make us fetch URLs or
// read local files (checklist §2: never auto-dereference a network $ref).
// References inside the document (#/$defs/...) need no loader.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema references are not followed: %s", url)
}

// Compile compiles raw under the name url (a URN of the caller's choosing,
// used in error messages). An empty schema compiles to nil: nothing to
// check.
func Compile(url string, raw json.RawMessage) (*jsonschema.Schema, error) {
	return compile(url, raw, false)
}

// CompileAsserting is Compile with "format" checked rather than taken as
// an annotation: an elicitation form's string fields name formats (email,
// uri, date, date-time) that an answer must match before it is sent.
func CompileAsserting(url string, raw json.RawMessage) (*jsonschema.Schema, error) {
	return compile(url, raw, true)
}

func compile(url string, raw json.RawMessage, assertFormat bool) (*jsonschema.Schema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	// MCP says a schema without $schema is 2020-12.
	c.DefaultDraft(jsonschema.Draft2020)
	if assertFormat {
		c.AssertFormat()
	}
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// Message returns what a validation error says is wrong and where, without
// the first line, which names the caller's internal schema URL.
func Message(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	msg := ve.Error()
	if _, rest, ok := strings.Cut(msg, "\n"); ok {
		msg = rest
	}
	return strings.TrimSpace(msg)
}
