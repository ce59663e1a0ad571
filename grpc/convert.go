package mcpgrpc

import (
	"encoding/json"
	"fmt"
	"math"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tako-mcp/tako/internal/jsonvalue"
	"github.com/tako-mcp/tako/mcp"
	pb "github.com/tako-mcp/tako/proto/mcppb"
)

// The service carries JSON objects as google.protobuf.Struct and binary data
// as bytes; MCP's JSON carries both as JSON (binary as base64). These
// functions convert between the two; binary data received stays the bytes
// protobuf decoded (an mcp.Binary holds either form). A Struct holds
// numbers as float64, so an integer above 2^53 in a schema or argument
// loses precision on this wire: that is the service's limit, not tako's.

// rawToStruct turns a JSON object into a Struct; empty or null gives nil.
func rawToStruct(raw json.RawMessage) (*structpb.Struct, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	v, err := jsonvalue.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("want a JSON object: %w", err)
	}
	if v == nil {
		return nil, nil // null with white space around it
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want a JSON object, not %s", jsonKind(v))
	}
	return structpb.NewStruct(m)
}

// jsonKind names the kind of a value jsonvalue.Decode made, for an error.
func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	}
	return "a boolean"
}

// structToRaw turns a Struct into a JSON object; nil gives nil. To convert
// many, use one structEncoder.
func structToRaw(s *structpb.Struct) (json.RawMessage, error) {
	if s == nil {
		return nil, nil
	}
	var e structEncoder
	return e.appendStruct(nil, s)
}

func mapToStruct(m map[string]any) (*structpb.Struct, error) {
	if m == nil {
		return nil, nil
	}
	// Round trip through JSON so that any Go value json can encode works,
	// not only the few structpb.NewValue accepts.
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return rawToStruct(raw)
}

func roleToPB(r string) pb.Role {
	switch r {
	case "user":
		return pb.Role_ROLE_USER
	case "assistant":
		return pb.Role_ROLE_ASSISTANT
	}
	return pb.Role_ROLE_UNKNOWN
}

func roleFromPB(r pb.Role) string {
	switch r {
	case pb.Role_ROLE_USER:
		return "user"
	case pb.Role_ROLE_ASSISTANT:
		return "assistant"
	}
	return ""
}

func annotationsToPB(a *mcp.Annotations) *pb.Annotations {
	if a == nil {
		return nil
	}
	out := &pb.Annotations{}
	for _, r := range a.Audience {
		out.Audience = append(out.Audience, roleToPB(r))
	}
	if a.Priority != nil {
		out.Priority = float32(*a.Priority)
	}
	return out
}

func annotationsFromPB(a *pb.Annotations) *mcp.Annotations {
	if a == nil {
		return nil
	}
	out := &mcp.Annotations{}
	for _, r := range a.GetAudience() {
		if s := roleFromPB(r); s != "" {
			out.Audience = append(out.Audience, s)
		}
	}
	// JSON has no NaN or infinity: a peer's non-finite priority is
	// dropped, as if unset, rather than kept to fail every encoding of the
	// result later.
	if p := float64(a.GetPriority()); p != 0 && !math.IsNaN(p) && !math.IsInf(p, 0) {
		out.Priority = &p
	}
	return out
}

// bytesOf is the bytes of b for a message of the service: b's own when it
// holds bytes, else its base64 text decoded, or an error naming field.
func bytesOf(field string, b mcp.Binary) ([]byte, error) {
	data, err := b.Bytes()
	if err != nil {
		return nil, fmt.Errorf("%s is not base64: %w", field, err)
	}
	return data, nil
}

func resourceContentsToPB(r *mcp.ResourceContents) (*pb.ResourceContents, error) {
	if r == nil {
		return nil, nil
	}
	out := &pb.ResourceContents{Uri: r.URI, MimeType: r.MIMEType}
	if r.Text != nil {
		out.Text = *r.Text
	}
	if r.Blob != nil {
		b, err := bytesOf("resource blob", *r.Blob)
		if err != nil {
			return nil, err
		}
		out.Blob = b
	}
	return out, nil
}

