package mcp

import (
	"encoding/json"

	"github.com/tako-mcp/tako/internal/jsonscan"
)

// DecodeCallToolResult decodes a tools/call result into r, as json.Unmarshal
// would, with the raw members (StructuredContent) aliasing data.
//
// It exists for speed: a tools/call round trip is the hot path of every
// agent, and encoding/json spends most of a small call's allocations on
// reflection and on validating the input a second time. The common shape
// (content blocks of type, text, mimeType, data, uri, name, title and
// description; structuredContent; isError; resultType) is decoded in one
// pass; anything else (annotations, _meta, embedded resources, tool_use
// and tool_result blocks, nulls, duplicate or differently-cased member
// names) takes encoding/json's path, so the result is always what
// json.Unmarshal gives.
func DecodeCallToolResult(data []byte, r *CallToolResult) error {
	var fast CallToolResult
	if decodeCallToolResultFast(data, &fast) {
		*r = fast
		return nil
	}
	*r = CallToolResult{}
	return json.Unmarshal(data, r)
}

// decodeCallToolResultFast reports false, leaving r in any state, when data
// is not of the common shape or not valid JSON.
func decodeCallToolResultFast(data []byte, r *CallToolResult) bool {
	i := jsonscan.Space(data, 0)
	if i == len(data) || data[i] != '{' {
		return false
	}
	i, empty := jsonscan.Open(data, i)
	var seen uint8
	for more := !empty; more; {
		key, v, ok := plainKey(data, i)
		if !ok || data[v] == 'n' { // null: leave it to encoding/json
			return false
		}
		var bit uint8
		var err error
		switch c := data[v]; string(key) {
		case "content":
			bit = 1
			if i, ok = decodeContentArray(data, v, &r.Content); !ok {
				return false
			}
		case "structuredContent":
			bit = 2
			i, _, err = jsonscan.Value(data, v, 1)
			r.StructuredContent = json.RawMessage(data[v:i:i])
		case "isError":
			bit = 4
			if c != 't' && c != 'f' {
				return false
			}
			i, _, err = jsonscan.Value(data, v, 1)
			r.IsError = c == 't'
		case "resultType":
			bit = 8
			if c != '"' {
				return false
			}
			var f jsonscan.Flags
			if i, f, err = jsonscan.Value(data, v, 1); err == nil { // an unfinished literal cannot be unquoted
				r.ResultType = jsonscan.Unquote(data[v:i], f)
			}
		default:
			return false
		}
		if err != nil || seen&bit != 0 {
			return false
		}
		seen |= bit
		if i, more, err = jsonscan.Next(data, i, '}'); err != nil {
			return false
		}
	}
	return jsonscan.Finish(data, i) == nil
}

// decodeContentArray decodes an array of content blocks of the common shape
// starting at data[i].
func decodeContentArray(data []byte, i int, out *[]Content) (int, bool) {
	if data[i] != '[' {
		return i, false
	}
	i, empty := jsonscan.Open(data, i)
	if empty {
		*out = []Content{}
		return i, true
	}
	// Most results hold one block: size for it, grow if there are more.
	blocks := make([]Content, 0, 1)
	for more := true; more; {
		var c Content
		var ok bool
		if i, ok = decodeContent(data, i, &c); !ok {
			return i, false
		}
		blocks = append(blocks, c)
		var err error
		if i, more, err = jsonscan.Next(data, i, ']'); err != nil {
			return i, false
		}
	}
	*out = blocks
	return i, true
}

// decodeContent decodes one content block whose members are all strings
// among the common ones.
func decodeContent(data []byte, i int, c *Content) (int, bool) {
	if i == len(data) || data[i] != '{' {
		return i, false
	}
	i, empty := jsonscan.Open(data, i)
	var (
		seen uint8
		link ResourceLink
		b64  string // "data", which c.Data holds as text
	)
	for more := !empty; more; {
		key, v, ok := plainKey(data, i)
		if !ok || data[v] != '"' { // only string members take the fast path
			return i, false
		}
		end, f, err := jsonscan.Value(data, v, 3)
		if err != nil {
			return i, false
		}
		lit := data[v:end]
		var dst *string
		var bit uint8
		switch string(key) {
		case "type":
			bit, dst = 1, &c.Type
			// The block types are few: name them without allocating.
			if f == 0 {
				if t := knownContentType(lit[1 : len(lit)-1]); t != "" {
					c.Type = t
					dst = nil
				}
			}
		case "text":
			bit, dst = 2, &c.Text
		case "mimeType":
			bit, dst = 4, &c.MIMEType
		case "data":
			bit, dst = 8, &b64
		case "uri":
			bit, dst = 16, &link.URI
		case "name":
			bit, dst = 32, &link.Name
		case "title":
			bit, dst = 64, &link.Title
		case "description":
			bit, dst = 128, &link.Description
		default:
			return i, false
		}
		if seen&bit != 0 {
			return i, false
		}
		seen |= bit
		if dst != nil {
			*dst = jsonscan.Unquote(lit, f)
		}
		if i, more, err = jsonscan.Next(data, end, '}'); err != nil {
			return i, false
		}
	}
	c.Data = BinaryFromBase64(b64)
	switch {
	case c.Type == ContentToolUse || c.Type == ContentToolResult:
		// Their members are not among these: the block is left to
		// Content.UnmarshalJSON, which sorts a "name" into the ToolUse.
		return i, false
	case c.Type == ContentResourceLink || link.URI != "" || link.Name != "" || link.Title != "" || link.Description != "":
		// Members that are there but empty make no link, as in
		// Content.UnmarshalJSON, which cannot tell them from absent ones.
		c.Link = new(ResourceLink) // allocated here only: &link would move link to the heap for every block
		*c.Link = link
	}
	return i, true
}

// plainKey reads an object member's key at data[i] and the colon after it,
// and returns the key and the offset of the value. It declines (ok false) a
// key with escapes or non-ASCII bytes, which the fast path leaves to
// encoding/json's case-insensitive matching.
func plainKey(data []byte, i int) (key []byte, value int, ok bool) {
	key, f, value, err := jsonscan.Key(data, i)
	return key, value, err == nil && f == 0
}

// knownContentType returns the constant for a known block type, or "".
func knownContentType(b []byte) string {
	switch string(b) { // compiled to comparisons: no allocation
	case ContentText:
		return ContentText
	case ContentImage:
		return ContentImage
	case ContentAudio:
		return ContentAudio
	case ContentResourceLink:
		return ContentResourceLink
	case ContentResource:
		return ContentResource
	case ContentToolUse:
		return ContentToolUse
	case ContentToolResult:
		return ContentToolResult
	}
	return ""
}
