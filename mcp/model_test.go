package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"
)

func TestRequestMeta(t *testing.T) {
	t.Run("marshals to the reserved keys", func(t *testing.T) {
		rm := RequestMeta{
			ProtocolVersion:    Version20260728,
			ClientCapabilities: &ClientCapabilities{Elicitation: &ElicitationCapability{Form: &struct{}{}}},
			ClientInfo:         &Implementation{Name: "tako", Version: "0.1.0"},
			LogLevel:           LevelWarning,
			ProgressToken:      json.RawMessage(`"tok-1"`),
		}
		b, err := json.Marshal(rm)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
			`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},` +
			`"io.modelcontextprotocol/clientInfo":{"name":"tako","version":"0.1.0"},` +
			`"io.modelcontextprotocol/logLevel":"warning","progressToken":"tok-1"}`
		if string(b) != want {
			t.Errorf("got  %s\nwant %s", b, want)
		}
		for _, k := range []string{MetaProtocolVersion, MetaClientCapabilities, MetaClientInfo, MetaLogLevel, MetaProgressToken} {
			if !strings.Contains(string(b), `"`+k+`":`) {
				t.Errorf("key %s missing", k)
			}
		}
	})
	t.Run("required capabilities default to {}", func(t *testing.T) {
		b, err := json.Marshal(RequestMeta{ProtocolVersion: Version20260728})
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}` {
			t.Errorf("got %s", b)
		}
	})
	t.Run("MergeInto keeps other keys", func(t *testing.T) {
		m := Meta{"traceparent": json.RawMessage(`"00-abc-def-01"`), MetaProtocolVersion: json.RawMessage(`"2025-11-25"`)}
		got, err := RequestMeta{ProtocolVersion: Version20260728, ClientInfo: &Implementation{Name: "c", Version: "1"}}.MergeInto(m)
		if err != nil {
			t.Fatal(err)
		}
		if string(got["traceparent"]) != `"00-abc-def-01"` || string(got[MetaProtocolVersion]) != `"2026-07-28"` ||
			string(got[MetaClientCapabilities]) != `{}` || string(got[MetaClientInfo]) != `{"name":"c","version":"1"}` {
			t.Errorf("got %v", got)
		}
		if _, ok := got[MetaLogLevel]; ok {
			t.Error("empty log level was sent")
		}
		fresh, err := RequestMeta{ProtocolVersion: Version20260728}.MergeInto(nil)
		if err != nil || len(fresh) != 2 {
			t.Errorf("MergeInto(nil) = %v, %v", fresh, err)
		}
		// The merged meta goes out as params._meta.
		p := ListToolsParams{Meta: got}
		req, err := NewRequest(Int64ID(1), MethodToolsList, p)
		if err != nil {
			t.Fatal(err)
		}
		var back ListToolsParams
		mustUnmarshal(t, req.Params, &back)
		rm, err := ParseRequestMeta(back.Meta)
		if err != nil || rm.ProtocolVersion != Version20260728 || rm.ClientInfo.Name != "c" || rm.ClientCapabilities == nil {
			t.Errorf("ParseRequestMeta = %+v, %v", rm, err)
		}
	})
	t.Run("parse a request's meta", func(t *testing.T) {
		m := mustDecode(t, modernToolsCallRequest)
		var p CallToolParams
		mustUnmarshal(t, m.Params, &p)
		rm, err := ParseRequestMeta(p.Meta)
		if err != nil {
			t.Fatal(err)
		}
		if rm.ProtocolVersion != "2026-07-28" || rm.ClientInfo == nil || rm.ClientInfo.Name != "quayside" ||
			rm.ClientCapabilities == nil || rm.ClientCapabilities.Elicitation == nil || rm.LogLevel != "" || rm.ProgressToken != nil {
			t.Errorf("got %+v", rm)
		}
		withTok := payloadAs[CallToolParams](t, modernToolsCallWithProgressRequest)
		if tok, ok := withTok.Meta.ProgressToken(); !ok || string(tok) != `"tally-5"` {
			t.Errorf("ProgressToken = %s, %v", tok, ok)
		}
		if rm, err := ParseRequestMeta(withTok.Meta); err != nil || rm.LogLevel != LevelNotice || string(rm.ProgressToken) != `"tally-5"` {
			t.Errorf("with progress and log level: %+v, %v", rm, err)
		}
		if _, ok := p.Meta.ProgressToken(); ok {
			t.Error("ProgressToken on a request without one")
		}
	})
	t.Run("missing keys stay zero, malformed ones fail", func(t *testing.T) {
		rm, err := ParseRequestMeta(Meta{"other": json.RawMessage(`1`)})
		if err != nil || !reflect.DeepEqual(rm, RequestMeta{}) {
			t.Errorf("got %+v, %v", rm, err)
		}
		for _, bad := range []Meta{
			{MetaProtocolVersion: json.RawMessage(`20260728`)},
			{MetaClientCapabilities: json.RawMessage(`"all"`)},
			{MetaClientInfo: json.RawMessage(`[]`)},
			{MetaLogLevel: json.RawMessage(`3`)},
		} {
			if _, err := ParseRequestMeta(bad); err == nil {
				t.Errorf("ParseRequestMeta(%v) succeeded", bad)
			}
		}
	})
}

func TestMetaGetters(t *testing.T) {
	ack := mustDecode(t, modernSubscriptionsAck)
	var p SubscriptionsAcknowledgedParams
	mustUnmarshal(t, ack.Params, &p)
	if id, ok := p.Meta.SubscriptionID(); !ok || id != StringID("watch-7") {
		t.Errorf("SubscriptionID = %v, %v", id, ok)
	}
	if id, ok := (Meta{MetaSubscriptionID: json.RawMessage(`7`)}).SubscriptionID(); !ok || id != Int64ID(7) {
		t.Errorf("integer SubscriptionID = %v, %v", id, ok)
	}
	for _, bad := range []Meta{nil, {MetaSubscriptionID: json.RawMessage(`null`)}, {MetaSubscriptionID: json.RawMessage(`{}`)}} {
		if id, ok := bad.SubscriptionID(); ok {
			t.Errorf("SubscriptionID(%v) = %v", bad, id)
		}
	}
	dr := payloadAs[DiscoverResult](t, modernDiscoverResult)
	if si, ok := dr.Meta.ServerInfo(); !ok || si.Name != "lighthouse" || si.Version != "2.0.0" {
		t.Errorf("ServerInfo = %+v, %v", si, ok)
	}
	if _, ok := (Meta{MetaServerInfo: json.RawMessage(`"x"`)}).ServerInfo(); ok {
		t.Error("ServerInfo from a string")
	}
	if id, ok := payloadAs[CallToolResult](t, legacyTasksResultResponse).Meta.RelatedTask(); !ok || id != "tsk-1d20" {
		t.Errorf("RelatedTask = %q, %v", id, ok)
	}
	if _, ok := (Meta{}).RelatedTask(); ok {
		t.Error("RelatedTask on empty meta")
	}
}

func TestParseResultType(t *testing.T) {
	for _, tc := range []struct {
		raw, want string
		bad       bool
	}{
		{`{}`, ResultTypeComplete, false},
		{`{"content":[]}`, ResultTypeComplete, false},
		{`{"resultType":"complete"}`, ResultTypeComplete, false},
		{`{"resultType":"input_required","requestState":"x"}`, ResultTypeInputRequired, false},
		{`{"resultType":"task","taskId":"t"}`, ResultTypeTask, false},
		{`{"resultType":"something_new"}`, "something_new", false},
		{`{"resultType":null}`, ResultTypeComplete, false},
		{`{"resultType":""}`, ResultTypeComplete, false},
		{" \n{\"a\":{\"resultType\":\"task\"},\n\"resultType\" : \"input_required\"}", ResultTypeInputRequired, false},
		{`{"nested":{"resultType":"task"}}`, ResultTypeComplete, false},
		{`{"resultType":7}`, "", true},
		{`{"resultType":["task"]}`, "", true},
		{`[]`, "", true},
		{`null`, "", true},
		{`"complete"`, "", true},
		{``, "", true},
		{`{"resultType":"task"`, "", true},
	} {
		got, err := ParseResultType(json.RawMessage(tc.raw))
		if tc.bad {
			if err == nil || !errors.Is(err, ErrBadResult) {
				t.Errorf("ParseResultType(%s) = %q, %v; want ErrBadResult", tc.raw, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseResultType(%s) = %q, %v; want %q", tc.raw, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		name, wire, want string
	}{
		{"input_required, state only", modernInputRequiredStateOnly, ResultTypeInputRequired},
		{"input_required with requests", modernToolsCallInputRequired, ResultTypeInputRequired},
		{"complete with structured content", modernToolsCallResult, ResultTypeComplete},
		{"task", extCreateTaskResponse, ResultTypeTask},
		{"legacy, no resultType", legacyToolsCallResult, ResultTypeComplete},
	} {
		rt, err := ParseResultType(mustDecode(t, tc.wire).Result)
		if err != nil || rt != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, rt, err, tc.want)
		}
	}
}

func TestLoggingLevels(t *testing.T) {
	order := []LoggingLevel{LevelDebug, LevelInfo, LevelNotice, LevelWarning, LevelError, LevelCritical, LevelAlert, LevelEmergency}
	names := []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
	for i, l := range order {
		if string(l) != names[i] || !l.IsValid() || l.Severity() != i {
			t.Errorf("%q: valid %v severity %d", l, l.IsValid(), l.Severity())
		}
		if i > 0 && l.SlogLevel() < order[i-1].SlogLevel() {
			t.Errorf("SlogLevel(%s) < SlogLevel(%s)", l, order[i-1])
		}
	}
	for _, l := range []LoggingLevel{"", "warn", "DEBUG", "fatal", "trace"} {
		if l.IsValid() || l.Severity() != -1 || l.SlogLevel() != slog.LevelInfo {
			t.Errorf("%q accepted", l)
		}
	}
	if LevelWarning.SlogLevel() != slog.LevelWarn || LevelEmergency.SlogLevel() <= slog.LevelError {
		t.Error("SlogLevel mapping")
	}
	m := payloadAs[LoggingMessageParams](t, legacyLogMessage)
	if m.Level != LevelError || !m.Level.IsValid() {
		t.Errorf("level %q", m.Level)
	}
	if m := payloadAs[LoggingMessageParams](t, modernLogMessage); m.Level != LevelWarning || m.Level.SlogLevel() != slog.LevelWarn {
		t.Errorf("level %q", m.Level)
	}
}

func TestErrorConstructors(t *testing.T) {
	for _, tc := range []struct {
		e    *Error
		code int64
		data string
	}{
		{NewParseError(""), CodeParseError, ""},
		{NewInvalidRequestError("no method"), CodeInvalidRequest, ""},
		{NewMethodNotFoundError("sampling/createMessage"), CodeMethodNotFound, ""},
		{NewInvalidParamsError(""), CodeInvalidParams, ""},
		{NewInternalError("boom"), CodeInternalError, ""},
		{NewResourceNotFoundError(Version20251125, "file:///x"), CodeResourceNotFound, `{"uri":"file:///x"}`},
		{NewResourceNotFoundError(Version20260728, "file:///x"), CodeInvalidParams, `{"uri":"file:///x"}`},
		{NewHeaderMismatchError(""), CodeHeaderMismatch, ""},
		{NewMissingCapabilityError(ClientCapabilities{Elicitation: &ElicitationCapability{}}), CodeMissingRequiredClientCapability,
			`{"requiredCapabilities":{"elicitation":{}}}`},
		{NewUnsupportedVersionError("1900-01-01", []string{Version20260728}), CodeUnsupportedProtocolVersion,
			`{"supported":["2026-07-28"],"requested":"1900-01-01"}`},
		{NewUnsupportedVersionError("x", nil), CodeUnsupportedProtocolVersion, `{"supported":[],"requested":"x"}`},
		{NewUserRejectedError(""), CodeUserRejected, ""},
		{NewError(-32099, "custom", map[string]int{"n": 1}), -32099, `{"n":1}`},
		{NewError(-32099, "raw", json.RawMessage(`[1,2]`)), -32099, `[1,2]`},
		{NewURLElicitationRequiredError("", ElicitParams{Message: "log in", URL: "https://example.com/a", ElicitationID: "e1"}),
			CodeURLElicitationRequired, `{"elicitations":[{"mode":"url","message":"log in","url":"https://example.com/a","elicitationId":"e1"}]}`},
	} {
		if tc.e.Code != tc.code || tc.e.Message == "" || string(tc.e.Data) != tc.data {
			t.Errorf("%+v: want code %d data %s", tc.e, tc.code, tc.data)
		}
		if _, err := NewResponse(Int64ID(1), nil, tc.e); err != nil {
			t.Error(err)
		}
	}
	bad := NewError(1, "m", func() {})
	if bad.Data != nil || !strings.Contains(bad.Message, "data dropped") {
		t.Errorf("unmarshalable data: %+v", bad)
	}
}

func TestErrorData(t *testing.T) {
	t.Run("unsupported version, 2026", func(t *testing.T) {
		e := mustDecode(t, modernUnsupportedVersion).Error
		d, ok := e.UnsupportedVersion()
		if !ok || !reflect.DeepEqual(d.Supported, []string{"2026-07-28", "2025-11-25"}) || d.Requested != "2027-03-01" {
			t.Errorf("got %+v, %v", d, ok)
		}
	})
	t.Run("unsupported version, legacy -32602", func(t *testing.T) {
		e := mustDecode(t, legacyInitializeUnsupportedVersion).Error
		d, ok := e.UnsupportedVersion()
		if !ok || !reflect.DeepEqual(d.Supported, []string{"2025-03-26", "2024-11-05"}) || d.Requested != "2025-11-25" {
			t.Errorf("got %+v, %v", d, ok)
		}
	})
	t.Run("not an unsupported version", func(t *testing.T) {
		for _, e := range []*Error{
			NewInvalidParamsError("Unknown tool"),
			NewError(CodeInvalidParams, "x", map[string]string{"uri": "file:///x"}),
			NewError(CodeInternalError, "x", UnsupportedVersionData{Supported: []string{"a"}}),
			{Code: CodeUnsupportedProtocolVersion, Message: "x", Data: json.RawMessage(`"nope"`)},
		} {
			if d, ok := e.UnsupportedVersion(); ok {
				t.Errorf("%+v gave %+v", e, d)
			}
		}
	})
	t.Run("missing capability", func(t *testing.T) {
		e := mustDecode(t, modernMissingElicitation).Error
		caps, ok := e.MissingCapabilities()
		if !ok || caps.Elicitation == nil || caps.Elicitation.Form == nil {
			t.Errorf("got %+v, %v", caps, ok)
		}
		if _, ok := NewInternalError("").MissingCapabilities(); ok {
			t.Error("MissingCapabilities on -32603")
		}
	})
	t.Run("url elicitation required", func(t *testing.T) {
		e := mustDecode(t, legacyURLElicitationRequired).Error
		els, ok := e.URLElicitations()
		if !ok || len(els) != 1 {
			t.Fatalf("got %+v, %v", els, ok)
		}
		el := els[0]
		if !el.IsURL() || el.ElicitationID != "el-9c04aa" ||
			!strings.HasPrefix(el.URL, "https://portal.lighthouse.example/authorize?") || el.Message == "" {
			t.Errorf("got %+v", el)
		}
		if _, ok := NewInvalidParamsError("").URLElicitations(); ok {
			t.Error("URLElicitations on -32602")
		}
		if _, ok := (&Error{Code: CodeURLElicitationRequired}).URLElicitations(); ok {
			t.Error("URLElicitations without data")
		}
	})
	t.Run("DecodeData", func(t *testing.T) {
		var v map[string]string
		if err := NewInternalError("").DecodeData(&v); !errors.Is(err, ErrNoData) {
			t.Errorf("DecodeData without data: %v", err)
		}
		for _, wire := range []string{legacyResourceNotFound, modernResourceNotFound} {
			e := mustDecode(t, wire).Error
			var d ResourceNotFoundData
			if err := e.DecodeData(&d); err != nil || d.URI != "harbour://berths/Q9/log" {
				t.Errorf("code %d: got %+v, %v", e.Code, d, err)
			}
		}
	})
}

func TestElicitation(t *testing.T) {
	m := mustDecode(t, legacyElicitURLRequest)
	var p ElicitParams
	mustUnmarshal(t, m.Params, &p)
	if !p.IsURL() || p.ElicitationID == "" || p.URL != "https://portal.lighthouse.example/link-account?ticket=el-5b1d9e" {
		t.Errorf("got %+v", p)
	}
	n := mustDecode(t, legacyElicitationComplete)
	var c ElicitationCompleteParams
	mustUnmarshal(t, n.Params, &c)
	if n.Method != NotificationElicitationComplete || c.ElicitationID != p.ElicitationID {
		t.Errorf("got %s %+v", n.Method, c)
	}
	form := payloadAs[ElicitParams](t, modernElicitFormParams)
	if form.IsURL() || form.Mode != ElicitModeForm || len(form.RequestedSchema) == 0 {
		t.Errorf("got %+v", form)
	}
	legacyForm := payloadAs[ElicitParams](t, legacyElicitFormRequest)
	if legacyForm.IsURL() || legacyForm.ElicitationID != "" || !json.Valid(legacyForm.RequestedSchema) {
		t.Errorf("got %+v", legacyForm)
	}
	accepted := payloadAs[ElicitResult](t, legacyElicitAcceptResult)
	if accepted.Action != ElicitAccept || accepted.Content["tugs"] != 3.0 || accepted.Content["hazardous"] != false {
		t.Errorf("got %+v", accepted)
	}
	for wire, action := range map[string]string{legacyElicitDeclineResult: ElicitDecline, legacyElicitCancelResult: ElicitCancel} {
		if r := payloadAs[ElicitResult](t, wire); r.Action != action || r.Content != nil {
			t.Errorf("got %+v, want %s", r, action)
		}
	}
	// 2026 dropped elicitationId: a URL elicitation without one decodes.
	u := payloadAs[ElicitParams](t, modernElicitURLParams)
	if !u.IsURL() || u.ElicitationID != "" {
		t.Errorf("got %+v", u)
	}
	task := ElicitParams{Message: "m", Task: &TaskParams{}}
	b, _ := json.Marshal(task)
	if string(b) != `{"message":"m","task":{}}` {
		t.Errorf("task-augmented elicitation encoded as %s", b)
	}
}

func TestSubscriptions(t *testing.T) {
	m := mustDecode(t, modernListenRequest)
	if m.Method != MethodSubscriptionsListen || m.ID != StringID("watch-7") {
		t.Fatalf("got %s %v", m.Method, m.ID)
	}
	var p SubscriptionsListenParams
	mustUnmarshal(t, m.Params, &p)
	want := SubscriptionFilter{ToolsListChanged: true, PromptsListChanged: true,
		ResourceSubscriptions: []string{"harbour://tides/2026-03", "harbour://berths/Q3/log"}}
	if !reflect.DeepEqual(p.Notifications, want) {
		t.Errorf("filter = %+v", p.Notifications)
	}

	ack := mustDecode(t, modernSubscriptionsAck)
	if ack.Method != NotificationSubscriptionsAck {
		t.Fatalf("method %s", ack.Method)
	}
	var ap SubscriptionsAcknowledgedParams
	mustUnmarshal(t, ack.Params, &ap)
	if d := p.Notifications.Denied(ap.Notifications); !d.IsEmpty() {
		t.Errorf("everything was granted, but Denied = %+v", d)
	}

	asked := SubscriptionFilter{ToolsListChanged: true, PromptsListChanged: true, ResourcesListChanged: true,
		ResourceSubscriptions: []string{"a", "b"}, TaskIDs: []string{"t1", "t2"}}
	granted := SubscriptionFilter{ToolsListChanged: true, ResourceSubscriptions: []string{"b"}, TaskIDs: []string{"t2", "t9"}}
	wantDenied := SubscriptionFilter{PromptsListChanged: true, ResourcesListChanged: true,
		ResourceSubscriptions: []string{"a"}, TaskIDs: []string{"t1"}}
	if d := asked.Denied(granted); !reflect.DeepEqual(d, wantDenied) {
		t.Errorf("Denied = %+v", d)
	}
	if !(SubscriptionFilter{}).IsEmpty() || asked.IsEmpty() {
		t.Error("IsEmpty")
	}

	b, _ := json.Marshal(SubscriptionsListenParams{})
	if string(b) != `{"notifications":{}}` {
		t.Errorf("empty listen params encoded as %s", b)
	}

	end := mustDecode(t, modernListenClosed)
	var r SubscriptionsListenResult
	mustUnmarshal(t, end.Result, &r)
	if id, ok := r.Meta.SubscriptionID(); !ok || id != end.ID {
		t.Errorf("listen result subscription id %v, response id %v", id, end.ID)
	}
	for _, wire := range []string{modernToolsListChanged, modernResourceUpdated} {
		n := mustDecode(t, wire)
		var p struct {
			Meta Meta `json:"_meta"`
		}
		mustUnmarshal(t, n.Params, &p)
		if id, ok := p.Meta.SubscriptionID(); !ok || id != m.ID {
			t.Errorf("%s: subscription id %v, %v; want the listen request's %v", n.Method, id, ok, m.ID)
		}
	}
}

func TestContentConstructors(t *testing.T) {
	png := []byte{0x89, 'P', 'N', 'G', 0, 0xff}
	for _, tc := range []struct {
		c    Content
		wire string
	}{
		{TextContent("hi"), `{"type":"text","text":"hi"}`},
		{ImageContent(png, "image/png"), `{"type":"image","data":"iVBORwD/","mimeType":"image/png"}`},
		{AudioContent([]byte("RIFF"), "audio/wav"), `{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}`},
		{ResourceLinkContent("file:///a.rs", "a.rs"), `{"type":"resource_link","uri":"file:///a.rs","name":"a.rs"}`},
		{EmbeddedTextResource("file:///a.txt", "text/plain", ""), `{"type":"resource","resource":{"uri":"file:///a.txt","mimeType":"text/plain","text":""}}`},
		{EmbeddedBlobResource("file:///a.bin", "", png), `{"type":"resource","resource":{"uri":"file:///a.bin","blob":"iVBORwD/"}}`},
		{ToolUseContent("call_1", "get_weather", json.RawMessage(`{"city":"Paris"}`)), `{"type":"tool_use","name":"get_weather","id":"call_1","input":{"city":"Paris"}}`},
		{ToolUseContent("call_2", "now", nil), `{"type":"tool_use","name":"now","id":"call_2","input":{}}`},
		{ToolResultContent("call_1", []Content{TextContent("18°C")}, false), `{"type":"tool_result","toolUseId":"call_1","content":[{"type":"text","text":"18°C"}]}`},
		{ToolResultContent("call_2", nil, true), `{"type":"tool_result","toolUseId":"call_2","content":[],"isError":true}`},
	} {
		b, err := json.Marshal(tc.c)
		if err != nil {
			t.Fatal(err)
		}
		if !jsonEqual(t, b, []byte(tc.wire)) {
			t.Errorf("got  %s\nwant %s", b, tc.wire)
		}
		var back Content
		mustUnmarshal(t, b, &back)
		b2, _ := json.Marshal(back)
		if !bytes.Equal(b, b2) {
			t.Errorf("unstable: %s then %s", b, b2)
		}
	}
	img := ImageContent(png, "image/png")
	if got, err := img.Bytes(); err != nil || !bytes.Equal(got, png) {
		t.Errorf("image Bytes = %v, %v", got, err)
	}
	blob := EmbeddedBlobResource("u", "", png)
	if got, err := blob.Bytes(); err != nil || !bytes.Equal(got, png) {
		t.Errorf("blob Bytes = %v, %v", got, err)
	}
	txt := TextContent("x")
	if _, err := txt.Bytes(); !errors.Is(err, ErrNoBinaryData) {
		t.Errorf("text Bytes: %v", err)
	}
	et := EmbeddedTextResource("u", "", "x")
	if _, err := et.Bytes(); !errors.Is(err, ErrNoBinaryData) {
		t.Errorf("embedded text Bytes: %v", err)
	}
	// The blocks of a server's result, one of each type.
	res := payloadAs[CallToolResult](t, legacyToolsCallResult)
	var types []string
	for _, c := range res.Content {
		types = append(types, c.Type)
	}
	if want := []string{ContentText, ContentImage, ContentAudio, ContentResourceLink, ContentResource, ContentResource}; !reflect.DeepEqual(types, want) {
		t.Fatalf("block types %v, want %v", types, want)
	}
	if png, err := res.Content[1].Bytes(); err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("image Bytes = %q, %v", png, err)
	}
	if wav, err := res.Content[2].Bytes(); err != nil || !bytes.HasPrefix(wav, []byte("RIFF")) {
		t.Errorf("audio Bytes = %q, %v", wav, err)
	}
	if _, err := res.Content[4].Bytes(); !errors.Is(err, ErrNoBinaryData) {
		t.Errorf("embedded text Bytes: %v", err)
	}
	if pdf, err := res.Content[5].Bytes(); err != nil || !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		t.Errorf("embedded blob Bytes = %q, %v", pdf, err)
	}
	if link := res.Content[3].Link; link == nil || link.Size == nil || *link.Size != 48213 || link.Name != "q3-log" || len(link.Icons) != 1 {
		t.Errorf("resource link %+v", link)
	}
	if res.Text() != "Berth Q3 is occupied by MV Kestrel (draught 9.4 m)." {
		t.Errorf("Text = %q", res.Text())
	}
}

// TestEmptyTextBlockLosesText pins a bug: Content's omitempty tags dropped
// members that a block's type requires, so TextContent("") (an empty tool
// output) went out as {"type":"text"}, which the schema rejects, and an
// image with empty data lost "data". Required members are now always
// written.
func TestEmptyTextBlockLosesText(t *testing.T) {
	for _, tc := range []struct {
		c    Content
		want string
	}{
		{TextContent(""), `{"type":"text","text":""}`},
		{Content{Type: ContentImage}, `{"type":"image","data":"","mimeType":""}`},
		{Content{Type: ContentResourceLink, Link: &ResourceLink{URI: "u"}}, `{"type":"resource_link","uri":"u","name":""}`},
		{Content{Type: ContentToolUse}, `{"type":"tool_use","name":"","id":"","input":{}}`},
		{Content{Type: ContentToolResult}, `{"type":"tool_result","toolUseId":"","content":[]}`},
	} {
		b, err := json.Marshal(tc.c)
		if err != nil || string(b) != tc.want {
			t.Errorf("got %s, %v; want %s", b, err, tc.want)
		}
	}
	r := CallToolResult{Content: []Content{TextContent("")}}
	b, _ := json.Marshal(r)
	if string(b) != `{"content":[{"type":"text","text":""}]}` {
		t.Errorf("result with an empty text block: %s", b)
	}
}

// TestNilRequiredArrayMarshalledAsNull pins a bug: results whose required
// array member was a nil slice went out as null, e.g. a client with no
// roots answered roots/list with {"roots":null} and a tool with no output
// returned {"content":null}; both fail the receiver's schema check. They
// now go out as [].
func TestNilRequiredArrayMarshalledAsNull(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{ListRootsResult{}, `{"roots":[]}`},
		{&ListRootsResult{}, `{"roots":[]}`},
		{CallToolResult{}, `{"content":[]}`},
		{CallToolResult{IsError: true}, `{"content":[],"isError":true}`},
		{ListToolsResult{}, `{"tools":[]}`},
		{ListResourcesResult{}, `{"resources":[]}`},
		{ListResourceTemplatesResult{}, `{"resourceTemplates":[]}`},
		{ReadResourceResult{}, `{"contents":[]}`},
		{ListPromptsResult{}, `{"prompts":[]}`},
		{GetPromptResult{}, `{"messages":[]}`},
		{CompleteResult{}, `{"completion":{"values":[]}}`},
		{DiscoverResult{}, `{"supportedVersions":[],"capabilities":{}}`},
		{CreateMessageParams{MaxTokens: 5}, `{"messages":[],"maxTokens":5}`},
		{UnsupportedVersionData{}, `{"supported":[]}`},
		{ListTasksResult{}, `{"tasks":[]}`},
		{Tool{Name: "t"}, `{"name":"t","inputSchema":{"type":"object"}}`},
		{ListToolsResult{Tools: []Tool{{Name: "t"}}, CacheFields: CacheFields{ResultType: "complete"}},
			`{"tools":[{"name":"t","inputSchema":{"type":"object"}}],"resultType":"complete"}`},
	} {
		b, err := json.Marshal(tc.v)
		if err != nil || string(b) != tc.want {
			t.Errorf("%T: got %s, %v; want %s", tc.v, b, err, tc.want)
		}
	}
	// Non-nil values are untouched.
	b, _ := json.Marshal(ListRootsResult{Roots: []Root{{URI: "file:///r"}}, Meta: Meta{"k": json.RawMessage(`1`)}})
	if string(b) != `{"roots":[{"uri":"file:///r"}],"_meta":{"k":1}}` {
		t.Errorf("got %s", b)
	}
	// Through a response, as the session sends it.
	resp, err := NewResponse(Int64ID(1), ListRootsResult{}, nil)
	if err != nil || string(resp.AppendJSON(nil)) != `{"jsonrpc":"2.0","id":1,"result":{"roots":[]}}` {
		t.Errorf("response: %s, %v", resp.AppendJSON(nil), err)
	}
}

func TestMRTRRetryParams(t *testing.T) {
	state := "rs1.eyJiZXJ0aCI6IlEzIn0.k9"
	ir := payloadAs[InputRequiredResult](t, modernToolsCallInputRequired)
	if ir.RequestState == nil || *ir.RequestState != state || len(ir.InputRequests) != 3 {
		t.Fatalf("got %+v", ir)
	}
	for key, method := range map[string]string{"who": MethodElicitationCreate, "draft": MethodSamplingCreateMessage, "where": MethodRootsList} {
		if got := ir.InputRequests[key].Method; got != method {
			t.Errorf("inputRequests[%s].method = %q, want %q", key, got, method)
		}
	}
	var sampling CreateMessageParams
	mustUnmarshal(t, ir.InputRequests["draft"].Params, &sampling)
	if sampling.MaxTokens != 80 || len(sampling.Messages) != 1 || ir.InputRequests["where"].Params != nil {
		t.Errorf("sampling request %+v", sampling)
	}
	if only := payloadAs[InputRequiredResult](t, modernInputRequiredStateOnly); only.InputRequests != nil ||
		only.RequestState == nil || *only.RequestState != "rs1.cG9sbC0y.a1" {
		t.Errorf("state only: %+v", only)
	}

	// The client answers each request in its own type, keyed as asked.
	answers := answersToReserveBerth{
		Who: ElicitResult{Action: ElicitAccept, Content: map[string]any{"agent": "Kestrel Shipping Ltd"}},
		Draft: CreateMessageResult{Role: "assistant", Model: "local-7b-instruct", StopReason: StopEndTurn,
			Content: mustJSON(t, TextContent("Berth Q3 reserved 20:00 to 23:59 for MV Kestrel."))},
		Where: ListRootsResult{Roots: []Root{{URI: "file:///srv/harbour/bookings", Name: "Bookings"}}},
	}
	if !jsonEqual(t, mustJSON(t, answers), []byte(modernInputResponses)) {
		t.Errorf("answers encode as %s", mustJSON(t, answers))
	}
	var responses map[string]json.RawMessage
	mustUnmarshal(t, mustJSON(t, answers), &responses)

	// The retry is the original params, plus the answers and the state.
	first := mustDecode(t, modernToolsCallRequest)
	var retry CallToolParams
	mustUnmarshal(t, first.Params, &retry)
	retry.InputResponses, retry.RequestState = responses, ir.RequestState
	b, err := json.Marshal(retry)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]json.RawMessage
	mustUnmarshal(t, b, &back)
	if string(back["requestState"]) != `"`+state+`"` || !jsonEqual(t, back["inputResponses"], []byte(modernInputResponses)) {
		t.Errorf("retry params %s", b)
	}
	want := mustDecode(t, modernToolsCallRetry)
	if !jsonEqual(t, b, want.Params) || want.ID == first.ID || want.Method != first.Method {
		t.Errorf("retry params\n got %s\nwant %s", b, want.Params)
	}
	bareFirst, _ := json.Marshal(CallToolParams{Name: "x"})
	if string(bareFirst) != `{"name":"x"}` {
		t.Errorf("first attempt carries retry members: %s", bareFirst)
	}
	for _, v := range []any{GetPromptParams{Name: "p", RequestState: &state}, ReadResourceParams{URI: "u", RequestState: &state}} {
		b, _ := json.Marshal(v)
		if !strings.Contains(string(b), `"requestState":"`+state+`"`) {
			t.Errorf("%T: %s", v, b)
		}
	}
}

// resultTypeByEncodingJSON is what ParseResultType answered before it
// scanned members itself: encoding/json's reading of the member.
func resultTypeByEncodingJSON(raw []byte) (string, bool) {
	var r struct {
		ResultType *json.RawMessage `json:"resultType"`
	}
	if json.Unmarshal(raw, &r) != nil {
		return "", false
	}
	if r.ResultType == nil || string(*r.ResultType) == "null" {
		return ResultTypeComplete, true
	}
	var s string
	if json.Unmarshal(*r.ResultType, &s) != nil {
		return "", false
	}
	if s == "" {
		return ResultTypeComplete, true
	}
	return s, true
}

// FuzzParseResultTypeMatchesStd: on any object, ParseResultType gives the
// value (or the failure) that encoding/json's reading gives.
func FuzzParseResultTypeMatchesStd(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"resultType":"task"}`, `{"content":[{"type":"text","text":"x"}],"resultType":"complete"}`,
		`{"resultType":null}`, `{"resultType":5}`, `{"RESULTTYPE":"task"}`, `{"resultType":"a","resultType":"b"}`,
		`{"r\u0065sultType":"task"}`, `{"resultType":"t\u0061sk"}`, `{"a":{"resultType":"x"}}`, `{"resultType":"x"} junk`,
		`{"resultType":"x",}`, `{"a":[1,2,{"b":null}],"resultType":""}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		trimmed := bytes.TrimLeft(raw, " \t\r\n")
		if len(trimmed) == 0 || trimmed[0] != '{' {
			return
		}
		want, wantOK := resultTypeByEncodingJSON(trimmed)
		got, err := ParseResultType(raw)
		if (err == nil) != wantOK || got != want {
			t.Errorf("ParseResultType(%q) = %q, %v; encoding/json reads %q (ok %v)", raw, got, err, want, wantOK)
		}
	})
}
