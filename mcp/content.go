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
//	image, audio   Data (base64, as on the wire) and MIMEType
//	resource_link  URI, Name, Title, Description, MIMEType, Size, Icons
//	resource       Resource (embedded text or blob contents)
//	tool_use       ID, Name, Input (sampling with tools, 2025-11-25)
//	tool_result    ToolUseID, Content, StructuredContent, IsError
//
// A single struct rather than an interface per block keeps decoding to one
// pass and lets unknown future block types through with their Type intact.
type Content struct {
	Type string `json:"type"`

	Text string `json:"text,omitempty"`

	Data     string `json:"data,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`

	URI         string `json:"uri,omitempty"`
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Size        *int64 `json:"size,omitempty"`
	Icons       []Icon `json:"icons,omitempty"`

	Resource *ResourceContents `json:"resource,omitempty"`

	ID    string          `json:"id,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`

	ToolUseID         string          `json:"toolUseId,omitempty"`
	Content           []Content       `json:"content,omitempty"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`

	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
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
// Blob (base64) for binary ones.
type ResourceContents struct {
	URI      string  `json:"uri"`
	MIMEType string  `json:"mimeType,omitempty"`
	Text     *string `json:"text,omitempty"`
	Blob     *string `json:"blob,omitempty"`
	Meta     Meta    `json:"_meta,omitempty"`
}
