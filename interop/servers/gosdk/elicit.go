package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// formSchema asks for a name and offers defaults for the other two fields.
// All three are required: the SDK checks an answer against the schema
// before it applies defaults of its own, so a client that did not fill in
// the defaults fails here.
var formSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"name":  map[string]any{"type": "string", "minLength": 1},
		"color": map[string]any{"type": "string", "enum": []string{"red", "green"}, "default": "green"},
		"count": map[string]any{"type": "integer", "minimum": 1, "default": 3},
	},
	"required": []string{"name", "color", "count"},
}

type visitIn struct {
	ElicitationID string `json:"elicitationId" jsonschema:"the id of the URL elicitation the user completed"`
}

// addElicitationTools adds form, login and visit (see the package comment).
func addElicitationTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "form", Description: "Asks the user to fill in a form"},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			resp, ok := req.Params.InputResponses["form"]
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
					"form": &mcp.ElicitParams{Message: "Who are you?", RequestedSchema: formSchema},
				}}, nil, nil
			}
			res, ok := resp.(*mcp.ElicitResult)
			if !ok {
				return nil, nil, fmt.Errorf("input response %q: got %T, want an elicitation result", "form", resp)
			}
			if res.Action != "accept" {
				return text(res.Action), nil, nil
			}
			b, err := json.Marshal(res.Content)
			if err != nil {
				return nil, nil, err
			}
			return text(string(b)), nil, nil
		})

	// One pending login per session: the elicitation id it waits for,
	// and whether the user has visited it.
	var mu sync.Mutex
	pending := map[*mcp.ServerSession]string{}
	visited := map[string]bool{}
	next := 0
	mcp.AddTool(s, &mcp.Tool{Name: "login", Description: "Needs the user to log in through a URL first"},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			mu.Lock()
			defer mu.Unlock()
			if id, ok := pending[req.Session]; ok && visited[id] {
				delete(pending, req.Session)
				return text("logged in"), nil, nil
			}
			next++
			id := fmt.Sprintf("login-%d", next)
			pending[req.Session] = id
			return nil, nil, mcp.URLElicitationRequiredError([]*mcp.ElicitParams{{
				Mode: "url", Message: "Log in to continue", URL: "https://example.com/login?state=" + id, ElicitationID: id,
			}})
		})
	mcp.AddTool(s, &mcp.Tool{Name: "visit", Description: "Completes a URL elicitation, as the user's browser would"},
		func(ctx context.Context, req *mcp.CallToolRequest, in visitIn) (*mcp.CallToolResult, any, error) {
			mu.Lock()
			visited[in.ElicitationID] = true
			mu.Unlock()
			if err := req.Session.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: in.ElicitationID}); err != nil {
				return nil, nil, err
			}
			return text("visited"), nil, nil
		})
}
