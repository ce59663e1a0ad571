package main

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type touchIn struct {
	URI string `json:"uri" jsonschema:"the resource whose subscribers are told it changed"`
}

// addResources adds mem://a, mem://b and the touch tool.
func addResources(s *mcp.Server) {
	for _, uri := range []string{"mem://a", "mem://b"} {
		s.AddResource(&mcp.Resource{URI: uri, Name: uri, MIMEType: "text/plain"},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "contents of " + req.Params.URI}}}, nil
			})
	}
	mcp.AddTool(s, &mcp.Tool{Name: "touch", Description: "Tells the subscribers of a resource that it changed"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in touchIn) (*mcp.CallToolResult, any, error) {
			if err := s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: in.URI}); err != nil {
				return nil, nil, err
			}
			return text("touched " + in.URI), nil, nil
		})
}
