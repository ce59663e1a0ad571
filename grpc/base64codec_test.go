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

// TestBase64FieldNumbers: the numbers base64codec.go decodes by hand are
// the generated descriptors' own.
func TestBase64FieldNumbers(t *testing.T) {
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
		{fieldContentEmbedded, num(&pb.CallToolResponse_Content{}, "embedded_resource"), "Content.embedded_resource"},
		{fieldEmbeddedContents, num(&pb.EmbeddedResource{}, "contents"), "EmbeddedResource.contents"},
		{fieldContentsBlob, num(&pb.ResourceContents{}, "blob"), "ResourceContents.blob"},
		{fieldReadResource, num(&pb.ReadResourceResponse{}, "resource"), "ReadResourceResponse.resource"},
	} {
		if c.got != c.want {
			t.Errorf("%s is field %d, base64codec.go says %d", c.name, c.want, c.got)
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
		{Content: []*pb.CallToolResponse_Content{
			{Audio: &pb.AudioContent{Data: []byte("audio first")}, EmbeddedResource: &pb.EmbeddedResource{Contents: &pb.ResourceContents{Blob: []byte("and a blob")}}},
			{EmbeddedResource: &pb.EmbeddedResource{Contents: &pb.ResourceContents{Uri: "file:///notes.md", Text: "# Notizen\n- „Anführung“\n"}, Annotations: &pb.Annotations{Priority: 0.25}}},
			{EmbeddedResource: &pb.EmbeddedResource{Contents: &pb.ResourceContents{Uri: "file:///both", Text: "text", Blob: png[:9]}}},
			{Text: &pb.TextContent{Text: "text wins"}, EmbeddedResource: &pb.EmbeddedResource{Contents: &pb.ResourceContents{Blob: png[:5]}}},
		}},
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

// readResourceWires are ReadResourceResponses: binary and text contents,
// and a blob sent twice.
func readResourceWires(t testing.TB) [][]byte {
	pdf := append([]byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"), bytes.Repeat([]byte{0, 0x80, 0xff, '\r', '\n'}, 500)...)
	var out [][]byte
	for _, m := range []*pb.ReadResourceResponse{
		{Resource: []*pb.ResourceContents{{Uri: "file:///report.pdf", MimeType: "application/pdf", Blob: pdf}, {Uri: "file:///readme.txt", Text: "Grüße,\n\"Welt\"\t日本"}}},
		{Common: &pb.ResponseFields{Instructions: "x"}, Resource: []*pb.ResourceContents{{Uri: "file:///empty"}}},
		{},
	} {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	rc := protowire.AppendBytes(protowire.AppendTag(nil, fieldContentsBlob, protowire.BytesType), []byte("first"))
	rc = protowire.AppendBytes(protowire.AppendTag(rc, fieldContentsBlob, protowire.BytesType), []byte("second"))
	return append(out, protowire.AppendBytes(protowire.AppendTag(nil, fieldReadResource, protowire.BytesType), rc))
}

// readBothWays is decodeBothWays for a ReadResourceResponse.
func readBothWays(b []byte) (viaProto, viaCodec []byte, protoErr, codecErr error) {
	convert := func(rs []*pb.ResourceContents, blob64 []string) []byte {
		var out []any
		for i, r := range rs {
			b := ""
			if blob64 != nil {
				b = blob64[i]
			}
			out = append(out, resourceContentsFromPB(r, b))
		}
		j, _ := json.Marshal(out)
		return j
	}
	var m pb.ReadResourceResponse
	if protoErr = proto.Unmarshal(b, &m); protoErr == nil {
		viaProto = convert(m.GetResource(), nil)
	}
	var r readResourceResponse
	if codecErr = r.unmarshal(b); codecErr == nil {
		viaCodec = convert(r.GetResource(), r.blob64)
	}
	return
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

// TestBase64DecoderMatchesProtobuf: the result is the one protobuf's
// own decoding gives, for every kind of block and protobuf's rules on
// repeats and unknown fields.
func TestBase64DecoderMatchesProtobuf(t *testing.T) {
	for i, b := range callToolWires(t) {
		viaProto, viaCodec, perr, cerr := decodeBothWays(t, b)
		if perr != nil || cerr != nil {
			t.Fatalf("wire %d: protobuf: %v, codec: %v", i, perr, cerr)
		}
		if !bytes.Equal(viaProto, viaCodec) {
			t.Errorf("wire %d:\nprotobuf: %s\ncodec:    %s", i, viaProto, viaCodec)
		}
	}
	for i, b := range readResourceWires(t) {
		viaProto, viaCodec, perr, cerr := readBothWays(b)
		if perr != nil || cerr != nil {
			t.Fatalf("ReadResource wire %d: protobuf: %v, codec: %v", i, perr, cerr)
		}
		if !bytes.Equal(viaProto, viaCodec) {
			t.Errorf("ReadResource wire %d:\nprotobuf: %s\ncodec:    %s", i, viaProto, viaCodec)
		}
	}
}

// FuzzBase64Decoder: on any bytes, the decoders fail where protobuf
// fails and agree with it where it succeeds.
func FuzzBase64Decoder(f *testing.F) {
	for _, b := range append(callToolWires(f), readResourceWires(f)...) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		viaProto, viaCodec, perr, cerr := decodeBothWays(t, b)
		if (perr == nil) != (cerr == nil) {
			t.Fatalf("CallTool: protobuf: %v, codec: %v", perr, cerr)
		}
		if !bytes.Equal(viaProto, viaCodec) {
			t.Fatalf("CallTool: protobuf: %s\ncodec:    %s", viaProto, viaCodec)
		}
		viaProto, viaCodec, perr, cerr = readBothWays(b)
		if (perr == nil) != (cerr == nil) {
			t.Fatalf("ReadResource: protobuf: %v, codec: %v", perr, cerr)
		}
		if !bytes.Equal(viaProto, viaCodec) {
			t.Fatalf("ReadResource: protobuf: %s\ncodec:    %s", viaProto, viaCodec)
		}
	})
}

// TestBlobNotCopied: a resource's blob, read or embedded in a result,
// costs its base64 alone, as an image does.
func TestBlobNotCopied(t *testing.T) {
	data := bytes.Repeat([]byte("%PDF\x00\xff\r\n"), 1<<17)
	read, _ := proto.Marshal(&pb.ReadResourceResponse{Resource: []*pb.ResourceContents{{Uri: "file:///r.pdf", Blob: data}}})
	call, _ := proto.Marshal(&pb.CallToolResponse{Content: []*pb.CallToolResponse_Content{{EmbeddedResource: &pb.EmbeddedResource{Contents: &pb.ResourceContents{Uri: "file:///r.pdf", Blob: data}}}}})
	b64 := len(encode64(data))
	for name, decode := range map[string]func() (string, int){
		"ReadResource": func() (string, int) {
			var r readResourceResponse
			if err := r.unmarshal(read); err != nil {
				t.Fatal(err)
			}
			return r.blob64[0], len(r.Resource[0].GetBlob())
		},
		"CallTool": func() (string, int) {
			var r callToolResponse
			if err := r.unmarshal(call); err != nil {
				t.Fatal(err)
			}
			return r.data64[0], len(r.Content[0].GetEmbeddedResource().GetContents().GetBlob())
		},
	} {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		got, kept := decode()
		runtime.ReadMemStats(&m1)
		if alloc, limit := m1.TotalAlloc-m0.TotalAlloc, uint64(b64)+16<<10; alloc > limit || len(got) != b64 || kept != 0 {
			t.Errorf("%s: a %d-byte blob allocated %d bytes (want at most %d), base64 of %d bytes (want %d), %d bytes kept as bytes", name, len(data), alloc, limit, len(got), b64, kept)
		}
	}
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
