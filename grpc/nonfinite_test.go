package mcpgrpc

import (
	"encoding/json"
	"math"
	"testing"

	pb "github.com/tako-mcp/tako/proto/mcppb"
)

// TestNonFinitePriorityIsDropped: a peer's annotations with a NaN or
// infinite priority (a float on this wire, a JSON number in MCP, which has
// no NaN) gave a result that converted without error and then failed to
// encode as JSON wherever it was handed on. Found by FuzzConvertFromPB.
func TestNonFinitePriorityIsDropped(t *testing.T) {
	for _, p := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		r, err := callResultFromPB(&pb.CallToolResponse{Content: []*pb.CallToolResponse_Content{
			{Text: &pb.TextContent{Text: "x", Annotations: &pb.Annotations{Priority: p}}},
		}})
		if err != nil {
			t.Fatalf("priority %v: %v", p, err)
		}
		if _, err := json.Marshal(r); err != nil {
			t.Errorf("priority %v: the result does not encode as JSON: %v", p, err)
		}
		if a := r.Content[0].Annotations; a == nil || a.Priority != nil {
			t.Errorf("priority %v: annotations %+v, want them without a priority", p, a)
		}
	}
}
