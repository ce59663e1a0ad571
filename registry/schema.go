package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/tako-mcp/tako/internal/jsonvalue"
	"github.com/tako-mcp/tako/internal/schemacheck"
	"github.com/tako-mcp/tako/mcp"
)

// compileSchema compiles a tool's input schema. An empty schema compiles to
// nil: nothing to check.
func compileSchema(raw json.RawMessage) (*schemacheck.Schema, error) {
	schema, err := schemacheck.Compile(raw)
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	return schema, nil
}

// validate checks args against schema; a nil schema accepts any object.
func validate(schema *schemacheck.Schema, args json.RawMessage) error {
	v, err := jsonvalue.Decode(args)
	if err != nil {
		return fmt.Errorf("arguments are not valid JSON: %v", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return errors.New("arguments must be a JSON object")
	}
	if schema == nil {
		return nil
	}
	if err := schema.Validate(v); err != nil {
		// The model needs only the list of what is wrong and where.
		return errors.New(schemacheck.Message(err))
	}
	return nil
}

// SchemaFor derives a JSON Schema for the arguments of a local tool from
// the Go type T, which should be a struct. Field names follow the json
// tags; a field is required unless its tag says omitempty or omitzero or it
// is a pointer. A `description:"..."` tag becomes the property's
// description.
func SchemaFor[T any]() (json.RawMessage, error) {
	t := reflect.TypeFor[T]()
	s, err := schemaOf(t, map[reflect.Type]bool{})
	if err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

func schemaOf(t reflect.Type, seen map[reflect.Type]bool) (map[string]any, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}, nil
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}, nil
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}, nil
	case reflect.Slice, reflect.Array:
		items, err := schemaOf(t.Elem(), seen)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": items}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("registry: map key type %s is not string", t.Key())
		}
		vals, err := schemaOf(t.Elem(), seen)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "object", "additionalProperties": vals}, nil
	case reflect.Interface:
		return map[string]any{}, nil
	case reflect.Struct:
		if t == reflect.TypeFor[json.RawMessage]() {
			return map[string]any{}, nil
		}
		if seen[t] {
			return nil, fmt.Errorf("registry: recursive type %s", t)
		}
		seen[t] = true
		defer delete(seen, t)
		props := map[string]any{}
		required := []string{}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" && opts == "" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			ps, err := schemaOf(f.Type, seen)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			if d := f.Tag.Get("description"); d != "" {
				ps["description"] = d
			}
			props[name] = ps
			optional := f.Type.Kind() == reflect.Pointer
			for _, o := range strings.Split(opts, ",") {
				if o == "omitempty" || o == "omitzero" {
					optional = true
				}
			}
			if !optional {
				required = append(required, name)
			}
		}
		s := map[string]any{"type": "object", "properties": props}
		if len(required) > 0 {
			s["required"] = required
		}
		return s, nil
	}
	return nil, fmt.Errorf("registry: cannot describe type %s in JSON Schema", t)
}

// Func makes a local tool of a typed Go function: the schema is derived
// from In with SchemaFor, the arguments are decoded into an In, and the
// returned string becomes the result's text. An error becomes an error
// result with the error's text.
func Func[In any](name, description string, fn func(ctx context.Context, in In) (string, error)) (Tool, error) {
	schema, err := SchemaFor[In]()
	if err != nil {
		return Tool{}, fmt.Errorf("registry: tool %q: %w", name, err)
	}
	return Tool{
		Name:        name,
		Description: description,
		InputSchema: schema,
		Handler: func(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
			var in In
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, fmt.Errorf("decoding arguments: %w", err)
			}
			out, err := fn(ctx, in)
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(out)}}, nil
		},
	}, nil
}

// requiredDefaults reads the required properties of an input schema that
// have a default. Servers write schemas so (Playwright MCP lists scale,
// level and static as required, each with a default) and accept a call
// that leaves them out: the registry fills them in rather than refuse
// what the server would take.
func requiredDefaults(schema json.RawMessage) map[string]json.RawMessage {
	var s struct {
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	var out map[string]json.RawMessage
	for _, r := range s.Required {
		if d := s.Properties[r].Default; len(d) > 0 {
			if out == nil {
				out = map[string]json.RawMessage{}
			}
			out[r] = d
		}
	}
	return out
}

// fillDefaults adds to the object args each of defaults it lacks. args is
// returned as it came when nothing is missing, or when it is not an
// object (validate then says so).
func fillDefaults(args json.RawMessage, defaults map[string]json.RawMessage) json.RawMessage {
	if len(defaults) == 0 {
		return args
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil || obj == nil {
		return args
	}
	filled := false
	for k, d := range defaults {
		if _, ok := obj[k]; !ok {
			obj[k], filled = d, true
		}
	}
	if !filled {
		return args
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return args
	}
	return out
}
