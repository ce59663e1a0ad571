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
// pass; anything else (annotations, _meta, embedded resources, nulls,
// duplicate or differently-cased member names) takes encoding/json's path,
// so the result is always what json.Unmarshal gives.
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
// is not of the common shape or not valid JSON. It watches the result's
// members, and while in "content", its blocks and their members.
func decodeCallToolResultFast(data []byte, r *CallToolResult) bool {
	i := jsonscan.Space(data, 0)
	if i == len(data) || data[i] != '{' {
		return false
	}
	var (
		sc        jsonscan.Scanner
		seen, bit uint8 // the result's members seen, and the one whose value is next
		block     Content
		bseen     uint8   // the block's members seen
		field     *string // the block's member whose value is next
		blocks    []Content
	)
	for watch := 1; ; {
		end, ev := sc.Step(data, i, watch)
		if ev != jsonscan.End {
			return ev == jsonscan.Done && jsonscan.Finish(data, end) == nil
		}
		v, f := data[sc.Start():end:end], sc.Flags()
		c := v[0]
		i = end
		switch d, key := sc.Depth(), sc.Key(); {
		case d == 1 && key:
			if bit = resultMember(v, f); bit == 0 || seen&bit != 0 {
				return false
			}
			seen |= bit
			if bit == 1 {
				watch = 3
			}
		case d == 1:
			watch = 1
			switch {
			case c == 'n': // null: leave it to encoding/json
				return false
			case bit == 1:
				if c != '[' {
					return false
				}
				if blocks == nil {
					blocks = []Content{}
				}
				r.Content = blocks
			case bit == 2:
				r.StructuredContent = json.RawMessage(v)
			case bit == 4:
				if c != 't' && c != 'f' {
					return false
				}
				r.IsError = c == 't'
			case bit == 8:
				if c != '"' {
					return false
				}
				r.ResultType = jsonscan.Unquote(v, f)
			}
		case d == 2: // a content block ended
			if c != '{' {
				return false
			}
			// Most results hold one block: size for it, grow if there are more.
			if blocks == nil {
				blocks = make([]Content, 0, 1)
			}
			blocks = append(blocks, block)
			block, bseen = Content{}, 0
		case key:
			var b uint8
			if b, field = block.member(v, f); field == nil || bseen&b != 0 {
				return false
			}
			bseen |= b
		default:
			if c != '"' || field == nil { // only string members take the fast path
				return false
			}
			t := ""
			if field == &block.Type && f == 0 {
				// The block types are few: name them without allocating.
				t = knownContentType(v[1 : len(v)-1])
			}
			if t == "" {
				t = jsonscan.Unquote(v, f)
			}
			*field, field = t, nil
		}
	}
}

// resultMember returns the bit of a result's member that the fast path
// decodes, from its key, or 0. A key with escapes or non-ASCII bytes is
// left to encoding/json's case-insensitive matching.
func resultMember(key []byte, f jsonscan.Flags) uint8 {
	for k, name := range [...]string{"content", "structuredContent", "isError", "resultType"} {
		if f == 0 && string(key[1:len(key)-1]) == name {
			return 1 << k
		}
	}
	return 0
}

// member returns the bit and the field of a block's member that the fast
// path decodes, from its key, or a nil field.
func (c *Content) member(key []byte, f jsonscan.Flags) (uint8, *string) {
	fields := [...]*string{&c.Type, &c.Text, &c.MIMEType, &c.Data, &c.URI, &c.Name, &c.Title, &c.Description}
	for k, name := range [...]string{"type", "text", "mimeType", "data", "uri", "name", "title", "description"} {
		if f == 0 && string(key[1:len(key)-1]) == name {
			return 1 << k, fields[k]
		}
	}
	return 0, nil
}

// knownContentType returns the constant for a known block type, or "".
func knownContentType(b []byte) string {
	for _, t := range [...]string{ContentText, ContentImage, ContentAudio, ContentResourceLink, ContentResource, ContentToolUse, ContentToolResult} {
		if string(b) == t {
			return t
		}
	}
	return ""
}
