package mcpgrpc

import (
	"encoding/json"
	"fmt"

	"github.com/tako-mcp/tako/mcp"
	pb "github.com/tako-mcp/tako/proto/mcppb"
	"github.com/tako-mcp/tako/transport"
)

// Conversions of the server's questions (sampling, elicitation, roots) and
// the client's answers between the service's messages and tako's types, so
// that one set of transport.Handlers serves every transport.

func samplingMessageToPB(m *mcp.SamplingMessage) (*pb.SamplingMessage, error) {
	blocks, err := m.Blocks()
	if err != nil {
		return nil, fmt.Errorf("sampling message content: %w", err)
	}
	if len(blocks) != 1 {
		return nil, fmt.Errorf("sampling message has %d content blocks; the gRPC service carries exactly one", len(blocks))
	}
	p, err := contentToParts(&blocks[0])
	if err != nil {
		return nil, err
	}
	if p.embedded != nil || p.link != nil {
		return nil, fmt.Errorf("sampling message content %q has no form on the gRPC service", blocks[0].Type)
	}
	return &pb.SamplingMessage{Role: roleToPB(m.Role), Text: p.text, Image: p.image, Audio: p.audio}, nil
}

func samplingMessageFromPB(m *pb.SamplingMessage) (mcp.SamplingMessage, error) {
	c, err := partsToContent(contentParts{text: m.GetText(), image: m.GetImage(), audio: m.GetAudio()})
	if err != nil {
		return mcp.SamplingMessage{}, fmt.Errorf("sampling message: %w", err)
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return mcp.SamplingMessage{}, err
	}
	return mcp.SamplingMessage{Role: roleFromPB(m.GetRole()), Content: raw}, nil
}

var includeContextNames = map[string]pb.SamplingCreateMessageRequest_IncludeContext{
	"none":       pb.SamplingCreateMessageRequest_NONE,
	"thisServer": pb.SamplingCreateMessageRequest_THIS_SERVER,
	"allServers": pb.SamplingCreateMessageRequest_ALL_SERVERS,
}

func samplingRequestToPB(p *mcp.CreateMessageParams) (*pb.SamplingCreateMessageRequest, error) {
	out := &pb.SamplingCreateMessageRequest{
		SystemPrompt:   p.SystemPrompt,
		MaxTokens:      int32(p.MaxTokens),
		StopSequence:   p.StopSequences,
		IncludeContext: includeContextNames[p.IncludeContext],
	}
	if len(p.Tools) > 0 {
		return nil, fmt.Errorf("sampling with tools has no form on the gRPC service")
	}
	for i := range p.Messages {
		m, err := samplingMessageToPB(&p.Messages[i])
		if err != nil {
			return nil, err
		}
		out.Messages = append(out.Messages, m)
	}
	if p.Temperature != nil {
		out.Temperature = float32(*p.Temperature)
	}
	if mp := p.ModelPreferences; mp != nil {
		pm := &pb.SamplingCreateMessageRequest_ModelPreferences{}
		for _, h := range mp.Hints {
			pm.Hints = append(pm.Hints, &pb.SamplingCreateMessageRequest_ModelPreferences_ModelHint{Name: h.Name})
		}
		f := func(v *float64) float32 {
			if v == nil {
				return 0
			}
			return float32(*v)
		}
		pm.CostPriority, pm.SpeedPriority, pm.IntelligencePriority = f(mp.CostPriority), f(mp.SpeedPriority), f(mp.IntelligencePriority)
		out.ModelPreferences = pm
	}
	return out, nil
}

