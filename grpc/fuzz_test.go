package mcpgrpc

import (
	"encoding/json"
	"math"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tako-mcp/tako/mcp"
	pb "github.com/tako-mcp/tako/proto/mcppb"
)

// fromPB is one conversion of a message a peer sends (the server's
// responses and dependent requests, a client's answers to the bridge) into
// tako's types, followed by the JSON encoding those types are handed on
// in (transport.Call's raw results, the CLI's --json, a bridge's answer).
type fromPB struct {
	msg     func() proto.Message
	convert func(proto.Message) (any, error)
}

var fromPBs = []fromPB{
	{func() proto.Message { return &pb.ListToolsResponse{} }, func(m proto.Message) (any, error) {
		var out []mcp.Tool
		var enc structEncoder
		for _, t := range m.(*pb.ListToolsResponse).GetTools() {
			mt, err := toolFromPB(t, &enc)
			if err != nil {
				return nil, err
			}
			out = append(out, mt)
		}
		return out, nil
	}},
	{func() proto.Message { return &pb.CallToolResponse{} }, func(m proto.Message) (any, error) {
		r := m.(*pb.CallToolResponse)
		if deps := r.GetCommon().GetDependentRequests(); len(deps) > 0 {
			return inputRequestsFromPB(deps)
		}
		return callResultFromPB(r)
	}},
	{func() proto.Message { return &pb.ListResourcesResponse{} }, func(m proto.Message) (any, error) {
		var out []mcp.Resource
		for _, r := range m.(*pb.ListResourcesResponse).GetResources() {
			out = append(out, resourceFromPB(r))
		}
		return out, nil
	}},
	{func() proto.Message { return &pb.ListResourceTemplatesResponse{} }, func(m proto.Message) (any, error) {
		var out []mcp.ResourceTemplate
		for _, t := range m.(*pb.ListResourceTemplatesResponse).GetResourceTemplates() {
			out = append(out, templateFromPB(t))
		}
		return out, nil
	}},
	{func() proto.Message { return &pb.ReadResourceResponse{} }, func(m proto.Message) (any, error) {
		out := &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{}}
		for _, r := range m.(*pb.ReadResourceResponse).GetResource() {
			out.Contents = append(out.Contents, resourceContentsFromPB(r))
		}
		return out, nil
	}},
	{func() proto.Message { return &pb.ListPromptsResponse{} }, func(m proto.Message) (any, error) {
		var out []mcp.Prompt
		for _, p := range m.(*pb.ListPromptsResponse).GetPrompts() {
			out = append(out, promptFromPB(p))
		}
		return out, nil
	}},
	{func() proto.Message { return &pb.GetPromptResponse{} }, func(m proto.Message) (any, error) {
		return promptResultFromPB(m.(*pb.GetPromptResponse))
	}},
	{func() proto.Message { return &pb.SamplingCreateMessageResult{} }, func(m proto.Message) (any, error) {
		return samplingResultFromPB(m.(*pb.SamplingCreateMessageResult))
	}},
	{func() proto.Message { return &pb.ElicitResult{} }, func(m proto.Message) (any, error) {
		return elicitResultFromPB(m.(*pb.ElicitResult))
	}},
	{func() proto.Message { return &pb.ListRootsResult{} }, func(m proto.Message) (any, error) {
		return rootsFromPB(m.(*pb.ListRootsResult)), nil
	}},
}

// FuzzConvertFromPB: whatever bytes a peer sends, once they decode as the
// message the RPC expects, the conversion into tako's types returns a value
// or an error, never a panic, and a value it returns encodes as JSON (a
// value that cannot, such as a NaN priority, would fail later, far from the
// peer that sent it). which picks the message type.
func FuzzConvertFromPB(f *testing.F) {
	for i, m := range fuzzSeedsFromPB() {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), b)
	}
	// A NaN priority (TestNonFinitePriorityIsDropped), which the fuzzer
	// did not reach on its own: a float32 inside a nested message.
	nan, err := proto.Marshal(&pb.CallToolResponse{Content: []*pb.CallToolResponse_Content{
		{Text: &pb.TextContent{Text: "x", Annotations: &pb.Annotations{Priority: float32(math.NaN())}}},
	}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint8(1), nan)
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		c := fromPBs[int(which)%len(fromPBs)]
		m := c.msg()
		if proto.Unmarshal(data, m) != nil {
			return
		}
		v, err := c.convert(m)
		if err != nil {
			return
		}
		if _, err := json.Marshal(v); err != nil {
			t.Errorf("%T converted to %#v, which does not encode as JSON: %v", m, v, err)
		}
	})
}

// fuzzSeedsFromPB are one well-formed message of each kind, in the order
// of fromPBs.
func fuzzSeedsFromPB() []proto.Message {
	schema, _ := structpb.NewStruct(map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}})
	sc, _ := structpb.NewStruct(map[string]any{"sum": 3.0})
	return []proto.Message{
		&pb.ListToolsResponse{Tools: []*pb.Tool{{Name: "add", Description: "adds", InputSchema: schema, Annotations: &pb.ToolAnnotations{ReadOnlyHint: true}}}},
		&pb.CallToolResponse{Content: []*pb.CallToolResponse_Content{
			{Text: &pb.TextContent{Text: "3", Annotations: &pb.Annotations{Audience: []pb.Role{pb.Role_ROLE_USER}, Priority: 0.5}}},
			{Image: &pb.ImageContent{Data: []byte{0x89, 'P', 'N', 'G'}, MimeType: "image/png"}},
			{EmbeddedResource: &pb.EmbeddedResource{Contents: &pb.ResourceContents{Uri: "file:///a", Text: "a"}}},
			{ResourceLink: &pb.Resource{Uri: "file:///b", Name: "b", Size: 10}},
		}, StructuredContent: sc},
		&pb.ListResourcesResponse{Resources: []*pb.Resource{{Uri: "file:///a", Name: "a", MimeType: "text/plain"}}},
		&pb.ListResourceTemplatesResponse{ResourceTemplates: []*pb.ResourceTemplate{{UriTemplate: "file:///{p}", Name: "files"}}},
		&pb.ReadResourceResponse{Resource: []*pb.ResourceContents{{Uri: "file:///a", Blob: []byte{1, 2}}}},
		&pb.ListPromptsResponse{Prompts: []*pb.Prompt{{Name: "p", Arguments: []*pb.Prompt_Argument{{Name: "x", Required: true}}}}},
		&pb.GetPromptResponse{Description: "d", Messages: []*pb.PromptMessage{{Role: pb.Role_ROLE_ASSISTANT, Text: &pb.TextContent{Text: "hi"}}}},
		&pb.SamplingCreateMessageResult{Message: &pb.SamplingMessage{Role: pb.Role_ROLE_ASSISTANT, Text: &pb.TextContent{Text: "ok"}}, Model: "m", StopReason: "endTurn"},
		&pb.ElicitResult{Type: pb.ElicitResult_TYPE_ACCEPT, Content: sc},
		&pb.ListRootsResult{Roots: []*pb.ListRootsResult_Root{{Uri: "file:///r", Name: "r"}}},
	}
}
