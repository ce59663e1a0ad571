package mcp

// The contents of a resource are text or a blob. On the wire that is
// "text" or "blob" (base64; bytes on gRPC); in Go, ResourceContents keeps both as
// pointers, so that a text resource whose text is empty still says "text",
// and these helpers spare callers the nil checks.

// TextResourceContents returns the contents of a text resource.
func TextResourceContents(uri, mimeType, text string) ResourceContents {
	return ResourceContents{URI: uri, MIMEType: mimeType, Text: &text}
}

// BlobResourceContents returns the contents of a binary resource: data
// itself, not a copy (see [BinaryFromBytes]).
func BlobResourceContents(uri, mimeType string, data []byte) ResourceContents {
	b := BinaryFromBytes(data)
	return ResourceContents{URI: uri, MIMEType: mimeType, Blob: &b}
}

// IsBlob reports whether rc holds binary contents (a blob member).
func (rc *ResourceContents) IsBlob() bool { return rc.Blob != nil }

// IsText reports whether rc holds text (a text member, possibly empty).
func (rc *ResourceContents) IsText() bool { return rc.Text != nil }

// AsText returns the text of text contents; ok is false for a blob.
func (rc *ResourceContents) AsText() (text string, ok bool) {
	if rc.Text == nil {
		return "", false
	}
	return *rc.Text, true
}

// Data returns the contents as bytes, whichever form they came in: a
// blob's decoded bytes, or a text's UTF-8. Contents with neither are an
// error wrapping ErrNoBinaryData; a blob that is not valid base64 is the
// decoding error.
func (rc *ResourceContents) Data() ([]byte, error) {
	if rc.Text != nil && rc.Blob == nil {
		return []byte(*rc.Text), nil
	}
	return rc.Bytes()
}

// Text returns the text of every text entry of r, joined by newlines: the
// common way to show a resource to a person.
func (r *ReadResourceResult) Text() string {
	var out []byte
	n := 0
	for i := range r.Contents {
		if t, ok := r.Contents[i].AsText(); ok {
			if n > 0 {
				out = append(out, '\n')
			}
			out = append(out, t...)
			n++
		}
	}
	return string(out)
}