func samplingRequestFromPB(p *pb.SamplingCreateMessageRequest) (*mcp.CreateMessageParams, error) {
	out := &mcp.CreateMessageParams{
		SystemPrompt:  p.GetSystemPrompt(),
		MaxTokens:     int(p.GetMaxTokens()),
		StopSequences: p.GetStopSequence(),
		Messages:      []mcp.SamplingMessage{},
	}
	for name, v := range includeContextNames {
		if v == p.GetIncludeContext() && v != pb.SamplingCreateMessageRequest_NONE {
			out.IncludeContext = name
		}
	}
	for _, m := range p.GetMessages() {
		sm, err := samplingMessageFromPB(m)
		if err != nil {
			return nil, err
		}
		out.Messages = append(out.Messages, sm)
	}
	if t := p.GetTemperature(); t != 0 {
		v := float64(t)
		out.Temperature = &v
	}
	if mp := p.GetModelPreferences(); mp != nil {
		prefs := &mcp.ModelPreferences{}
		for _, h := range mp.GetHints() {
			prefs.Hints = append(prefs.Hints, mcp.ModelHint{Name: h.GetName()})
		}
		f := func(v float32) *float64 {
			if v == 0 {
				return nil
			}
			d := float64(v)
			return &d
		}
		prefs.CostPriority, prefs.SpeedPriority, prefs.IntelligencePriority = f(mp.GetCostPriority()), f(mp.GetSpeedPriority()), f(mp.GetIntelligencePriority())
		out.ModelPreferences = prefs
	}
	return out, nil
}

func samplingResultToPB(r *mcp.CreateMessageResult) (*pb.SamplingCreateMessageResult, error) {
	m, err := samplingMessageToPB(&mcp.SamplingMessage{Role: r.Role, Content: r.Content})
	if err != nil {
		return nil, err
	}
	return &pb.SamplingCreateMessageResult{Message: m, Model: r.Model, StopReason: r.StopReason}, nil
}

func samplingResultFromPB(r *pb.SamplingCreateMessageResult) (*mcp.CreateMessageResult, error) {
	m, err := samplingMessageFromPB(r.GetMessage())
	if err != nil {
		return nil, err
	}
	return &mcp.CreateMessageResult{Role: m.Role, Content: m.Content, Model: r.GetModel(), StopReason: r.GetStopReason()}, nil
}

// jsonSchemaProp is the subset of a JSON Schema property an elicitation form
// may use (MCP restricts forms to flat primitive fields).
type jsonSchemaProp struct {
	Type        string   `json:"type,omitempty"`
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	MinLength   *uint64  `json:"minLength,omitempty"`
	MaxLength   *uint64  `json:"maxLength,omitempty"`
	Format      string   `json:"format,omitempty"`
	Minimum     *float64 `json:"minimum,omitempty"`
	Maximum     *float64 `json:"maximum,omitempty"`
	Default     any      `json:"default,omitempty"`
	Enum        []string `json:"enum,omitempty"`
	EnumNames   []string `json:"enumNames,omitempty"`
}

var stringFormats = map[string]pb.PrimitiveSchemaDefinition_StringSchema_Format{
	"email":     pb.PrimitiveSchemaDefinition_StringSchema_FORMAT_EMAIL,
	"uri":       pb.PrimitiveSchemaDefinition_StringSchema_FORMAT_URI,
	"date":      pb.PrimitiveSchemaDefinition_StringSchema_FORMAT_DATE,
	"date-time": pb.PrimitiveSchemaDefinition_StringSchema_FORMAT_DATE_TIME,
}

