package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/tako-mcp/tako/internal/jsonvalue"
	"github.com/tako-mcp/tako/internal/schemacheck"
	"github.com/tako-mcp/tako/mcp"
)

// Form elicitation done by the engine (checklist §7C), so that every
// caller's handler gets it the same way, whichever wire carried the
// request (a legacy server request, a 2026-07-28 inputRequests entry, a
// gRPC dependent request):
//
//   - the requestedSchema is checked before the handler runs: it must be
//     the flat object of primitive properties the spec allows, and compile.
//     A schema that is not is the server's fault, answered with -32602 and
//     the handler never called;
//   - an accepted answer gets the schema's defaults for every property the
//     handler left out, so a handler that only shows the fields a person
//     changed (or accepts an empty form) sends what the server asked for;
//   - the completed answer is validated against the schema, formats
//     included. One that does not conform is not sent as accept: the spec
//     says a client validates before sending, and turning it into a
//     decline would report a choice the user never made. It is an
//     *ElicitationContentError instead, which fails the call on the
//     2026-07-28 wire (its caller gets the error; nothing is sent, which is
//     how MRTR declines) and is answered as a JSON-RPC error (-32603: the
//     fault is the client's, not the request's) to a legacy server.

// ElicitationContentError reports an accepted form answer that does not
// conform to the requested schema once its defaults are applied. The answer
// is not sent to the server.
type ElicitationContentError struct {
	// Err says which fields are wrong and why.
	Err error
}

func (e *ElicitationContentError) Error() string {
	return "mcp: the elicitation answer does not match the requested schema: " + schemacheck.Message(e.Err)
}

func (e *ElicitationContentError) Unwrap() error { return e.Err }

// elicitFormTypes are the property types a requestedSchema may use.
var elicitFormTypes = map[string]bool{"string": true, "number": true, "integer": true, "boolean": true, "array": true}

// elicitForm is a checked requestedSchema: the compiled schema and the
// defaults of its properties.
type elicitForm struct {
	schema   *schemacheck.Schema
	defaults map[string]json.RawMessage
}

// compileElicitForm checks raw against the spec's restricted form schema
// and compiles it. An absent schema asks for nothing: no defaults, no
// check.
func compileElicitForm(raw json.RawMessage) (*elicitForm, error) {
	if b := bytes.TrimSpace(raw); len(b) == 0 || string(b) == "null" {
		return &elicitForm{}, nil
	}
	var root struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil, fmt.Errorf("requestedSchema: %v", err)
	}
	if root.Type != "object" {
		return nil, fmt.Errorf("requestedSchema: type is %q, want \"object\"", root.Type)
	}
	f := &elicitForm{defaults: map[string]json.RawMessage{}}
	for name, p := range root.Properties {
		var prop struct {
			Type       string          `json:"type"`
			Default    json.RawMessage `json:"default"`
			Properties json.RawMessage `json:"properties"`
			Items      *struct {
				Type  string          `json:"type"`
				Enum  json.RawMessage `json:"enum"`
				AnyOf json.RawMessage `json:"anyOf"`
			} `json:"items"`
		}
		if err := json.Unmarshal(p, &prop); err != nil {
			return nil, fmt.Errorf("requestedSchema: property %q: %v", name, err)
		}
		if !elicitFormTypes[prop.Type] || prop.Properties != nil {
			return nil, fmt.Errorf("requestedSchema: property %q: type %q is not a primitive (string, number, integer, boolean, or an array of enum strings)", name, prop.Type)
		}
		if prop.Type == "array" && (prop.Items == nil || (prop.Items.Enum == nil && prop.Items.AnyOf == nil)) {
			return nil, fmt.Errorf("requestedSchema: property %q: an array must list its choices in items.enum or items.anyOf", name)
		}
		if len(prop.Default) > 0 && string(prop.Default) != "null" {
			f.defaults[name] = prop.Default
		}
	}
	s, err := schemacheck.CompileAsserting(raw)
	if err != nil {
		return nil, fmt.Errorf("requestedSchema: %v", err)
	}
	f.schema = s
	return f, nil
}

// complete returns res with the form's defaults filled in and checks the
// result. res is not modified: a handler may reuse its map.
func (f *elicitForm) complete(res *mcp.ElicitResult) (*mcp.ElicitResult, error) {
	if f.schema == nil {
		return res, nil
	}
	content := make(map[string]any, len(res.Content)+len(f.defaults))
	maps.Copy(content, res.Content)
	for name, d := range f.defaults {
		if _, ok := content[name]; ok {
			continue
		}
		var v any
		if err := json.Unmarshal(d, &v); err != nil {
			return nil, &ElicitationContentError{Err: fmt.Errorf("default of %q: %v", name, err)}
		}
		content[name] = v
	}
	// Through JSON, so that whatever Go values the handler used are
	// checked as the server will read them.
	b, err := json.Marshal(content)
	if err != nil {
		return nil, &ElicitationContentError{Err: err}
	}
	doc, err := jsonvalue.Decode(b)
	if err != nil {
		return nil, &ElicitationContentError{Err: err}
	}
	if err := f.schema.Validate(doc); err != nil {
		return nil, &ElicitationContentError{Err: err}
	}
	out := *res
	out.Content = content
	return &out, nil
}

// elicit runs the elicitation handler on one request whose params are
// decoded and whose mode is declared: see the note at the top of the file.
func (h *Handlers) elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	var form *elicitForm
	if p.IsURL() {
		if p.URL == "" {
			return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: "URL elicitation without a url"}
		}
	} else {
		var err error
		if form, err = compileElicitForm(p.RequestedSchema); err != nil {
			return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: "bad elicitation/create params: " + err.Error()}
		}
	}
	res, err := h.Elicitation(ctx, p)
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, fmt.Errorf("mcp: the elicitation handler returned neither a result nor an error")
	}
	switch res.Action {
	case mcp.ElicitAccept:
	case mcp.ElicitDecline, mcp.ElicitCancel:
		if res.Content != nil {
			// Content belongs to accept alone; what a declined form held
			// stays with the user.
			out := *res
			out.Content = nil
			return &out, nil
		}
		return res, nil
	default:
		return nil, fmt.Errorf("mcp: the elicitation handler answered with action %q; want accept, decline or cancel", res.Action)
	}
	if form == nil {
		// URL mode: accept carries no content.
		out := *res
		out.Content = nil
		return &out, nil
	}
	return form.complete(res)
}
