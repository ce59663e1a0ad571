package schemacheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The dialects the validator knows, as it spells them.
const (
	draft2020 = "https://json-schema.org/draft/2020-12/schema"
	draft07   = "http://json-schema.org/draft-07/schema#"
)

// ErrDialect is wrapped by the error of a schema whose $schema names a
// dialect that cannot be validated here (a custom meta-schema, say).
var ErrDialect = errors.New("unsupported JSON Schema dialect")

// dialectOf names the dialect of a $schema URI: its draft, whatever the
// scheme and whether it ends in "#", as servers write both.
func dialectOf(uri string) string {
	u := strings.TrimSuffix(uri, "#")
	u = strings.TrimPrefix(strings.TrimPrefix(u, "https://"), "http://")
	switch u {
	case "", "json-schema.org/draft/2020-12/schema":
		return "2020-12"
	case "json-schema.org/draft/2019-09/schema":
		return "2019-09"
	case "json-schema.org/draft-07/schema":
		return "draft-07"
	case "json-schema.org/draft-06/schema":
		return "draft-06"
	case "json-schema.org/draft-04/schema":
		return "draft-04"
	}
	return ""
}

// toSupportedDialect returns raw in a dialect the validator knows, with
// the same meaning: MCP's default, 2020-12, and draft-07 as they are
// (with $schema spelled as the validator expects); draft-06, whose
// keywords draft-07 keeps, as draft-07; draft-04 as draft-07 with its
// boolean exclusiveMinimum and exclusiveMaximum made the numbers draft-06
// made them, and "id" made "$id"; 2019-09 as 2020-12, with an array of
// "items" made "prefixItems" and "additionalItems" made "items". A
// 2019-09 $recursiveRef, which has no exact 2020-12 form, is an error.
func toSupportedDialect(raw json.RawMessage) (json.RawMessage, error) {
	var head struct {
		Schema *string `json:"$schema"`
	}
	if json.Unmarshal(raw, &head) != nil || head.Schema == nil {
		// Not an object (true, false, or not JSON: the validator says
		// which), or no $schema: as it is.
		return raw, nil
	}
	d := dialectOf(*head.Schema)
	var want string
	switch d {
	case "2020-12":
		want = draft2020
	case "draft-07", "draft-06", "draft-04":
		want = draft07
	case "2019-09":
		want = draft2020
	default:
		return nil, fmt.Errorf("%w: %q (2020-12, 2019-09, draft-07, draft-06 and draft-04 are validated)", ErrDialect, *head.Schema)
	}
	if *head.Schema == want && d != "2019-09" {
		return raw, nil
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	var err error
	switch d {
	case "draft-04":
		walkSchemas(doc, fromDraft04)
	case "2019-09":
		walkSchemas(doc, func(s map[string]any) {
			if err == nil {
				err = from2019(s)
			}
		})
	}
	if err != nil {
		return nil, err
	}
	doc["$schema"] = want
	return json.Marshal(doc)
}

// fromDraft04 rewrites one draft-04 schema object as draft-07.
func fromDraft04(s map[string]any) {
	for _, k := range [...][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
		excl, ok := s[k[0]].(bool)
		if !ok {
			continue
		}
		if bound, ok := s[k[1]]; ok && excl {
			s[k[0]] = bound
			delete(s, k[1])
		} else {
			delete(s, k[0])
		}
	}
	if id, ok := s["id"].(string); ok {
		if _, has := s["$id"]; !has {
			s["$id"] = id
			delete(s, "id")
		}
	}
}

// from2019 rewrites one 2019-09 schema object as 2020-12.
func from2019(s map[string]any) error {
	if items, ok := s["items"].([]any); ok {
		s["prefixItems"] = items
		delete(s, "items")
		if extra, ok := s["additionalItems"]; ok {
			s["items"] = extra
		}
		delete(s, "additionalItems")
	}
	if _, ok := s["$recursiveRef"]; ok {
		return fmt.Errorf("%w: 2019-09's $recursiveRef is not validated", ErrDialect)
	}
	return nil
}

// Keywords whose value is a schema, an array of schemas, or an object of
// schemas, in any dialect handled here: the places a walk over the
// subschemas looks, and not inside enum, const, default or examples,
// whose values are data.
var (
	schemaKeywords = []string{"additionalItems", "additionalProperties", "contains", "else", "if",
		"items", "not", "propertyNames", "then", "unevaluatedItems", "unevaluatedProperties", "contentSchema"}
	schemaArrayKeywords = []string{"allOf", "anyOf", "oneOf", "items", "prefixItems"}
	schemaMapKeywords   = []string{"$defs", "definitions", "dependencies", "dependentSchemas",
		"patternProperties", "properties"}
)

// walkSchemas calls f on s and on every subschema object under it, each
// before its own subschemas.
func walkSchemas(s map[string]any, f func(map[string]any)) {
	f(s)
	eachSubschema(s, func(v any, _ string) {
		if m, ok := v.(map[string]any); ok {
			walkSchemas(m, f)
		}
	})
}

// eachSubschema calls f with the value at each place in s that holds a
// schema (an object, or true or false), and that place as a JSON pointer
// from s ("/properties/a", with ~ and / escaped).
func eachSubschema(s map[string]any, f func(v any, pointer string)) {
	for _, k := range schemaKeywords {
		if v, ok := s[k]; ok {
			f(v, "/"+k)
		}
	}
	for _, k := range schemaArrayKeywords {
		if a, ok := s[k].([]any); ok {
			for i, v := range a {
				f(v, "/"+k+"/"+strconv.Itoa(i))
			}
		}
	}
	for _, k := range schemaMapKeywords {
		if m, ok := s[k].(map[string]any); ok {
			for name, v := range m {
				f(v, "/"+escapePointer(k)+"/"+escapePointer(name))
			}
		}
	}
}