func elicitRequestToPB(p *mcp.ElicitParams) (*pb.ElicitRequest, error) {
	if p.Mode == "url" {
		return nil, fmt.Errorf("URL-mode elicitation has no form on the gRPC service")
	}
	out := &pb.ElicitRequest{Message: p.Message, RequestedSchema: map[string]*pb.PrimitiveSchemaDefinition{}}
	if len(p.RequestedSchema) == 0 {
		return out, nil
	}
	var schema struct {
		Properties map[string]jsonSchemaProp `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if err := json.Unmarshal(p.RequestedSchema, &schema); err != nil {
		return nil, fmt.Errorf("elicitation schema: %w", err)
	}
	out.RequiredFields = schema.Required
	for name, s := range schema.Properties {
		def := &pb.PrimitiveSchemaDefinition{}
		switch {
		case len(s.Enum) > 0:
			def.EnumSchema = &pb.PrimitiveSchemaDefinition_EnumSchema{Title: s.Title, Description: s.Description, EnumList: s.Enum, EnumNames: s.EnumNames}
		case s.Type == "string":
			ss := &pb.PrimitiveSchemaDefinition_StringSchema{Title: s.Title, Description: s.Description, Format: stringFormats[s.Format]}
			if s.MinLength != nil {
				ss.MinLength = *s.MinLength
			}
			if s.MaxLength != nil {
				ss.MaxLength = *s.MaxLength
			}
			def.StringSchema = ss
		case s.Type == "number" || s.Type == "integer":
			ns := &pb.PrimitiveSchemaDefinition_NumberSchema{Title: s.Title, Description: s.Description}
			// The service's bounds are unsigned integers; others are dropped.
			if s.Minimum != nil && *s.Minimum >= 0 {
				ns.Minimum = uint64(*s.Minimum)
			}
			if s.Maximum != nil && *s.Maximum >= 0 {
				ns.Maximum = uint64(*s.Maximum)
			}
			def.NumberSchema = ns
		case s.Type == "boolean":
			d, _ := s.Default.(bool)
			def.BooleanSchema = &pb.PrimitiveSchemaDefinition_BooleanSchema{Title: s.Title, Description: s.Description, Default: d}
		default:
			return nil, fmt.Errorf("elicitation field %q of type %q has no form on the gRPC service", name, s.Type)
		}
		out.RequestedSchema[name] = def
	}
	return out, nil
}

func elicitRequestFromPB(p *pb.ElicitRequest) (*mcp.ElicitParams, error) {
	props := map[string]jsonSchemaProp{}
	for name, d := range p.GetRequestedSchema() {
		switch {
		case d.GetStringSchema() != nil:
			s := d.GetStringSchema()
			prop := jsonSchemaProp{Type: "string", Title: s.GetTitle(), Description: s.GetDescription()}
			if s.GetMinLength() > 0 {
				v := s.GetMinLength()
				prop.MinLength = &v
			}
			if s.GetMaxLength() > 0 {
				v := s.GetMaxLength()
				prop.MaxLength = &v
			}
			for f, v := range stringFormats {
				if v == s.GetFormat() {
					prop.Format = f
				}
			}
			props[name] = prop
		case d.GetNumberSchema() != nil:
			s := d.GetNumberSchema()
			prop := jsonSchemaProp{Type: "number", Title: s.GetTitle(), Description: s.GetDescription()}
			if s.GetMinimum() > 0 {
				v := float64(s.GetMinimum())
				prop.Minimum = &v
			}
			if s.GetMaximum() > 0 {
				v := float64(s.GetMaximum())
				prop.Maximum = &v
			}
			props[name] = prop
		case d.GetBooleanSchema() != nil:
			s := d.GetBooleanSchema()
			props[name] = jsonSchemaProp{Type: "boolean", Title: s.GetTitle(), Description: s.GetDescription(), Default: s.GetDefault()}
		case d.GetEnumSchema() != nil:
			s := d.GetEnumSchema()
			props[name] = jsonSchemaProp{Type: "string", Title: s.GetTitle(), Description: s.GetDescription(), Enum: s.GetEnumList(), EnumNames: s.GetEnumNames()}
		default:
			return nil, fmt.Errorf("elicitation field %q sets no schema", name)
		}
	}
	schema, err := json.Marshal(map[string]any{"type": "object", "properties": props, "required": nonNil(p.GetRequiredFields())})
	if err != nil {
		return nil, err
	}
	return &mcp.ElicitParams{Message: p.GetMessage(), RequestedSchema: schema}, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

var elicitActions = map[string]pb.ElicitResult_Type{
	mcp.ElicitAccept:  pb.ElicitResult_TYPE_ACCEPT,
	mcp.ElicitDecline: pb.ElicitResult_TYPE_DECLINE,
	mcp.ElicitCancel:  pb.ElicitResult_TYPE_CANCEL,
}

func elicitResultToPB(r *mcp.ElicitResult) (*pb.ElicitResult, error) {
	t, ok := elicitActions[r.Action]
	if !ok {
		return nil, fmt.Errorf("unknown elicitation action %q", r.Action)
	}
	c, err := mapToStruct(r.Content)
	if err != nil {
		return nil, err
	}
	return &pb.ElicitResult{Type: t, Content: c}, nil
}

func elicitResultFromPB(r *pb.ElicitResult) (*mcp.ElicitResult, error) {
	for a, t := range elicitActions {
		if t == r.GetType() {
			out := &mcp.ElicitResult{Action: a}
			if r.GetContent() != nil {
				out.Content = r.GetContent().AsMap()
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("elicitation result of unknown type %v", r.GetType())
}

func rootsToPB(roots []mcp.Root) *pb.ListRootsResult {
	out := &pb.ListRootsResult{}
	for _, r := range roots {
		out.Roots = append(out.Roots, &pb.ListRootsResult_Root{Uri: r.URI, Name: r.Name})
	}
	return out
}

func rootsFromPB(r *pb.ListRootsResult) []mcp.Root {
	out := []mcp.Root{}
	for _, x := range r.GetRoots() {
		out = append(out, mcp.Root{URI: x.GetUri(), Name: x.GetName()})
	}
	return out
}

// inputRequestsFromPB turns the server's dependent_requests into the
// engine's input requests, keyed as the server keyed them, so that
// transport.Rounds answers them with Handlers.Serve as it answers a
// 2026-07-28 server's inputRequests.
func inputRequestsFromPB(reqs map[string]*pb.ServerInitiatedRequest) (map[string]mcp.InputRequest, error) {
	out := make(map[string]mcp.InputRequest, len(reqs))
	for key, r := range reqs {
		var (
			method string
			params any
			err    error
		)
		switch {
		case r.GetSamplingCreateMessage() != nil:
			method = mcp.MethodSamplingCreateMessage
			params, err = samplingRequestFromPB(r.GetSamplingCreateMessage())
		case r.GetElicitRequest() != nil:
			method = mcp.MethodElicitationCreate
			params, err = elicitRequestFromPB(r.GetElicitRequest())
		case r.GetListRootsRequest() != nil || r.GetNotifyOnRootListUpdate():
			// notify_on_root_list_update cannot be honoured on unary calls;
			// the current list is the best answer.
			method = mcp.MethodRootsList
		default:
			return nil, fmt.Errorf("%w: dependent request %q asks for nothing tako knows", transport.ErrProtocol, key)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: dependent request %q: %v", transport.ErrProtocol, key, err)
		}
		ir := mcp.InputRequest{Method: method}
		if params != nil {
			if ir.Params, err = json.Marshal(params); err != nil {
				return nil, fmt.Errorf("dependent request %q: %w", key, err)
			}
		}
		out[key] = ir
	}
	return out, nil
}

// answersToPB turns the handlers' answers (as Handlers.Serve returns them)
// into dependent_responses under the same keys.
func answersToPB(answers map[string]any) (map[string]*pb.ServerInitiatedResponse, error) {
	out := make(map[string]*pb.ServerInitiatedResponse, len(answers))
	for key, a := range answers {
		var r pb.ServerInitiatedResponse
		switch a := a.(type) {
		case *mcp.CreateMessageResult:
			pr, err := samplingResultToPB(a)
			if err != nil {
				return nil, fmt.Errorf("sampling handler result for %q: %w", key, err)
			}
			r.SamplingCreateMessageResult = pr
		case *mcp.ElicitResult:
			pr, err := elicitResultToPB(a)
			if err != nil {
				return nil, fmt.Errorf("elicitation handler result for %q: %w", key, err)
			}
			r.ElicitResult = pr
		case *mcp.ListRootsResult:
			r.RootListResult = rootsToPB(a.Roots)
		default:
			return nil, fmt.Errorf("answer %T for dependent request %q has no form on the gRPC service", a, key)
		}
		out[key] = &r
	}
	return out, nil
}
