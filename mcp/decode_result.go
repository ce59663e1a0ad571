package mcp

import "encoding/json"

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
// is not of the common shape or not valid JSON.
func decodeCallToolResultFast(data []byte, r *CallToolResult) bool {
	i := skipSpace(data, 0)
	if i == len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	var seen uint8
	if i < len(data) && data[i] == '}' {
		i++
	} else {
		for {
			key, next, ok := plainKey(data, i)
			if !ok {
				return false
			}
			i = next
			var err error
			if i == len(data) || data[i] == 'n' { // null: leave it to encoding/json
				return false
			}
			var bit uint8
			switch string(key) {
			case "content":
				bit = 1
				if i, err = decodeContentArray(data, i, &r.Content); err != nil {
					return false
				}
			case "structuredContent":
				bit = 2
				v := i
				if i, err = skipValue(data, i, 1); err != nil {
					return false
				}
				r.StructuredContent = json.RawMessage(data[v:i:i])
			case "isError":
				bit = 4
				switch data[i] {
				case 't':
					i, err = scanLiteral(data, i, "true")
					r.IsError = true
				case 'f':
					i, err = scanLiteral(data, i, "false")
				default:
					return false
				}
				if err != nil {
					return false
				}
			case "resultType":
				bit = 8
				if data[i] != '"' {
					return false
				}
				v := i
				end, f, err := scanString(data, i)
				if err != nil {
					return false
				}
				r.ResultType, i = decodeString(data[v:end], f), end
			default:
				return false
			}
			if seen&bit != 0 {
				return false
			}
			seen |= bit
			i = skipSpace(data, i)
			if i == len(data) {
				return false
			}
			if data[i] == '}' {
				i++
				break
			}
			if data[i] != ',' {
				return false
			}
			i = skipSpace(data, i+1)
		}
	}
	return skipSpace(data, i) == len(data)
}

// decodeContentArray decodes an array of content blocks of the common shape
// starting at data[i].
func decodeContentArray(data []byte, i int, out *[]Content) (int, error) {
	if data[i] != '[' {
		return i, errFallback
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		*out = []Content{}
		return i + 1, nil
	}
	// Most results hold one block: size for it, grow if there are more.
	blocks := make([]Content, 0, 1)
	for {
		var c Content
		var err error
		if i, err = decodeContent(data, i, &c); err != nil {
			return i, err
		}
		blocks = append(blocks, c)
		i = skipSpace(data, i)
		if i == len(data) {
			return i, errFallback
		}
		if data[i] == ']' {
			*out = blocks
			return i + 1, nil
		}
		if data[i] != ',' {
			return i, errFallback
		}
		i = skipSpace(data, i+1)
	}
}

// errFallback stops the fast path; the caller then uses encoding/json,
// which reports any real error itself.
var errFallback = errEnd

// decodeContent decodes one content block whose members are all strings
// among the common ones.
func decodeContent(data []byte, i int, c *Content) (int, error) {
	if i == len(data) || data[i] != '{' {
		return i, errFallback
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, nil
	}
	var seen uint8
	for {
		key, next, ok := plainKey(data, i)
		if !ok {
			return i, errFallback
		}
		i = next
		if i == len(data) || data[i] != '"' {
			return i, errFallback // only string members take the fast path
		}
		v := i
		end, f, err := scanString(data, i)
		if err != nil {
			return i, errFallback
		}
		lit := data[v:end]
		i = end
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
			bit, dst = 8, &c.Data
		case "uri":
			bit, dst = 16, &c.URI
		case "name":
			bit, dst = 32, &c.Name
		case "title":
			bit, dst = 64, &c.Title
		case "description":
			bit, dst = 128, &c.Description
		default:
			return i, errFallback
		}
		if seen&bit != 0 {
			return i, errFallback
		}
		seen |= bit
		if dst != nil {
			*dst = decodeString(lit, f)
		}
		i = skipSpace(data, i)
		if i == len(data) {
			return i, errFallback
		}
		if data[i] == '}' {
			return i + 1, nil
		}
		if data[i] != ',' {
			return i, errFallback
		}
		i = skipSpace(data, i+1)
	}
}

// plainKey reads an object member's key at data[i] and the colon after it,
// and returns the key and the offset of the value. It declines (ok false) a
// key with escapes or non-ASCII bytes, which the fast path leaves to
// encoding/json's case-insensitive matching.
func plainKey(data []byte, i int) (key []byte, value int, ok bool) {
	if i == len(data) || data[i] != '"' {
		return nil, i, false
	}
	end, f, err := scanString(data, i)
	if err != nil || f != 0 {
		return nil, i, false
	}
	key = data[i+1 : end-1]
	i = skipSpace(data, end)
	if i == len(data) || data[i] != ':' {
		return nil, i, false
	}
	return key, skipSpace(data, i+1), true
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
