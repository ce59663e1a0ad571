package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestIDDecode(t *testing.T) {
	cases := []struct {
		wire    string
		want    ID
		wantErr bool
	}{
		{`7`, Int64ID(7), false},
		{`0`, Int64ID(0), false},
		{`-3`, Int64ID(-3), false},
		{`"7"`, StringID("7"), false},
		{`""`, StringID(""), false},
		{`"caf\u00e9 ☕"`, StringID("café ☕"), false},
		{`null`, ID{}, false},
		{`1.0`, Int64ID(1), false},
		{`-0.0`, Int64ID(0), false},
		{`12.50e1`, Int64ID(125), false},
		{`1e3`, Int64ID(1000), false},
		{`1E+2`, Int64ID(100), false},
		{`100e-2`, Int64ID(1), false},
		{`9223372036854775807`, Int64ID(math.MaxInt64), false},
		{`-9223372036854775808`, Int64ID(math.MinInt64), false},
		{`9223372036854775807.000`, Int64ID(math.MaxInt64), false},
		{`9007199254740993`, Int64ID(9007199254740993), false},
		{`9007199254740993.0`, Int64ID(9007199254740993), false},
		{`  42  `, Int64ID(42), false},
		{`1.5`, ID{}, true},
		{`1e-1`, ID{}, true},
		{`9223372036854775808`, ID{}, true},
		{`-9223372036854775809`, ID{}, true},
		{`-9223372036854775809.0`, ID{}, true},
		{`1e19`, ID{}, true},
		{`1e999999999999`, ID{}, true},
		{`1e-999999999999`, ID{}, true},
		{`true`, ID{}, true},
		{`{}`, ID{}, true},
		{`[1]`, ID{}, true},
		{`"unterminated`, ID{}, true},
		{``, ID{}, true},
		{`1.`, ID{}, true},
		{`.5`, ID{}, true},
		{`NaN`, ID{}, true},
		{`Infinity`, ID{}, true},
		{`0x10`, ID{}, true},
	}
	for _, tc := range cases {
		var id ID
		err := id.UnmarshalJSON([]byte(tc.wire))
		if (err != nil) != tc.wantErr {
			t.Errorf("UnmarshalJSON(%s) error = %v, want error %v", tc.wire, err, tc.wantErr)
			continue
		}
		if err == nil && id != tc.want {
			t.Errorf("UnmarshalJSON(%s) = %v, want %v", tc.wire, id, tc.want)
		}
	}
}

// TestIDFloatBeyond2p53AliasesAnotherID pins a bug: ids written with a
// fraction went through float64, so 9007199254740993.0 (2^53+1) became
// 9007199254740992 and matched, or answered, another request.
func TestIDFloatBeyond2p53AliasesAnotherID(t *testing.T) {
	var id ID
	if err := json.Unmarshal([]byte(`9007199254740993.0`), &id); err != nil {
		t.Fatal(err)
	}
	if n, _ := id.Int64(); n != 9007199254740993 {
		t.Errorf("9007199254740993.0 decoded as %d", n)
	}
}

// TestIDBelowMinInt64AliasesMinInt64 pins a bug: -9223372036854775809.0
// rounds to -2^63 as a float64, which passed the "is it integral" check and
// became math.MinInt64, a different, valid id.
func TestIDBelowMinInt64AliasesMinInt64(t *testing.T) {
	var id ID
	if err := json.Unmarshal([]byte(`-9223372036854775809.0`), &id); err == nil {
		t.Errorf("-9223372036854775809.0 decoded as %v, want an error", id)
	}
}

