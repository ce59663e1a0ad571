package mcp

import "encoding/json"

// The MarshalJSON methods in this file exist for one reason: a nil slice
// marshals as null, but these members are required arrays, and a message
// with "roots":null or "content":null fails the receiver's schema check (the
// conformance suite validates every message a client sends). Each method
// sends nil as [] and otherwise marshals exactly as the struct tags say.
// They decode as usual; none has an UnmarshalJSON.
//
// Beware when embedding one of these types in a struct of your own: the
// method is promoted and the outer struct then marshals as the inner one.

// defaultInputSchema is sent for a Tool whose InputSchema is nil: the spec
// requires an object schema, and this one accepts any arguments object.
var defaultInputSchema = json.RawMessage(`{"type":"object"}`)

// MarshalJSON implements json.Marshaler; a nil InputSchema is sent as
// {"type":"object"}, since the member is required.
func (t Tool) MarshalJSON() ([]byte, error) {
	type wire Tool
	if len(t.InputSchema) == 0 {
		t.InputSchema = defaultInputSchema
	}
	return marshalPlain(wire(t))
}

// MarshalJSON implements json.Marshaler; a nil Content is sent as [].
func (r CallToolResult) MarshalJSON() ([]byte, error) {
	type wire CallToolResult
	if r.Content == nil {
		r.Content = []Content{}
	}
	return marshalPlain(wire(r))
}

// MarshalJSON implements json.Marshaler; a nil Tools is sent as [].
func (r ListToolsResult) MarshalJSON() ([]byte, error) {
	type wire ListToolsResult
	if r.Tools == nil {
		r.Tools = []Tool{}
	}
	return marshalPlain(wire(r))
}

// MarshalJSON implements json.Marshaler; a nil Resources is sent as [].
func (r ListResourcesResult) MarshalJSON() ([]byte, error) {
	type wire ListResourcesResult
	if r.Resources == nil {
		r.Resources = []Resource{}
	}
	return marshalPlain(wire(r))
}

// MarshalJSON implements json.Marshaler; a nil ResourceTemplates is sent as
// [].
func (r ListResourceTemplatesResult) MarshalJSON() ([]byte, error) {
	type wire ListResourceTemplatesResult
	if r.ResourceTemplates == nil {
		r.ResourceTemplates = []ResourceTemplate{}
	}
	return marshalPlain(wire(r))
}

// MarshalJSON implements json.Marshaler; a nil Contents is sent as [].
func (r ReadResourceResult) MarshalJSON() ([]byte, error) {
	type wire ReadResourceResult
	if r.Contents == nil {
		r.Contents = []ResourceContents{}
	}
	return marshalPlain(wire(r))
}

// MarshalJSON implements json.Marshaler; a nil Prompts is sent as [].
func (r ListPromptsResult) MarshalJSON() ([]byte, error) {
	type wire ListPromptsResult
	if r.Prompts == nil {
		r.Prompts = []Prompt{}
	}
	return marshalPlain(wire(r))
}

// MarshalJSON implements json.Marshaler; a nil Messages is sent as [].
func (r GetPromptResult) MarshalJSON() ([]byte, error) {
	type wire GetPromptResult
	if r.Messages == nil {
		r.Messages = []PromptMessage{}
	}
	return marshalPlain(wire(r))
}

// MarshalJSON implements json.Marshaler; a nil Completion.Values is sent as
// [].
func (r CompleteResult) MarshalJSON() ([]byte, error) {
	type wire CompleteResult
	if r.Completion.Values == nil {
		r.Completion.Values = []string{}
	}
	return marshalPlain(wire(r))
}

// MarshalJSON implements json.Marshaler; a nil Roots (a client with no
// roots to share) is sent as [].
func (r ListRootsResult) MarshalJSON() ([]byte, error) {
	type wire ListRootsResult
	if r.Roots == nil {
		r.Roots = []Root{}
	}
	return marshalPlain(wire(r))
}

// MarshalJSON implements json.Marshaler; a nil SupportedVersions is sent
// as [].
func (r DiscoverResult) MarshalJSON() ([]byte, error) {
	type wire DiscoverResult
	if r.SupportedVersions == nil {
		r.SupportedVersions = []string{}
	}
	return marshalPlain(wire(r))
}

// MarshalJSON implements json.Marshaler; a nil Supported is sent as [].
func (d UnsupportedVersionData) MarshalJSON() ([]byte, error) {
	type wire UnsupportedVersionData
	if d.Supported == nil {
		d.Supported = []string{}
	}
	return marshalPlain(wire(d))
}

// MarshalJSON implements json.Marshaler; a nil Messages is sent as [].
func (p CreateMessageParams) MarshalJSON() ([]byte, error) {
	type wire CreateMessageParams
	if p.Messages == nil {
		p.Messages = []SamplingMessage{}
	}
	return marshalPlain(wire(p))
}

// MarshalJSON implements json.Marshaler; a nil InputResponses is sent as {}.
func (p UpdateTaskParams) MarshalJSON() ([]byte, error) {
	type wire UpdateTaskParams
	if p.InputResponses == nil {
		p.InputResponses = map[string]json.RawMessage{}
	}
	return marshalPlain(wire(p))
}