// resourceContentsFromPB converts r, keeping its blob's bytes (protobuf's
// copy, which r's owner gives up).
func resourceContentsFromPB(r *pb.ResourceContents) mcp.ResourceContents {
	out := mcp.ResourceContents{URI: r.GetUri(), MIMEType: r.GetMimeType()}
	// Blob wins when both are set: a binary resource has no text, while an
	// empty text resource has neither.
	if blob := r.GetBlob(); len(blob) > 0 {
		b := mcp.BinaryFromBytes(blob)
		out.Blob = &b
	} else {
		t := r.GetText()
		out.Text = &t
	}
	return out
}

func resourceToPB(r *mcp.Resource) *pb.Resource {
	out := &pb.Resource{
		Uri: r.URI, Name: r.Name, Title: r.Title, Description: r.Description,
		MimeType: r.MIMEType, Annotations: annotationsToPB(r.Annotations),
	}
	if r.Size != nil && *r.Size > 0 {
		out.Size = uint64(*r.Size)
	}
	return out
}

func resourceFromPB(r *pb.Resource) mcp.Resource {
	out := mcp.Resource{
		URI: r.GetUri(), Name: r.GetName(), Title: r.GetTitle(), Description: r.GetDescription(),
		MIMEType: r.GetMimeType(), Annotations: annotationsFromPB(r.GetAnnotations()),
	}
	if r.GetSize() > 0 {
		n := int64(r.GetSize())
		out.Size = &n
	}
	return out
}

// contentParts is the content of any of the service's content messages:
// CallToolResponse.Content, PromptMessage and SamplingMessage hold the same
// fields with the same types, under different numbers.
type contentParts struct {
	text     *pb.TextContent
	image    *pb.ImageContent
	audio    *pb.AudioContent
	embedded *pb.EmbeddedResource
	link     *pb.Resource
}

// contentToParts converts one MCP block. Blocks the service cannot carry
// (tool_use, tool_result and types from the future) are an error rather
// than a silent drop.
func contentToParts(c *mcp.Content) (contentParts, error) {
	var p contentParts
	switch c.Type {
	case mcp.ContentText:
		p.text = &pb.TextContent{Text: c.Text, Annotations: annotationsToPB(c.Annotations)}
	case mcp.ContentImage, mcp.ContentAudio:
		data, err := bytesOf(c.Type+" data", c.Data)
		if err != nil {
			return p, err
		}
		if c.Type == mcp.ContentImage {
			p.image = &pb.ImageContent{Data: data, MimeType: c.MIMEType, Annotations: annotationsToPB(c.Annotations)}
		} else {
			p.audio = &pb.AudioContent{Data: data, MimeType: c.MIMEType, Annotations: annotationsToPB(c.Annotations)}
		}
	case mcp.ContentResource:
		rc, err := resourceContentsToPB(c.Resource)
		if err != nil {
			return p, err
		}
		p.embedded = &pb.EmbeddedResource{Contents: rc, Annotations: annotationsToPB(c.Annotations)}
	case mcp.ContentResourceLink:
		l := c.Link
		if l == nil {
			l = &mcp.ResourceLink{}
		}
		p.link = resourceToPB(&mcp.Resource{
			URI: l.URI, Name: l.Name, Title: l.Title, Description: l.Description,
			MIMEType: c.MIMEType, Size: l.Size, Annotations: c.Annotations,
		})
	default:
		return p, fmt.Errorf("content type %q has no form on the gRPC service", c.Type)
	}
	return p, nil
}

