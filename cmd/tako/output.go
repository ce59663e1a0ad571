package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// writeRaw prints the protocol's JSON of a result: on one line for
// --format json (to pipe into jq), indented for --format pretty. The bytes
// are the server's either way; pretty only adds white space.
func writeRaw(w io.Writer, raw json.RawMessage, format string) error {
	var b bytes.Buffer
	if format == "pretty" {
		if err := json.Indent(&b, raw, "", "  "); err != nil {
			b.Reset()
			b.Write(raw)
		}
	} else {
		b.Write(raw)
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}

// listKeys names the list member of each list method's result, for the
// empty list of a server that declared no such feature.
var listKeys = map[string]string{
	"tools/list":               "tools",
	"resources/list":           "resources",
	"resources/templates/list": "resourceTemplates",
	"prompts/list":             "prompts",
}

// writeList prints a list method's result as the protocol has it, every
// page merged into one list (transport.Call fetches them): the items are
// the server's bytes, so a field tako does not model reaches the output
// unchanged. A server that did not declare the feature (declared false)
// has an empty list, as for the typed List methods, and is not asked.
func writeList(ctx context.Context, t transport.Transport, w io.Writer, method string, declared bool, format string) error {
	empty := json.RawMessage(`{"` + listKeys[method] + `":[]}`)
	raw := empty
	if declared {
		if err := transport.Call(ctx, t, method, nil, &raw); notOffered(err) {
			raw = empty
		} else if err != nil {
			return err
		}
	}
	return writeRaw(w, raw, format)
}

// notOffered reports whether err is a server's -32601 to a list method: a
// server that declares resources may still not serve resources/templates/list
// (nor a server that declares nothing a list), which is a list of none, as for
// a server that declared no such feature.
func notOffered(err error) bool {
	return errors.Is(err, &mcp.Error{Code: mcp.CodeMethodNotFound})
}
