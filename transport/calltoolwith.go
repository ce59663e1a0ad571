package transport

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tako-mcp/tako/mcp"
)

// CallToolWith calls the tool name on t with args, any Go value that
// marshals to a JSON object (a struct, a map[string]any, json.RawMessage),
// or nil for no arguments. It saves building mcp.CallToolParams and its raw
// JSON by hand:
//
//	res, err := transport.CallToolWith(ctx, s, "get-sum", map[string]any{"a": 2, "b": 3})
//
// A value that does not marshal to an object is an error, and nothing is
// sent. A tool that fails comes back as a result with IsError set, as from
// CallTool.
func CallToolWith(ctx context.Context, t Transport, name string, args any) (*mcp.CallToolResult, error) {
	raw := json.RawMessage("{}")
	if args != nil {
		b, err := json.Marshal(args)
		if err != nil {
			return nil, fmt.Errorf("mcp: arguments of tool %q: %w", name, err)
		}
		if len(b) == 0 || b[0] != '{' {
			return nil, fmt.Errorf("mcp: arguments of tool %q must be a JSON object, not %.40s", name, b)
		}
		raw = b
	}
	return t.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: raw})
}