func TestIDRoundTrip(t *testing.T) {
	ids := []ID{Int64ID(0), Int64ID(1), Int64ID(-1), Int64ID(math.MaxInt64), Int64ID(math.MinInt64),
		StringID(""), StringID("abc"), StringID("1"), StringID("line\nbreak \"quoted\" \u2028"), StringID("\xff\xfe bad utf8")}
	for _, id := range ids {
		b, err := json.Marshal(id)
		if err != nil {
			t.Fatal(err)
		}
		var got ID
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%v: %v", id, err)
		}
		want := id
		if id.IsString() && !utf8.ValidString(id.str) {
			want = StringID(string([]rune(id.str)))
		}
		if got != want {
			t.Errorf("round trip of %v gave %v", id, got)
		}
		// String and integer ids never compare equal, even with the same
		// digits: the spec treats "1" and 1 as different ids.
		if id == StringID("1") && got == Int64ID(1) {
			t.Errorf("string id 1 became an integer id")
		}
	}
	if StringID("1") == Int64ID(1) {
		t.Error(`StringID("1") == Int64ID(1)`)
	}
	if (ID{}).IsValid() || !Int64ID(0).IsValid() || !StringID("").IsValid() {
		t.Error("IsValid: zero ID must be invalid; 0 and \"\" must be valid")
	}
	if got := string(ID{}.AppendJSON(nil)); got != "null" {
		t.Errorf("zero ID encodes as %s", got)
	}
	if Int64ID(5).String() != "5" || StringID("5").String() != `"5"` || (ID{}).String() != "<no id>" {
		t.Error("String formats")
	}
	if n, ok := Int64ID(5).Int64(); !ok || n != 5 {
		t.Error("Int64")
	}
	if _, ok := StringID("5").Int64(); ok {
		t.Error("Int64 on a string id")
	}
	if Int64ID(5).Raw() != int64(5) || StringID("x").Raw() != "x" || (ID{}).Raw() != nil {
		t.Error("Raw")
	}
}

