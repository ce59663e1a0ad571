package mcp

// FirstText returns the text of r's first text block, and false when it has
// none. Text joins every text block; FirstText is for the tools whose
// answer is one block and whose further blocks are extra (a note, a
// mirror of the structured content) a caller does not want glued on.
func (r *CallToolResult) FirstText() (string, bool) {
	for i := range r.Content {
		if r.Content[i].Type == ContentText {
			return r.Content[i].Text, true
		}
	}
	return "", false
}
