package mcp

import (
	"encoding/base64"
	"encoding/json"
	"errors"
)

// ImageContent returns an image block holding data, base64-encoded as the
// wire wants it.
func ImageContent(data []byte, mimeType string) Content {
	return Content{Type: ContentImage, Data: base64.StdEncoding.EncodeToString(data), MIMEType: mimeType}
}

// AudioContent returns an audio block holding data, base64-encoded.
func AudioContent(data []byte, mimeType string) Content {
	return Content{Type: ContentAudio, Data: base64.StdEncoding.EncodeToString(data), MIMEType: mimeType}
}

// ResourceLinkContent returns a resource_link block pointing at uri; set
// Title, Description, MIMEType and Size on the result as needed.
func ResourceLinkContent(uri, name string) Content {
	return Content{Type: ContentResourceLink, URI: uri, Name: name}
}

// EmbeddedTextResource returns a resource block that embeds the text
// contents of uri.
func EmbeddedTextResource(uri, mimeType, text string) Content {
	return Content{Type: ContentResource, Resource: &ResourceContents{URI: uri, MIMEType: mimeType, Text: &text}}
}

// EmbeddedBlobResource returns a resource block that embeds the binary
// contents of uri, base64-encoded.
func EmbeddedBlobResource(uri, mimeType string, blob []byte) Content {
	b := base64.StdEncoding.EncodeToString(blob)
	return Content{Type: ContentResource, Resource: &ResourceContents{URI: uri, MIMEType: mimeType, Blob: &b}}
}

// ToolUseContent returns a tool_use block (sampling with tools): the model
// asks to call tool name with input, a JSON object; nil input is sent as {}.
func ToolUseContent(id, name string, input json.RawMessage) Content {
	return Content{Type: ContentToolUse, ID: id, Name: name, Input: input}
}

// ToolResultContent returns a tool_result block answering the tool_use with
// id toolUseID.
func ToolResultContent(toolUseID string, content []Content, isError bool) Content {
	return Content{Type: ContentToolResult, ToolUseID: toolUseID, Content: content, IsError: isError}
}

// ErrNoBinaryData is returned by Bytes for a block that holds no base64 data.
var ErrNoBinaryData = errors.New("mcp: content has no binary data")

// Bytes decodes the base64 data of an image or audio block, or of an
// embedded blob resource.
func (c *Content) Bytes() ([]byte, error) {
	switch {
	case c.Type == ContentImage || c.Type == ContentAudio:
		return base64.StdEncoding.DecodeString(c.Data)
	case c.Type == ContentResource && c.Resource != nil:
		return c.Resource.Bytes()
	}
	return nil, ErrNoBinaryData
}

// Bytes decodes the base64 Blob of binary resource contents.
func (rc *ResourceContents) Bytes() ([]byte, error) {
	if rc.Blob == nil {
		return nil, ErrNoBinaryData
	}
	return base64.StdEncoding.DecodeString(*rc.Blob)
}

// contentWire is Content with the members that some block types require
// as pointers, so that MarshalJSON can write them even when empty.
type contentWire struct {
	Type string `json:"type"`

	Text *string `json:"text,omitempty"`

	Data     *string `json:"data,omitempty"`
	MIMEType *string `json:"mimeType,omitempty"`

	URI         *string `json:"uri,omitempty"`
	Name        *string `json:"name,omitempty"`
	Title       string  `json:"title,omitempty"`
	Description string  `json:"description,omitempty"`
	Size        *int64  `json:"size,omitempty"`
	Icons       []Icon  `json:"icons,omitempty"`

	Resource *ResourceContents `json:"resource,omitempty"`

	ID    *string         `json:"id,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`

	ToolUseID         *string         `json:"toolUseId,omitempty"`
	Content           *[]Content      `json:"content,omitempty"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`

	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

func nonEmpty(s *string) *string {
	if *s == "" {
		return nil
	}
	return s
}

// MarshalJSON implements json.Marshaler. It writes the members the block's
// type requires even when they are empty: a text block whose text is ""
// keeps "text":"", a tool_use without input gets "input":{}, a tool_result
// without content gets "content":[]. Plain struct tags would drop them and
// produce a block the schema rejects.
func (c Content) MarshalJSON() ([]byte, error) {
	w := contentWire{
		Type:              c.Type,
		Text:              nonEmpty(&c.Text),
		Data:              nonEmpty(&c.Data),
		MIMEType:          nonEmpty(&c.MIMEType),
		URI:               nonEmpty(&c.URI),
		Name:              nonEmpty(&c.Name),
		Title:             c.Title,
		Description:       c.Description,
		Size:              c.Size,
		Icons:             c.Icons,
		Resource:          c.Resource,
		ID:                nonEmpty(&c.ID),
		Input:             c.Input,
		ToolUseID:         nonEmpty(&c.ToolUseID),
		StructuredContent: c.StructuredContent,
		IsError:           c.IsError,
		Annotations:       c.Annotations,
		Meta:              c.Meta,
	}
	if len(c.Content) > 0 {
		w.Content = &c.Content
	}
	switch c.Type {
	case ContentText:
		w.Text = &c.Text
	case ContentImage, ContentAudio:
		w.Data, w.MIMEType = &c.Data, &c.MIMEType
	case ContentResourceLink:
		w.URI, w.Name = &c.URI, &c.Name
	case ContentToolUse:
		w.ID, w.Name = &c.ID, &c.Name
		if len(c.Input) == 0 {
			w.Input = json.RawMessage("{}")
		}
	case ContentToolResult:
		w.ToolUseID = &c.ToolUseID
		if c.Content == nil {
			c.Content = []Content{}
		}
		w.Content = &c.Content
	}
	return marshalPlain(w)
}