// partsToContent converts back; a message with no field set is an error.
func partsToContent(p contentParts) (mcp.Content, error) {
	switch {
	case p.text != nil:
		return mcp.Content{Type: mcp.ContentText, Text: p.text.GetText(), Annotations: annotationsFromPB(p.text.GetAnnotations())}, nil
	case p.image != nil:
		return mcp.Content{Type: mcp.ContentImage, Data: mcp.BinaryFromBytes(p.image.GetData()), MIMEType: p.image.GetMimeType(), Annotations: annotationsFromPB(p.image.GetAnnotations())}, nil
	case p.audio != nil:
		return mcp.Content{Type: mcp.ContentAudio, Data: mcp.BinaryFromBytes(p.audio.GetData()), MIMEType: p.audio.GetMimeType(), Annotations: annotationsFromPB(p.audio.GetAnnotations())}, nil
	case p.embedded != nil:
		rc := resourceContentsFromPB(p.embedded.GetContents())
		return mcp.Content{Type: mcp.ContentResource, Resource: &rc, Annotations: annotationsFromPB(p.embedded.GetAnnotations())}, nil
	case p.link != nil:
		r := resourceFromPB(p.link)
		return mcp.Content{Type: mcp.ContentResourceLink, MIMEType: r.MIMEType, Annotations: r.Annotations,
			Link: &mcp.ResourceLink{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, Size: r.Size}}, nil
	}
	return mcp.Content{}, fmt.Errorf("content block with no field set")
}

func toolToPB(t *mcp.Tool) (*pb.Tool, error) {
	in, err := rawToStruct(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("tool %q input schema: %w", t.Name, err)
	}
	outSchema, err := rawToStruct(t.OutputSchema)
	if err != nil {
		return nil, fmt.Errorf("tool %q output schema: %w", t.Name, err)
	}
	p := &pb.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: in, OutputSchema: outSchema}
	if a := t.Annotations; a != nil {
		p.Annotations = &pb.ToolAnnotations{
			Title:           a.Title,
			ReadOnlyHint:    a.ReadOnlyHint != nil && *a.ReadOnlyHint,
			DestructiveHint: a.DestructiveHint != nil && *a.DestructiveHint,
			IdempotentHint:  a.IdempotentHint != nil && *a.IdempotentHint,
			OpenWorldHint:   a.OpenWorldHint != nil && *a.OpenWorldHint,
		}
	}
	return p, nil
}

// toolFromPB converts one tool; e, reused across a list, writes its
// schemas.
func toolFromPB(p *pb.Tool, e *structEncoder) (mcp.Tool, error) {
	in, err := e.raw(p.GetInputSchema())
	if err != nil {
		return mcp.Tool{}, err
	}
	if in == nil {
		// inputSchema is required in MCP; the service may leave it out.
		in = json.RawMessage(`{"type":"object"}`)
	}
	outSchema, err := e.raw(p.GetOutputSchema())
	if err != nil {
		return mcp.Tool{}, err
	}
	t := mcp.Tool{Name: p.GetName(), Title: p.GetTitle(), Description: p.GetDescription(), InputSchema: in, OutputSchema: outSchema}
	if a := p.GetAnnotations(); a != nil {
		// proto3 bools cannot say "unset"; the service sends false for both.
		b := func(v bool) *bool { return &v }
		t.Annotations = &mcp.ToolAnnotations{
			Title:           a.GetTitle(),
			ReadOnlyHint:    b(a.GetReadOnlyHint()),
			DestructiveHint: b(a.GetDestructiveHint()),
			IdempotentHint:  b(a.GetIdempotentHint()),
			OpenWorldHint:   b(a.GetOpenWorldHint()),
		}
	}
	return t, nil
}

func callResultToPB(r *mcp.CallToolResult) (*pb.CallToolResponse, error) {
	out := &pb.CallToolResponse{IsError: r.IsError}
	for i := range r.Content {
		p, err := contentToParts(&r.Content[i])
		if err != nil {
			return nil, fmt.Errorf("content block %d: %w", i, err)
		}
		out.Content = append(out.Content, &pb.CallToolResponse_Content{
			Text: p.text, Image: p.image, Audio: p.audio, EmbeddedResource: p.embedded, ResourceLink: p.link,
		})
	}
	sc, err := rawToStruct(r.StructuredContent)
	if err != nil {
		return nil, fmt.Errorf("structured content: %w", err)
	}
	out.StructuredContent = sc
	return out, nil
}

