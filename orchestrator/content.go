package orchestrator

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tako-mcp/tako/mcp"
)

// ContentAsText renders an MCP content block as text for a model API that
// cannot carry it, with a note saying what it was, so that nothing is
// dropped in silence: the text of an embedded resource is kept whole, a
// link keeps its URI, and binary data is described by type and size.
func ContentAsText(c mcp.Content) string {
	switch c.Type {
	case mcp.ContentText:
		return c.Text
	case mcp.ContentImage, mcp.ContentAudio:
		return fmt.Sprintf("[%s content (%s, %d bytes) not shown: this model API cannot carry it here]", c.Type, orUnknown(c.MIMEType), c.Data.Size())
	case mcp.ContentResourceLink:
		l := c.Link
		if l == nil {
			l = &mcp.ResourceLink{}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "[resource link: %s", l.URI)
		if l.Name != "" {
			fmt.Fprintf(&b, " name=%q", l.Name)
		}
		if c.MIMEType != "" {
			fmt.Fprintf(&b, " type=%s", c.MIMEType)
		}
		if l.Description != "" {
			fmt.Fprintf(&b, " description=%q", l.Description)
		}
		b.WriteString("]")
		return b.String()
	case mcp.ContentResource:
		r := c.Resource
		if r == nil {
			return "[embedded resource without contents]"
		}
		if r.Text != nil {
			return fmt.Sprintf("[embedded resource %s (%s)]\n%s", r.URI, orUnknown(r.MIMEType), *r.Text)
		}
		n := 0
		if r.Blob != nil {
			n = r.Blob.Size()
		}
		return fmt.Sprintf("[embedded binary resource %s (%s, %d bytes) not shown: this model API cannot carry it]", r.URI, orUnknown(r.MIMEType), n)
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return fmt.Sprintf("[content of type %q that could not be shown]", c.Type)
	}
	return fmt.Sprintf("[content of type %q, as JSON]\n%s", c.Type, raw)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}

// ResultText renders a tool result's whole content as text, each block
// through ContentAsText, and the structured content as JSON when there is
// no content at all.
func ResultText(r *ToolResult) string {
	parts := make([]string, 0, len(r.Content))
	for _, c := range r.Content {
		parts = append(parts, ContentAsText(c))
	}
	if len(parts) == 0 && len(r.StructuredContent) > 0 {
		parts = append(parts, string(r.StructuredContent))
	}
	return strings.Join(parts, "\n")
}
