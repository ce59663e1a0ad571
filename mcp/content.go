package mcp

import "encoding/json"

// Content block types.
const (
	ContentText         = "text"
	ContentImage        = "image"
	ContentAudio        = "audio"
	ContentResourceLink = "resource_link"
	ContentResource     = "resource"
	ContentToolUse      = "tool_use"
	ContentToolResult   = "tool_result"
)

// Content is one content block. Type says which fields are meaningful:
//
//	text           Text
//	image, audio   Data (base64 text or bytes, as the wire had it) and MIMEType
//	resource_link  Link (uri, name, title, description, size, icons) and MIMEType
//	resource       Resource (embedded text or blob contents)
//	tool_use       ToolUse (id, name, input: sampling with tools, 2025-11-25)
//	tool_result    ToolResult (toolUseId, content, structuredContent, isError)
//
// and Annotations and Meta apply to every kind. A block of one of the last
// four kinds always has its pointer set when it is decoded, so that
// c.Link.URI of a resource_link is safe to read.
//
// A single struct rather than an interface per block keeps decoding to one
// pass and lets unknown future block types through with their Type intact.
// The blocks that tool results are made of (text, images) keep their
// fields in it; the rarer kinds' fields sit behind a pointer each, so that
// a Content is 120 bytes rather than the 296 it took with every kind's
// fields inline (a tools/call result allocates one per block). On the wire
// a block is one flat object, as the spec has it.
type Content struct {
	Type string `json:"type"`

	Text string `json:"text,omitempty"`

	Data     Binary `json:"data,omitzero"`
	MIMEType string `json:"mimeType,omitempty"`

	Link       *ResourceLink     `json:"-"`
	Resource   *ResourceContents `json:"resource,omitempty"`
	ToolUse    *ToolUse          `json:"-"`
	ToolResult *ToolResult       `json:"-"`

	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// ResourceLink is what a resource_link block says of the resource it
// points at. Its MIME type is the block's MIMEType.
type ResourceLink struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Size        *int64 `json:"size,omitempty"`
	Icons       []Icon `json:"icons,omitempty"`
}

// ToolUse is a tool_use block's request (sampling with tools): the model
// asks to call tool Name with Input, a JSON object, under ID.
type ToolUse struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// ToolResult is a tool_result block's answer to the tool_use with
// ToolUseID.
type ToolResult struct {
	ToolUseID         string          `json:"toolUseId"`
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
}

// TextContent returns a text block.
func TextContent(text string) Content { return Content{Type: ContentText, Text: text} }

// Annotations tell a client how to use a content block or resource.
type Annotations struct {
	// Audience is "user", "assistant" or both.
	Audience     []string `json:"audience,omitempty"`
	Priority     *float64 `json:"priority,omitempty"`
	LastModified string   `json:"lastModified,omitempty"`
}

// ResourceContents is the contents of a resource: Text for text resources,
// Blob for binary ones.
type ResourceContents struct {
	URI      string  `json:"uri"`
	MIMEType string  `json:"mimeType,omitempty"`
	Text     *string `json:"text,omitempty"`
	Blob     *Binary `json:"blob,omitempty"`
	Meta     Meta    `json:"_meta,omitempty"`
}
