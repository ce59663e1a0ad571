package mcpgrpc

import (
	"bytes"
	"encoding/json"
	"runtime"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/tako-mcp/tako/proto/mcppb"
)

// TestCallToolFieldNumbers: the numbers calltool.go decodes by hand are
// the generated descriptors' own.
func TestCallToolFieldNumbers(t *testing.T) {
	num := func(m proto.Message, name protoreflect.Name) protowire.Number {
		f := m.ProtoReflect().Descriptor().Fields().ByName(name)
		if f == nil {
			t.Fatalf("%s has no field %s", m.ProtoReflect().Descriptor().FullName(), name)
		}
		return f.Number()
	}
	for _, c := range []struct {
		got, want protowire.Number
		name      string
	}{
		{fieldResponseContent, num(&pb.CallToolResponse{}, "content"), "CallToolResponse.content"},
		{fieldContentImage, num(&pb.CallToolResponse_Content{}, "image"), "Content.image"},
		{fieldContentAudio, num(&pb.CallToolResponse_Content{}, "audio"), "Content.audio"},
		{fieldMediaData, num(&pb.ImageContent{}, "data"), "ImageContent.data"},
		{fieldMediaData, num(&pb.AudioContent{}, "data"), "AudioContent.data"},
	} {
		if c.got != c.want {
			t.Errorf("%s is field %d, calltool.go says %d", c.name, c.want, c.got)
		}
	}
}

// callToolWires are CallToolResponses as servers send them, and the odd
// ones protobuf allows: a message field sent twice (merged), a scalar
// sent twice (the last kept), unknown fields.
func callToolWires(t testing.TB) [][]byte {
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{0, 0xff, 0x7f, '\n'}, 300)...)
	sc, _ := structpb.NewStruct(map[string]any{"caption": "Ein \"Bild\"\nmit Umlauten: äöü, 日本語", "w": 640.0})
	msgs := []*pb.CallToolResponse{
		{Content: []*pb.CallToolResponse_Content{{Text: &pb.TextContent{Text: "line one\nline \"two\"\ttabbed, naïve café"}}}},
		{Content: []*pb.CallToolResponse_Content{
			{Text: &pb.TextContent{Text: "a chart:"}},
			{Image: &pb.ImageContent{Data: png, MimeType: "image/png", Annotations: &pb.Annotations{Audience: []pb.Role{pb.Role_ROLE_USER}, Priority: 0.5}}},
			{Audio: &pb.AudioContent{Data: []byte("RIFF....WAVEfmt "), MimeType: "audio/wav"}},
			{Image: &pb.ImageContent{MimeType: "image/gif"}},
			{EmbeddedResource: &pb.EmbeddedResource{Contents: &pb.ResourceContents{Uri: "file:///a.bin", MimeType: "application/octet-stream", Blob: png[:40]}}},
			{ResourceLink: &pb.Resource{Uri: "file:///b.txt", Name: "b.txt"}},
		}, StructuredContent: sc, IsError: true},
		{Common: &pb.ResponseFields{Instructions: "hello"}, Content: []*pb.CallToolResponse_Content{{Image: &pb.ImageContent{Data: png}, Audio: &pb.AudioContent{Data: []byte("both set")}}}},
		{},
	}
	var out [][]byte
	for _, m := range msgs {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	// An image block sent in two parts, its data twice: merged, the
	// second data kept. Then a field no revision defines, at each level.
	img1, _ := proto.Marshal(&pb.ImageContent{Data: []byte("first"), MimeType: "image/png"})
	img2, _ := proto.Marshal(&pb.ImageContent{Data: []byte("second"), Annotations: &pb.Annotations{Priority: 1}})
	var content []byte
	content = protowire.AppendTag(content, fieldContentImage, protowire.BytesType)
	content = protowire.AppendBytes(content, img1)
	content = protowire.AppendTag(content, fieldContentImage, protowire.BytesType)
	content = protowire.AppendBytes(content, append(img2, protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), 7)...))
	content = protowire.AppendVarint(protowire.AppendTag(content, 98, protowire.VarintType), 1)
	var resp []byte
	resp = protowire.AppendTag(resp, fieldResponseContent, protowire.BytesType)
	resp = protowire.AppendBytes(resp, content)
	resp = protowire.AppendBytes(protowire.AppendTag(resp, 97, protowire.BytesType), []byte("future"))
	return append(out, resp)
}

