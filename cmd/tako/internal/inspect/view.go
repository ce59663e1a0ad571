package inspect

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/tako-mcp/tako/mcp"
)

// maxItemsShown bounds the items of one JSON array in a view.
const maxItemsShown = 2000

// viewOf is a result as the page is sent it: the same JSON, with every
// string longer than maxTextShown cut (base64 data and blobs past
// maxDataShown left out) and every array past maxItemsShown shortened,
// each cut said beside it ("textCut": the whole length), so that a 16 MiB
// result keeps the page responsive; the whole result is the run's
// download. cut reports whether anything was cut.
func viewOf(raw []byte) (view json.RawMessage, cut bool) {
	if len(raw) == 0 {
		return nil, false
	}
	if len(raw) <= maxTextShown {
		return raw, false
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, true
	}
	v, cut = shorten(v)
	out, err := json.Marshal(v)
	if err != nil {
		return nil, true
	}
	return out, cut
}

func shorten(v any) (any, bool) {
	cut := false
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if s, ok := x.(string); ok {
				limit := maxTextShown
				if k == "data" || k == "blob" {
					limit = maxDataShown
				}
				if len(s) > limit {
					cut = true
					if k == "data" || k == "blob" {
						t[k] = ""
						t[k+"Omitted"] = len(s)
					} else {
						t[k] = cutUTF8(s, limit)
						t[k+"Cut"] = len(s)
					}
				}
				continue
			}
			nx, c := shorten(x)
			t[k] = nx
			cut = cut || c
		}
	case []any:
		if len(t) > maxItemsShown {
			t = append(t[:maxItemsShown:maxItemsShown], fmt.Sprintf("… %d more items, in the download", len(t)-maxItemsShown))
			cut = true
		}
		for i := range t {
			if s, ok := t[i].(string); ok && len(s) > maxTextShown {
				t[i] = cutUTF8(s, maxTextShown)
				cut = true
				continue
			}
			nx, c := shorten(t[i])
			t[i] = nx
			cut = cut || c
		}
		return t, cut
	}
	return v, cut
}

// cutUTF8 is s cut to at most n bytes, on a character boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// base64Len is the length of d's base64, which the page's limits and
// notes count, whichever form d holds: text's own length (Base64 of text
// is the text, not a copy), or what bytes encode to.
func base64Len(d mcp.Binary) int {
	if raw, ok := d.Raw(); ok {
		return base64.StdEncoding.EncodedLen(len(raw))
	}
	return len(d.Base64())
}

// toolView is viewOf for a tool's result, made from the typed value
// rather than by decoding the JSON again: only the blocks to cut are
// copied, and each is marshalled on its own.
func toolView(res *mcp.CallToolResult) (json.RawMessage, bool) {
	if res == nil {
		return nil, false
	}
	cut := false
	blocks := make([]json.RawMessage, len(res.Content))
	for i, b := range res.Content {
		extra := map[string]int{}
		if len(b.Text) > maxTextShown {
			extra["textCut"] = len(b.Text)
			b.Text = cutUTF8(b.Text, maxTextShown)
		}
		if n := base64Len(b.Data); n > maxDataShown {
			extra["dataOmitted"] = n
			b.Data = mcp.Binary{}
		}
		if r := b.Resource; r != nil {
			textCut := r.Text != nil && len(*r.Text) > maxTextShown
			blobLen := 0
			if r.Blob != nil {
				blobLen = base64Len(*r.Blob)
			}
			if textCut || blobLen > maxDataShown {
				rc := *r
				if textCut {
					t := cutUTF8(*r.Text, maxTextShown)
					rc.Text = &t
					extra["resourceTextCut"] = len(*r.Text)
				}
				if blobLen > maxDataShown {
					rc.Blob = &mcp.Binary{}
					extra["resourceBlobOmitted"] = blobLen
				}
				b.Resource = &rc
			}
		}
		raw, err := json.Marshal(b)
		if err != nil {
			return nil, true
		}
		if len(extra) > 0 {
			cut = true
			more, _ := json.Marshal(extra)
			raw = append(append(raw[:len(raw)-1:len(raw)-1], ','), more[1:]...)
		}
		blocks[i] = raw
	}
	v := map[string]any{"content": blocks}
	if res.IsError {
		v["isError"] = true
	}
	if len(res.StructuredContent) > 0 {
		sc, c := viewOf(res.StructuredContent)
		v["structuredContent"] = sc
		cut = cut || c
	}
	if res.Meta != nil {
		v["_meta"] = res.Meta
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, true
	}
	return out, cut
}