// callResultFromPB converts a CallToolResponse. An image's or audio's
// data, and an embedded blob, are kept as the bytes protobuf decoded: r is
// the converted result's alone.
func callResultFromPB(r *pb.CallToolResponse) (*mcp.CallToolResult, error) {
	out := &mcp.CallToolResult{IsError: r.GetIsError(), Content: []mcp.Content{}}
	for i, c := range r.GetContent() {
		p := contentParts{text: c.GetText(), image: c.GetImage(), audio: c.GetAudio(), embedded: c.GetEmbeddedResource(), link: c.GetResourceLink()}
		mc, err := partsToContent(p)
		if err != nil {
			return nil, fmt.Errorf("content block %d: %w", i, err)
		}
		out.Content = append(out.Content, mc)
	}
	sc, err := structToRaw(r.GetStructuredContent())
	if err != nil {
		return nil, err
	}
	out.StructuredContent = sc
	return out, nil
}

func templateToPB(t *mcp.ResourceTemplate) *pb.ResourceTemplate {
	return &pb.ResourceTemplate{UriTemplate: t.URITemplate, Name: t.Name, Title: t.Title,
		Description: t.Description, MimeType: t.MIMEType, Annotations: annotationsToPB(t.Annotations)}
}

func templateFromPB(t *pb.ResourceTemplate) mcp.ResourceTemplate {
	return mcp.ResourceTemplate{URITemplate: t.GetUriTemplate(), Name: t.GetName(), Title: t.GetTitle(),
		Description: t.GetDescription(), MIMEType: t.GetMimeType(), Annotations: annotationsFromPB(t.GetAnnotations())}
}

func promptToPB(p *mcp.Prompt) *pb.Prompt {
	out := &pb.Prompt{Name: p.Name, Title: p.Title, Description: p.Description}
	for _, a := range p.Arguments {
		out.Arguments = append(out.Arguments, &pb.Prompt_Argument{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required})
	}
	return out
}

func promptFromPB(p *pb.Prompt) mcp.Prompt {
	out := mcp.Prompt{Name: p.GetName(), Title: p.GetTitle(), Description: p.GetDescription()}
	for _, a := range p.GetArguments() {
		out.Arguments = append(out.Arguments, mcp.PromptArgument{Name: a.GetName(), Title: a.GetTitle(), Description: a.GetDescription(), Required: a.GetRequired()})
	}
	return out
}

func promptResultToPB(r *mcp.GetPromptResult) (*pb.GetPromptResponse, error) {
	out := &pb.GetPromptResponse{Description: r.Description}
	for i := range r.Messages {
		p, err := contentToParts(&r.Messages[i].Content)
		if err != nil {
			return nil, fmt.Errorf("prompt message %d: %w", i, err)
		}
		out.Messages = append(out.Messages, &pb.PromptMessage{Role: roleToPB(r.Messages[i].Role),
			Text: p.text, Image: p.image, Audio: p.audio, EmbeddedResource: p.embedded, ResourceLink: p.link})
	}
	return out, nil
}

func promptResultFromPB(r *pb.GetPromptResponse) (*mcp.GetPromptResult, error) {
	out := &mcp.GetPromptResult{Description: r.GetDescription(), Messages: []mcp.PromptMessage{}}
	for i, m := range r.GetMessages() {
		c, err := partsToContent(contentParts{text: m.GetText(), image: m.GetImage(), audio: m.GetAudio(), embedded: m.GetEmbeddedResource(), link: m.GetResourceLink()})
		if err != nil {
			return nil, fmt.Errorf("prompt message %d: %w", i, err)
		}
		out.Messages = append(out.Messages, mcp.PromptMessage{Role: roleFromPB(m.GetRole()), Content: c})
	}
	return out, nil
}