// decodeBothWays decodes b with protobuf and with the CallTool codec's
// decoder, and converts each: the JSON of both results, or an error.
func decodeBothWays(t *testing.T, b []byte) (viaProto, viaCodec []byte, protoErr, codecErr error) {
	t.Helper()
	var m pb.CallToolResponse
	if protoErr = proto.Unmarshal(b, &m); protoErr == nil {
		res, err := callResultFromPB(&m, nil)
		if err != nil {
			protoErr = err
		} else {
			viaProto, _ = json.Marshal(res)
		}
	}
	var r callToolResponse
	if codecErr = r.unmarshal(b); codecErr == nil {
		res, err := callResultFromPB(r.CallToolResponse, r.data64)
		if err != nil {
			codecErr = err
		} else {
			viaCodec, _ = json.Marshal(res)
		}
	}
	return
}

// TestCallToolDecoderMatchesProtobuf: the result is the one protobuf's
// own decoding gives, for every kind of block and protobuf's rules on
// repeats and unknown fields.
func TestCallToolDecoderMatchesProtobuf(t *testing.T) {
	for i, b := range callToolWires(t) {
		viaProto, viaCodec, perr, cerr := decodeBothWays(t, b)
		if perr != nil || cerr != nil {
			t.Fatalf("wire %d: protobuf: %v, codec: %v", i, perr, cerr)
		}
		if !bytes.Equal(viaProto, viaCodec) {
			t.Errorf("wire %d:\nprotobuf: %s\ncodec:    %s", i, viaProto, viaCodec)
		}
	}
}

// FuzzCallToolDecoder: on any bytes, the decoder fails where protobuf
// fails and agrees with it where it succeeds.
func FuzzCallToolDecoder(f *testing.F) {
	for _, b := range callToolWires(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		viaProto, viaCodec, perr, cerr := decodeBothWays(t, b)
		if (perr == nil) != (cerr == nil) {
			t.Fatalf("protobuf: %v, codec: %v", perr, cerr)
		}
		if !bytes.Equal(viaProto, viaCodec) {
			t.Fatalf("protobuf: %s\ncodec:    %s", viaProto, viaCodec)
		}
	})
}

// TestCallToolImageNotCopied pins the fix for a 1 MiB image costing
// 2.33 MiB of heap through protobuf: the copy of its bytes, then their
// base64. Decoded by the codec, it costs its base64 alone.
func TestCallToolImageNotCopied(t *testing.T) {
	data := bytes.Repeat([]byte("\x89PNG\x00\xff\x10 "), 1<<17)
	b, err := proto.Marshal(&pb.CallToolResponse{Content: []*pb.CallToolResponse_Content{{Image: &pb.ImageContent{Data: data, MimeType: "image/png"}}}})
	if err != nil {
		t.Fatal(err)
	}
	var r callToolResponse
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	if err := r.unmarshal(b); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&m1)
	b64 := len(encode64(data))
	if alloc, limit := m1.TotalAlloc-m0.TotalAlloc, uint64(b64)+16<<10; alloc > limit {
		t.Errorf("decoding a %d-byte image allocated %d bytes, want at most %d (its base64 once)", len(data), alloc, limit)
	}
	if len(r.data64) != 1 || len(r.data64[0]) != b64 || len(r.Content[0].GetImage().GetData()) != 0 {
		t.Errorf("data64 %d strings, the first %d bytes; the image keeps %d bytes", len(r.data64), len(r.data64[0]), len(r.Content[0].GetImage().GetData()))
	}
}
