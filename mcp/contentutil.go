package mcp

import (
	"encoding/json"
	"errors"
)

// ImageContent returns an image block holding data itself, not a copy
// (see [BinaryFromBytes]); it is encoded to base64 when a JSON wire
// carries it.
func ImageContent(data []byte, mimeType string) Content {
	return Content{Type: ContentImage, Data: BinaryFromBytes(data), MIMEType: mimeType}
}

// AudioContent returns an audio block holding data itself, as
// [ImageContent] does.
func AudioContent(data []byte, mimeType string) Content {
	return Content{Type: ContentAudio, Data: BinaryFromBytes(data), MIMEType: mimeType}
}

// ResourceLinkContent returns a resource_link block pointing at uri; set
// the Link's Title, Description and Size and the block's MIMEType as
// needed.
func ResourceLinkContent(uri, name string) Content {
	return Content{Type: ContentResourceLink, Link: &ResourceLink{URI: uri, Name: name}}
}

// EmbeddedTextResource returns a resource block that embeds the text
// contents of uri.
func EmbeddedTextResource(uri, mimeType, text string) Content {
	return Content{Type: ContentResource, Resource: &ResourceContents{URI: uri, MIMEType: mimeType, Text: &text}}
}

// EmbeddedBlobResource returns a resource block that embeds the binary
// contents of uri: blob itself, not a copy.
func EmbeddedBlobResource(uri, mimeType string, blob []byte) Content {
	rc := BlobResourceContents(uri, mimeType, blob)
	return Content{Type: ContentResource, Resource: &rc}
}

// ToolUseContent returns a tool_use block (sampling with tools): the model
// asks to call tool name with input, a JSON object; nil input is sent as {}.
func ToolUseContent(id, name string, input json.RawMessage) Content {
	return Content{Type: ContentToolUse, ToolUse: &ToolUse{ID: id, Name: name, Input: input}}
}

// ToolResultContent returns a tool_result block answering the tool_use with
// id toolUseID.
func ToolResultContent(toolUseID string, content []Content, isError bool) Content {
	return Content{Type: ContentToolResult, ToolResult: &ToolResult{ToolUseID: toolUseID, Content: content, IsError: isError}}
}

// ErrNoBinaryData is returned by Bytes for a block of a kind that holds no
// binary data (text, a link, a text resource).
var ErrNoBinaryData = errors.New("mcp: content has no binary data")

// Bytes returns the data of an image or audio block, or of an embedded
// blob resource, as [Binary.Bytes] does.
func (c *Content) Bytes() ([]byte, error) {
	switch {
	case c.Type == ContentImage || c.Type == ContentAudio:
		return c.Data.Bytes()
	case c.Type == ContentResource && c.Resource != nil:
		return c.Resource.Bytes()
	}
	return nil, ErrNoBinaryData
}

// Bytes returns the Blob of binary resource contents, as [Binary.Bytes]
// does.
func (rc *ResourceContents) Bytes() ([]byte, error) {
	if rc.Blob == nil {
		return nil, ErrNoBinaryData
	}
	return rc.Blob.Bytes()
}

