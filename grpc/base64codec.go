package mcpgrpc

// Binary data of CallTool and ReadResource responses, straight to base64.
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
// The same goes for a resource's blob, in a CallTool block's embedded
// resource and in ReadResource's contents.
//
// The codec is set on those two calls alone (grpc.ForceCodecV2) and
// speaks protobuf on the wire: to the server it is the proto codec. The
// values it decodes into, *callToolResponse and *readResourceResponse,
// are proto.Messages (each embeds the generated response), so that an
// interceptor or stats handler that looks at messages sees one; only the
// data is not in it.

import (
	"fmt"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/tako-mcp/tako/proto/mcppb"
)

// Field numbers of the messages decoded by hand (mcp_messages.proto);
// TestBase64FieldNumbers checks them against the generated descriptors.
const (
	fieldResponseContent  protowire.Number = 2 // CallToolResponse.content
	fieldContentImage     protowire.Number = 2 // CallToolResponse.Content.image
	fieldContentAudio     protowire.Number = 3 // CallToolResponse.Content.audio
	fieldContentEmbedded  protowire.Number = 4 // CallToolResponse.Content.embedded_resource
	fieldMediaData        protowire.Number = 1 // ImageContent.data, AudioContent.data
	fieldEmbeddedContents protowire.Number = 1 // EmbeddedResource.contents
	fieldContentsBlob     protowire.Number = 4 // ResourceContents.blob
	fieldReadResource     protowire.Number = 2 // ReadResourceResponse.resource
)

// callToolResponse is a CallToolResponse whose image, audio and embedded
// resource blocks have no data: data64 holds each block's base64, by
// content index, "" for a block without data.
type callToolResponse struct {
	*pb.CallToolResponse
	data64 []string
}

// readResourceResponse is a ReadResourceResponse whose contents have no
// blob: blob64 holds each one's base64, by index.
type readResourceResponse struct {
	*pb.ReadResourceResponse
	blob64 []string
}

// merge decodes one field's encoding into m, as protobuf decodes a
// message whose fields arrive one at a time (repeated fields appended,
// message fields merged, the last scalar kept).
var merge = proto.UnmarshalOptions{Merge: true}

// unmarshal decodes the wire form b.
func (r *callToolResponse) unmarshal(b []byte) error {
	r.CallToolResponse = &pb.CallToolResponse{}
	r.data64 = nil
	return mergeExcept(b, r.CallToolResponse, fieldResponseContent, func(val []byte) error {
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

// unmarshal decodes the wire form b.
func (r *readResourceResponse) unmarshal(b []byte) error {
	r.ReadResourceResponse = &pb.ReadResourceResponse{}
	r.blob64 = nil
	return mergeExcept(b, r.ReadResourceResponse, fieldReadResource, func(val []byte) error {
		rc := &pb.ResourceContents{}
		var blob []byte
		if err := mergeExcept(val, rc, fieldContentsBlob, keep(&blob)); err != nil {
			return fmt.Errorf("resource %d: %w", len(r.Resource), err)
		}
		r.Resource = append(r.Resource, rc)
		r.blob64 = append(r.blob64, encode64(blob))
		return nil
	})
}

// unmarshalContent decodes one content block into c, all but the data of
// its image, audio or embedded resource, whose base64 it returns: of the
// one the block converts to when it sets more than one (partsToContent's
// order).
func unmarshalContent(b []byte, c *pb.CallToolResponse_Content) (string, error) {
	var image, audio, blob []byte
	err := eachField(b, func(num protowire.Number, typ protowire.Type, field, val []byte) error {
		if typ != protowire.BytesType {
			return merge.Unmarshal(field, c)
		}
		switch num {
		case fieldContentImage:
			if c.Image == nil {
				c.Image = &pb.ImageContent{}
			}
			return mergeExcept(val, c.Image, fieldMediaData, keep(&image))
		case fieldContentAudio:
			if c.Audio == nil {
				c.Audio = &pb.AudioContent{}
			}
			return mergeExcept(val, c.Audio, fieldMediaData, keep(&audio))
		case fieldContentEmbedded:
			if c.EmbeddedResource == nil {
				c.EmbeddedResource = &pb.EmbeddedResource{}
			}
			return mergeExcept(val, c.EmbeddedResource, fieldEmbeddedContents, func(val []byte) error {
				if c.EmbeddedResource.Contents == nil {
					c.EmbeddedResource.Contents = &pb.ResourceContents{}
				}
				return mergeExcept(val, c.EmbeddedResource.Contents, fieldContentsBlob, keep(&blob))
			})
		}
		return merge.Unmarshal(field, c)
	})
	if err != nil {
		return "", err
	}
	switch {
	case c.Image != nil:
		return encode64(image), nil
	case c.Audio != nil:
		return encode64(audio), nil
	}
	return encode64(blob), nil
}

// mergeExcept merges the message encoded in b into m, all but the
// length-delimited field except, whose value it hands to f at each
// occurrence, in order.
func mergeExcept(b []byte, m proto.Message, except protowire.Number, f func(val []byte) error) error {
	return eachField(b, func(num protowire.Number, typ protowire.Type, field, val []byte) error {
		if num == except && typ == protowire.BytesType {
			return f(val)
		}
		return merge.Unmarshal(field, m)
	})
}

// keep is the f of mergeExcept for a bytes field: it points *data at the
// last value (as protobuf keeps the last), a slice of the message, not a
// copy.
func keep(data *[]byte) func([]byte) error {
	return func(val []byte) error {
		*data = val
		return nil
	}
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

// base64Codec is the proto codec but for a *callToolResponse and a
// *readResourceResponse, which it decodes by their unmarshal methods.
type base64Codec struct{}

// protoCodec is grpc-go's own, which grpc registers when it is imported.
var protoCodec = encoding.GetCodecV2("proto")

func (base64Codec) Name() string { return "proto" }

func (base64Codec) Marshal(v any) (mem.BufferSlice, error) { return protoCodec.Marshal(v) }

func (base64Codec) Unmarshal(data mem.BufferSlice, v any) error {
	var unmarshal func([]byte) error
	switch r := v.(type) {
	case *callToolResponse:
		unmarshal = r.unmarshal
	case *readResourceResponse:
		unmarshal = r.unmarshal
	default:
		return protoCodec.Unmarshal(data, v)
	}
	// One contiguous copy only when the message came in several buffers,
	// and from grpc's pool: what the proto codec does too.
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	if err := unmarshal(buf.ReadOnlyData()); err != nil {
		return fmt.Errorf("failed to unmarshal %T: %w", v, err)
	}
	return nil
}
