package mcp

import "encoding/json"

// Resource is one entry of resources/list.
type Resource struct {
	URI         string       `json:"uri"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	MIMEType    string       `json:"mimeType,omitempty"`
	Size        *int64       `json:"size,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Icons       []Icon       `json:"icons,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// ResourceTemplate is one entry of resources/templates/list. URITemplate is
// an RFC 6570 template.
type ResourceTemplate struct {
	URITemplate string       `json:"uriTemplate"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	MIMEType    string       `json:"mimeType,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Icons       []Icon       `json:"icons,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// ListParams are the params of every paginated list method.
type ListParams struct {
	Cursor *string `json:"cursor,omitempty"`
	Meta   Meta    `json:"_meta,omitempty"`
}

// ListResourcesResult is one page of resources/list.
type ListResourcesResult struct {
	Resources  []Resource `json:"resources"`
	NextCursor *string    `json:"nextCursor,omitempty"`
	CacheFields
}

// ListResourceTemplatesResult is one page of resources/templates/list.
type ListResourceTemplatesResult struct {
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates"`
	NextCursor        *string            `json:"nextCursor,omitempty"`
	CacheFields
}

// ReadResourceParams are the params of resources/read.
type ReadResourceParams struct {
	URI string `json:"uri"`
	// InputResponses and RequestState retry a 2026-07-28 request whose
	// result was input_required: the answers to its InputRequests, keyed
	// as they were, and its RequestState byte for byte (nil if it had
	// none). Leave both empty on a first attempt.
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
	RequestState   *string                    `json:"requestState,omitempty"`
	Meta           Meta                       `json:"_meta,omitempty"`
}

// ReadResourceResult is the result of resources/read; a directory-like
// resource may have several contents.
type ReadResourceResult struct {
	Contents []ResourceContents `json:"contents"`
	CacheFields
}

// SubscribeParams are the params of the legacy resources/subscribe and
// resources/unsubscribe.
type SubscribeParams struct {
	URI  string `json:"uri"`
	Meta Meta   `json:"_meta,omitempty"`
}

// ResourceUpdatedParams are the params of notifications/resources/updated.
type ResourceUpdatedParams struct {
	URI  string `json:"uri"`
	Meta Meta   `json:"_meta,omitempty"`
}
