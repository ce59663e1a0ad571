package mcpgrpc

// The CallTool response's image and audio data, straight to base64.
//
// mcp.Content keeps an image's data as the base64 text that JSON carries
// and every consumer of a result wants (a model's API, a bridge, the
// inspector); the gRPC service carries it as bytes. Decoded by protobuf,
// a 1 MiB image cost 2.33 MiB of heap: protobuf copies a bytes field out
// of the received message (always: its aliasing is for lazy decoding
// only), then the copy was encoded. Here the response is decoded with
// protobuf's generated code for every field but the data of an image or
// audio block, whose base64 is written from the received message itself:
// 1.33 MiB, the base64 text alone.
//
// The codec is set on the CallTool call alone (grpc.ForceCodecV2) and
// speaks protobuf on the wire: to the server it is the proto codec. The
// value it decodes into, *callToolResponse, is a proto.Message (it embeds
// the generated response), so that an interceptor or stats handler that
// looks at messages sees one; only the data is not in it.

import (
	"fmt"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/tako-mcp/tako/proto/mcppb"
)

// Field numbers of the messages decoded by hand (mcp_messages.proto);
// TestCallToolFieldNumbers checks them against the generated descriptors.
const (
	fieldResponseContent protowire.Number = 2 // CallToolResponse.content
	fieldContentImage    protowire.Number = 2 // CallToolResponse.Content.image
	fieldContentAudio    protowire.Number = 3 // CallToolResponse.Content.audio
	fieldMediaData       protowire.Number = 1 // ImageContent.data, AudioContent.data
)

// callToolResponse is a CallToolResponse whose image and audio blocks
// have no data: data64 holds each block's base64, by content index, ""
// for a block without data.
type callToolResponse struct {
	*pb.CallToolResponse
	data64 []string
}

// merge decodes one field's encoding into m, as protobuf decodes a
// message whose fields arrive one at a time (repeated fields appended,
// message fields merged, the last scalar kept).
var merge = proto.UnmarshalOptions{Merge: true}

// unmarshal decodes the wire form b.
func (r *callToolResponse) unmarshal(b []byte) error {
	r.CallToolResponse = &pb.CallToolResponse{}
	r.data64 = nil
	return eachField(b, func(num protowire.Number, typ protowire.Type, field, val []byte) error {
		if num != fieldResponseContent || typ != protowire.BytesType {
			return merge.Unmarshal(field, r.CallToolResponse)
		}
		c := &pb.CallToolResponse_Content{}
		data64, err := unmarshalContent(val, c)
		if err != nil {
			return fmt.Errorf("content block %d: %w", len(r.Content), err)
		}
		r.Content = append(r.Content, c)
		r.data64 = append(r.data64, data64)
		return nil
	})
}

// unmarshalContent decodes one content block into c, all but the data of
// its image or audio, whose base64 it returns (the image's, when a block
// sets both: the image is what the block converts to).
func unmarshalContent(b []byte, c *pb.CallToolResponse_Content) (string, error) {
	var image, audio []byte
	err := eachField(b, func(num protowire.Number, typ protowire.Type, field, val []byte) error {
		if typ != protowire.BytesType || (num != fieldContentImage && num != fieldContentAudio) {
			return merge.Unmarshal(field, c)
		}
		var m proto.Message
		data := &image
		if num == fieldContentImage {
			if c.Image == nil {
				c.Image = &pb.ImageContent{}
			}
			m = c.Image
		} else {
			if c.Audio == nil {
				c.Audio = &pb.AudioContent{}
			}
			m, data = c.Audio, &audio
		}
		return eachField(val, func(num protowire.Number, typ protowire.Type, field, val []byte) error {
			if num == fieldMediaData && typ == protowire.BytesType {
				*data = val
				return nil
			}
			return merge.Unmarshal(field, m)
		})
	})
	if err != nil {
		return "", err
	}
	if c.Image != nil {
		return encode64(image), nil
	}
	return encode64(audio), nil
}

// eachField calls f with each field of the message encoded in b: its
// number and wire type, its whole encoding (tag included) and, for a
// length-delimited field, its value.
func eachField(b []byte, f func(num protowire.Number, typ protowire.Type, field, val []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return protowire.ParseError(m)
		}
		var val []byte
		if typ == protowire.BytesType {
			val, _ = protowire.ConsumeBytes(b[n:])
		}
		if err := f(num, typ, b[:n+m], val); err != nil {
			return err
		}
		b = b[n+m:]
	}
	return nil
}

// callToolCodec is the proto codec but for a *callToolResponse, which it
// decodes with unmarshal.
type callToolCodec struct{}

// protoCodec is grpc-go's own, which grpc registers when it is imported.
var protoCodec = encoding.GetCodecV2("proto")

func (callToolCodec) Name() string { return "proto" }

func (callToolCodec) Marshal(v any) (mem.BufferSlice, error) { return protoCodec.Marshal(v) }

func (callToolCodec) Unmarshal(data mem.BufferSlice, v any) error {
	r, ok := v.(*callToolResponse)
	if !ok {
		return protoCodec.Unmarshal(data, v)
	}
	// One contiguous copy only when the message came in several buffers,
	// and from grpc's pool: what the proto codec does too.
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	if err := r.unmarshal(buf.ReadOnlyData()); err != nil {
		return fmt.Errorf("failed to unmarshal CallToolResponse: %w", err)
	}
	return nil
}
