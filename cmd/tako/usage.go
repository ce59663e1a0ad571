package main

import (
	_ "embed"
	"strings"
)

// docSource is doc.go itself: its package comment is the one text that both
// `go doc` and `tako help` show, so the two cannot drift apart.
//
//go:embed doc.go
var docSource string

// usage returns the package comment of doc.go as plain text: the comment
// markers removed, code-block tabs turned into two spaces.
func usage() string {
	var b strings.Builder
	for _, line := range strings.Split(docSource, "\n") {
		if !strings.HasPrefix(line, "//") {
			break // the comment ends at "package main"
		}
		line = strings.TrimPrefix(line, "//")
		line = strings.TrimPrefix(line, " ")
		if strings.HasPrefix(line, "\t") {
			line = "  " + line[1:]
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}