// contentWire is a block as the wire has it, one flat object. Marshalling
// uses pointers for the members that some block types require, so that
// MarshalJSON can write them even when empty.
type contentWire struct {
	Type string `json:"type"`

	Text *string `json:"text,omitempty"`

	Data     *Binary `json:"data,omitempty"`
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

// flatContent is a block as the wire has it, for decoding: encoding/json
// fills it with its own rules (names matched ignoring case, null leaving a
// member as it was), and UnmarshalJSON sorts the members into the kinds'
// structs.
type flatContent struct {
	Type string `json:"type"`

	Text string `json:"text"`

	Data     Binary `json:"data"`
	MIMEType string `json:"mimeType"`

	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Size        *int64 `json:"size"`
	Icons       []Icon `json:"icons"`

	Resource *ResourceContents `json:"resource"`

	ID    string          `json:"id"`
	Input json.RawMessage `json:"input"`

	ToolUseID         string          `json:"toolUseId"`
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`

	Annotations *Annotations `json:"annotations"`
	Meta        Meta         `json:"_meta"`
}

// flatten is c's members as one flat object.
func (c *Content) flatten() flatContent {
	f := flatContent{Type: c.Type, Text: c.Text, Data: c.Data, MIMEType: c.MIMEType,
		Resource: c.Resource, Annotations: c.Annotations, Meta: c.Meta}
	if l := c.Link; l != nil {
		f.URI, f.Name, f.Title, f.Description, f.Size, f.Icons = l.URI, l.Name, l.Title, l.Description, l.Size, l.Icons
	}
	if u := c.ToolUse; u != nil {
		f.ID, f.Input = u.ID, u.Input
		if f.Name == "" || c.Type == ContentToolUse {
			f.Name = u.Name
		}
	}
	if r := c.ToolResult; r != nil {
		f.ToolUseID, f.Content, f.StructuredContent, f.IsError = r.ToolUseID, r.Content, r.StructuredContent, r.IsError
	}
	return f
}

// UnmarshalJSON implements json.Unmarshaler. The members of a
// resource_link, a tool_use and a tool_result go into Link, ToolUse and
// ToolResult, which are set for a block of that type, or of any type that
// has members of theirs ("name" is a tool_use's in a tool_use block and a
// link's in any other). Members absent keep what c held, as they would
// in a plain struct.
func (c *Content) UnmarshalJSON(data []byte) error {
	f := c.flatten()
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	*c = Content{Type: f.Type, Text: f.Text, Data: f.Data, MIMEType: f.MIMEType,
		Resource: f.Resource, Annotations: f.Annotations, Meta: f.Meta}
	toolUse := f.Type == ContentToolUse
	if f.Type == ContentResourceLink || f.URI != "" || f.Name != "" && !toolUse || f.Title != "" ||
		f.Description != "" || f.Size != nil || f.Icons != nil {
		c.Link = &ResourceLink{URI: f.URI, Title: f.Title, Description: f.Description, Size: f.Size, Icons: f.Icons}
		if !toolUse {
			c.Link.Name = f.Name
		}
	}
	if toolUse || f.ID != "" || f.Input != nil {
		c.ToolUse = &ToolUse{ID: f.ID, Input: f.Input}
		if toolUse {
			c.ToolUse.Name = f.Name
		}
	}
	if f.Type == ContentToolResult || f.ToolUseID != "" || f.Content != nil || f.StructuredContent != nil || f.IsError {
		c.ToolResult = &ToolResult{ToolUseID: f.ToolUseID, Content: f.Content, StructuredContent: f.StructuredContent, IsError: f.IsError}
	}
	return nil
}

func nonEmpty(s *string) *string {
	if *s == "" {
		return nil
	}
	return s
}

func nonZero(b *Binary) *Binary {
	if b.IsZero() {
		return nil
	}
	return b
}

// MarshalJSON implements json.Marshaler. It writes the block as one flat
// object, and the members the block's type requires even when they are
// empty: a text block whose text is "" keeps "text":"", a tool_use without
// input gets "input":{}, a tool_result without content gets "content":[].
// Plain struct tags would drop them and produce a block the schema rejects.
func (c Content) MarshalJSON() ([]byte, error) {
	f := c.flatten()
	w := contentWire{
		Type:              f.Type,
		Text:              nonEmpty(&f.Text),
		Data:              nonZero(&f.Data),
		MIMEType:          nonEmpty(&f.MIMEType),
		URI:               nonEmpty(&f.URI),
		Name:              nonEmpty(&f.Name),
		Title:             f.Title,
		Description:       f.Description,
		Size:              f.Size,
		Icons:             f.Icons,
		Resource:          f.Resource,
		ID:                nonEmpty(&f.ID),
		Input:             f.Input,
		ToolUseID:         nonEmpty(&f.ToolUseID),
		StructuredContent: f.StructuredContent,
		IsError:           f.IsError,
		Annotations:       f.Annotations,
		Meta:              f.Meta,
	}
	if len(f.Content) > 0 {
		w.Content = &f.Content
	}
	switch f.Type {
	case ContentText:
		w.Text = &f.Text
	case ContentImage, ContentAudio:
		w.Data, w.MIMEType = &f.Data, &f.MIMEType
	case ContentResourceLink:
		w.URI, w.Name = &f.URI, &f.Name
	case ContentToolUse:
		w.ID, w.Name = &f.ID, &f.Name
		if len(f.Input) == 0 {
			w.Input = json.RawMessage("{}")
		}
	case ContentToolResult:
		w.ToolUseID = &f.ToolUseID
		if f.Content == nil {
			f.Content = []Content{}
		}
		w.Content = &f.Content
	}
	return marshalPlain(w)
}