func TestMessageShapes(t *testing.T) {
	req, err := NewRequest(Int64ID(1), MethodToolsCall, &CallToolParams{Name: "add", Arguments: json.RawMessage(`{"a":1,"b":2}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !req.IsRequest() || req.IsNotification() || req.IsResponse() {
		t.Errorf("request classified wrong: %+v", req)
	}
	if got, want := string(req.AppendJSON(nil)), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`; got != want {
		t.Errorf("request:\n got %s\nwant %s", got, want)
	}

	note, err := NewNotification(NotificationInitialized, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !note.IsNotification() || note.IsRequest() || note.IsResponse() {
		t.Errorf("notification classified wrong")
	}
	if got, want := string(note.AppendJSON(nil)), `{"jsonrpc":"2.0","method":"notifications/initialized"}`; got != want {
		t.Errorf("notification:\n got %s\nwant %s", got, want)
	}

	resp, err := NewResponse(StringID("a"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !resp.IsResponse() {
		t.Error("response classified wrong")
	}
	if got, want := string(resp.AppendJSON(nil)), `{"jsonrpc":"2.0","id":"a","result":{}}`; got != want {
		t.Errorf("empty response:\n got %s\nwant %s", got, want)
	}

	errResp, err := NewResponse(Int64ID(9), nil, NewMethodNotFoundError("roots/list"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(errResp.AppendJSON(nil)), `{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"Method not found: roots/list"}}`; got != want {
		t.Errorf("error response:\n got %s\nwant %s", got, want)
	}

	plain, _ := NewResponse(Int64ID(10), nil, errors.New("disk full"))
	if plain.Error == nil || plain.Error.Code != CodeInternalError || plain.Error.Message != "disk full" {
		t.Errorf("a plain error must become -32603: %+v", plain.Error)
	}

	// An error response to an unparseable request has no id: it is sent
	// as "id":null and decodes back to the zero ID.
	noID := &Message{Error: NewParseError("")}
	line := noID.AppendJSON(nil)
	if got, want := string(line), `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`; got != want {
		t.Errorf("id-less error:\n got %s\nwant %s", got, want)
	}
	back, err := DecodeMessage(line)
	if err != nil || back.ID.IsValid() || back.Error.Code != CodeParseError {
		t.Errorf("id-less error decoded as %+v, %v", back, err)
	}

	if _, err := NewRequest(Int64ID(1), "x", func() {}); err == nil {
		t.Error("NewRequest accepted params that cannot be marshalled")
	}
}

func TestMessageJSONMethods(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":"q","method":"ping"}`
	var m Message
	if err := json.Unmarshal([]byte(in), &m); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("got %s", out)
	}
	if err := json.Unmarshal([]byte(`{"jsonrpc":"1.0","id":1,"method":"x"}`), &m); !errors.Is(err, ErrNotJSONRPC) {
		t.Errorf("Message.UnmarshalJSON accepted jsonrpc 1.0: %v", err)
	}
}

func TestDecodeMessageRejectsJunk(t *testing.T) {
	cases := []struct {
		name, wire string
		notRPC     bool // the error must wrap ErrNotJSONRPC
	}{
		{"empty", ``, false},
		{"not json", `hello`, false},
		{"log line", `[info] server started`, false},
		{"truncated", `{"jsonrpc":"2.0","id":1,"method":"x"`, false},
		{"trailing garbage", `{"jsonrpc":"2.0","id":1,"result":{}} x`, false},
		{"two messages", `{"jsonrpc":"2.0","id":1,"result":{}}{"jsonrpc":"2.0","id":2,"result":{}}`, false},
		{"a string", `"jsonrpc"`, false},
		{"null", `null`, true},
		{"empty object", `{}`, true},
		{"missing jsonrpc", `{"id":1,"method":"x"}`, true},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","id":1,"method":"x"}`, true},
		{"numeric jsonrpc", `{"jsonrpc":2.0,"id":1,"method":"x"}`, false},
		{"response without result or error", `{"jsonrpc":"2.0","id":1}`, true},
		{"result without id", `{"jsonrpc":"2.0","result":{}}`, true},
		{"result with null id", `{"jsonrpc":"2.0","id":null,"result":{}}`, true},
		{"both result and error", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`, true},
		{"request with result", `{"jsonrpc":"2.0","id":1,"method":"x","result":{}}`, true},
		{"notification with error", `{"jsonrpc":"2.0","method":"x","error":{"code":1,"message":"m"}}`, true},
		{"boolean id", `{"jsonrpc":"2.0","id":true,"method":"x"}`, false},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"x"}`, false},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"result":{}}`, false},
		{"numeric method", `{"jsonrpc":"2.0","id":1,"method":7}`, false},
		{"error not an object", `{"jsonrpc":"2.0","id":1,"error":"boom"}`, false},
		{"fractional error code", `{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}`, false},
		{"batch to DecodeMessage", `[{"jsonrpc":"2.0","id":1,"result":{}}]`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := DecodeMessage([]byte(tc.wire))
			if err == nil {
				t.Fatalf("accepted %s as %+v", tc.wire, m)
			}
			if tc.notRPC && !errors.Is(err, ErrNotJSONRPC) {
				t.Errorf("error %v does not wrap ErrNotJSONRPC", err)
			}
		})
	}
}

// TestDecodeMessageAcceptsBothResultAndError pins a bug: a response with
// both members was accepted, and AppendJSON then silently dropped the
// result; a request carrying a result lost it the same way. JSON-RPC 2.0
// allows exactly one of result and error, on responses only.
func TestDecodeMessageAcceptsBothResultAndError(t *testing.T) {
	for _, wire := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"x":1},"error":{"code":-32603,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","result":{}}`,
	} {
		if m, err := DecodeMessage([]byte(wire)); !errors.Is(err, ErrNotJSONRPC) {
			t.Errorf("DecodeMessage(%s) = %+v, %v; want ErrNotJSONRPC", wire, m, err)
		}
	}
}

func TestDecodeMessageLenient(t *testing.T) {
	cases := []struct {
		name, wire string
		check      func(*Message) bool
	}{
		{"error with result null", `{"jsonrpc":"2.0","id":1,"result":null,"error":{"code":-32601,"message":"m"}}`,
			func(m *Message) bool { return m.Error != nil && m.Result == nil }},
		{"result with error null", `{"jsonrpc":"2.0","id":1,"result":{"a":1},"error":null}`,
			func(m *Message) bool { return m.Error == nil && string(m.Result) == `{"a":1}` }},
		{"null result", `{"jsonrpc":"2.0","id":1,"result":null}`,
			func(m *Message) bool { return string(m.Result) == "null" }},
		{"notification with null id", `{"jsonrpc":"2.0","id":null,"method":"notifications/x"}`,
			func(m *Message) bool { return m.IsNotification() }},
		{"params on a response are ignored", `{"jsonrpc":"2.0","id":1,"result":{},"params":{"x":1}}`,
			func(m *Message) bool { return m.IsResponse() && m.Params == nil }},
		{"white space around", " \r\n\t{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n ",
			func(m *Message) bool { return m.IsResponse() }},
		{"unknown members", `{"jsonrpc":"2.0","id":"x","method":"m","x-trace":{"a":1}}`,
			func(m *Message) bool { return m.IsRequest() }},
		{"integral float id", `{"jsonrpc":"2.0","id":3.0,"result":{}}`,
			func(m *Message) bool { return m.ID == Int64ID(3) }},
	}
	for _, tc := range cases {
		m, err := DecodeMessage([]byte(tc.wire))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !tc.check(m) {
			t.Errorf("%s: decoded as %+v", tc.name, m)
		}
	}
}

func TestDecodeMessages(t *testing.T) {
	single, err := DecodeMessages([]byte(` {"jsonrpc":"2.0","id":1,"result":{}}`))
	if err != nil || len(single) != 1 || !single[0].IsResponse() {
		t.Fatalf("single: %v, %v", single, err)
	}
	b := `
	[ {"jsonrpc":"2.0","id":1,"result":{"tools":[]}},
	  {"jsonrpc":"2.0","method":"notifications/tools/list_changed"},
	  {"jsonrpc":"2.0","id":"s1","method":"roots/list"},
	  {"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}} ]`
	msgs, err := DecodeMessages([]byte(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 4 || !msgs[0].IsResponse() || !msgs[1].IsNotification() || !msgs[2].IsRequest() || msgs[3].Error == nil {
		t.Errorf("batch decoded as %+v", msgs)
	}
	for _, bad := range []string{
		`[]`,
		`[1]`,
		`[{"jsonrpc":"2.0","id":1,"result":{}}, {"jsonrpc":"1.0","id":2,"result":{}}]`,
		`[{"jsonrpc":"2.0","id":1,"result":{}}`,
		`[[{"jsonrpc":"2.0","id":1,"result":{}}]]`,
		``,
		`   `,
	} {
		if got, err := DecodeMessages([]byte(bad)); err == nil {
			t.Errorf("DecodeMessages(%q) = %v, want an error", bad, got)
		}
	}
}

// stdMessage is Message as plain encoding/json would write it, the reference
// for AppendJSON.
type stdMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      any             `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

func TestAppendJSON(t *testing.T) {
	pretty := "{\n  \"name\": \"echo\",\r\n  \"arguments\": {\n\t\"text\": \"two\\nlines \\u2028 <b>&</b>\",\n    \"n\": [1, 2.50, -0]\n  }\n}"
	cases := []struct {
		name string
		m    Message
		ref  stdMessage
	}{
		{"request", Message{ID: Int64ID(1), Method: "tools/list"},
			stdMessage{ID: 1, Method: "tools/list"}},
		{"pretty params", Message{ID: StringID("x\ny"), Method: "tools/call", Params: json.RawMessage(pretty)},
			stdMessage{ID: "x\ny", Method: "tools/call", Params: json.RawMessage(pretty)}},
		{"notification", Message{Method: "notifications/message", Params: json.RawMessage(`{"level":"info","data":"a\u0000b"}`)},
			stdMessage{Method: "notifications/message", Params: json.RawMessage(`{"level":"info","data":"a\u0000b"}`)}},
		{"pretty result", Message{ID: Int64ID(-7), Result: json.RawMessage("{\n\"content\": []\n}")},
			stdMessage{ID: -7, Result: json.RawMessage(`{"content":[]}`)}},
		{"pretty error data", Message{ID: Int64ID(2), Error: &Error{Code: -32602, Message: "bad\nparams\t\"x\"", Data: json.RawMessage("{\r\n\"supported\": [\"2026-07-28\"]\r\n}")}},
			stdMessage{ID: 2, Error: &Error{Code: -32602, Message: "bad\nparams\t\"x\"", Data: json.RawMessage(`{"supported":["2026-07-28"]}`)}}},
		{"method with control characters", Message{ID: Int64ID(3), Method: "a\x01b\u2029c\xffd"},
			stdMessage{ID: 3, Method: "a\x01b\u2029c\xffd"}},
		{"empty result", Message{ID: Int64ID(4)},
			stdMessage{ID: 4, Result: json.RawMessage(`{}`)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := tc.m.AppendJSON([]byte("prefix:"))
			if !bytes.HasPrefix(out, []byte("prefix:")) {
				t.Fatal("AppendJSON did not append")
			}
			out = out[len("prefix:"):]
			if !json.Valid(out) {
				t.Fatalf("not valid JSON: %q", out)
			}
			if bytes.ContainsAny(out, "\n\r") {
				t.Fatalf("contains a raw line break: %q", out)
			}
			tc.ref.JSONRPC = "2.0"
			ref, err := json.Marshal(tc.ref)
			if err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(t, out, ref) {
				t.Errorf("AppendJSON and json.Marshal disagree:\n got %s\nwant %s", out, ref)
			}
			viaStd, err := json.Marshal(&tc.m)
			if err != nil || !jsonEqual(t, viaStd, out) {
				t.Errorf("json.Marshal(&m) = %s, %v", viaStd, err)
			}
			if _, err := DecodeMessage(out); err != nil {
				t.Errorf("output does not decode: %v", err)
			}
		})
	}
}

// jsonStrings is a corpus of strings that exercise every branch of
// AppendJSONString.
var jsonStrings = []string{
	"", "plain ascii", "quote \" and backslash \\ and slash /",
	"\n\r\t\b\f", "\x00\x01\x02\x1f\x7f", "tab\there", "line1\nline2\r\nline3",
	"\u2028\u2029 separators", "<script>&amp;</script>", "é ü ß 中文 ☕ 🚀 👩‍👩‍👧",
	"\xff", "\xfe\xff", "a\xc3", "\xc3\x28", "\xe2\x28\xa1", "\xed\xa0\x80 surrogate", "\xf4\x90\x80\x80 too big",
	"\xef\xbf\xbd real replacement char", "\xc0\xaf overlong", "mixed \xff ok é \x00 \u2028 end",
	strings.Repeat("long ascii ", 100), strings.Repeat("\x00\xff\u2028é", 50),
}

func TestAppendJSONString(t *testing.T) {
	for _, s := range jsonStrings {
		got := AppendJSONString(nil, s)
		if !json.Valid(got) {
			t.Errorf("AppendJSONString(%q) = %q, not valid JSON", s, got)
			continue
		}
		if bytes.ContainsAny(got, "\n\r") {
			t.Errorf("AppendJSONString(%q) contains a raw line break", s)
		}
		var fromUs, fromStd string
		if err := json.Unmarshal(got, &fromUs); err != nil {
			t.Errorf("decode %q: %v", got, err)
		}
		std, _ := json.Marshal(s)
		if err := json.Unmarshal(std, &fromStd); err != nil {
			t.Fatal(err)
		}
		if fromUs != fromStd {
			t.Errorf("AppendJSONString(%q) decodes to %q; encoding/json's to %q", s, fromUs, fromStd)
		}
		if want := string([]rune(s)); fromUs != want {
			t.Errorf("AppendJSONString(%q) decodes to %q, want %q", s, fromUs, want)
		}
		if strings.ContainsRune(s, '\u2028') && bytes.Contains(got, []byte("\u2028")) {
			t.Errorf("AppendJSONString(%q) left U+2028 raw", s)
		}
	}
	if got := string(AppendJSONString([]byte("x="), "y")); got != `x="y"` {
		t.Errorf("does not append: %s", got)
	}
	// Compact forms: only what JSON requires is escaped.
	for in, want := range map[string]string{
		"\n": `"\n"`, "\x01": `"\u0001"`, "\xff": `"\ufffd"`, "\u2029": `"\u2029"`, "é": `"é"`, "<&>": `"<&>"`,
	} {
		if got := string(AppendJSONString(nil, in)); got != want {
			t.Errorf("AppendJSONString(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestErrorType(t *testing.T) {
	e := &Error{Code: CodeMethodNotFound, Message: "nope", Data: json.RawMessage(`{"m":"x"}`)}
	if !strings.Contains(e.Error(), "-32601") || !strings.Contains(e.Error(), `{"m":"x"}`) {
		t.Errorf("Error() = %q", e.Error())
	}
	big := &Error{Code: 1, Message: "m", Data: json.RawMessage(`"` + strings.Repeat("x", 600) + `"`)}
	if strings.Contains(big.Error(), "xxxx") {
		t.Error("Error() includes large data")
	}
	var wrapped error = errors.Join(errors.New("ctx"), e)
	if !errors.Is(wrapped, &Error{Code: CodeMethodNotFound}) || errors.Is(wrapped, &Error{Code: CodeInvalidParams}) {
		t.Error("errors.Is by code")
	}
	var got *Error
	if !errors.As(wrapped, &got) || got != e {
		t.Error("errors.As")
	}
}

func TestCodes(t *testing.T) {
	want := map[int64]int64{
		CodeParseError: -32700, CodeInvalidRequest: -32600, CodeMethodNotFound: -32601, CodeInvalidParams: -32602,
		CodeInternalError: -32603, CodeResourceNotFound: -32002, CodeURLElicitationRequired: -32042,
		CodeHeaderMismatch: -32020, CodeMissingRequiredClientCapability: -32021, CodeUnsupportedProtocolVersion: -32022,
		CodeUserRejected: -1,
	}
	for got, w := range want {
		if got != w {
			t.Errorf("code %d, want %d", got, w)
		}
	}
	if len(want) != 11 {
		t.Error("duplicate code values")
	}
}

// TestMessageRoundTripEqual checks the invariant the fuzzer explores, on
// hand-picked messages: what decodes re-encodes to something that decodes
// equal.
func TestMessageRoundTripEqual(t *testing.T) {
	for _, wire := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"m\",\"params\":{\n\"k\": [1,\n2]\n}}",
		`{"jsonrpc":"2.0","method":"n","params":null}`,
		`{"jsonrpc":"2.0","id":7,"result":null}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"p","data":[1]}}`,
		`{"jsonrpc":"2.0","id":1e2,"result":{"resultType":"complete"}}`,
	} {
		requireRoundTrip(t, []byte(wire))
	}
}

// requireRoundTrip asserts the decode/encode/decode invariant for wire, if
// it decodes at all.
func requireRoundTrip(t *testing.T, wire []byte) {
	t.Helper()
	m, err := DecodeMessage(wire)
	if err != nil {
		return
	}
	out := m.AppendJSON(nil)
	if !json.Valid(out) || bytes.ContainsAny(out, "\r\n") {
		t.Fatalf("%q re-encoded to invalid or multi-line %q", wire, out)
	}
	m2, err := DecodeMessage(out)
	if err != nil {
		t.Fatalf("%q re-encoded to %q, which does not decode: %v", wire, out, err)
	}
	if !messagesEqual(t, m, m2) {
		t.Fatalf("%q re-encoded to %q, which decodes differently:\n%+v\n%+v", wire, out, m, m2)
	}
}

func messagesEqual(t *testing.T, a, b *Message) bool {
	t.Helper()
	if a.ID != b.ID || a.Method != b.Method || (a.Error == nil) != (b.Error == nil) {
		return false
	}
	if !rawEqual(a.Params, b.Params) || !rawEqual(a.Result, b.Result) {
		return false
	}
	if a.Error != nil {
		return a.Error.Code == b.Error.Code && a.Error.Message == b.Error.Message && rawEqual(a.Error.Data, b.Error.Data)
	}
	return true
}

// rawEqual compares raw JSON as compacted bytes: AppendJSON removes white
// space but must not reorder or rewrite anything else.
func rawEqual(a, b json.RawMessage) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	var x, y bytes.Buffer
	if json.Compact(&x, a) != nil || json.Compact(&y, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(x.Bytes(), y.Bytes())
}

func TestIDInMessages(t *testing.T) {
	for _, tc := range []struct {
		wire string
		id   ID
	}{
		{`{"jsonrpc":"2.0","id":"7","result":{}}`, StringID("7")},
		{`{"jsonrpc":"2.0","id":7,"result":{}}`, Int64ID(7)},
		{`{"jsonrpc":"2.0","id":7.0,"result":{}}`, Int64ID(7)},
		{`{"jsonrpc":"2.0","id":9223372036854775807,"result":{}}`, Int64ID(math.MaxInt64)},
	} {
		m, err := DecodeMessage([]byte(tc.wire))
		if err != nil {
			t.Fatalf("%s: %v", tc.wire, err)
		}
		if m.ID != tc.id {
			t.Errorf("%s: id %v, want %v", tc.wire, m.ID, tc.id)
		}
		if !strings.Contains(string(m.AppendJSON(nil)), `"id":`+string(tc.id.AppendJSON(nil))) {
			t.Errorf("%s re-encoded without its id", tc.wire)
		}
	}
	if _, err := DecodeMessage([]byte(`{"jsonrpc":"2.0","id":9223372036854775808,"result":{}}`)); err == nil {
		t.Error("accepted an id beyond int64")
	}
}
