package mcpgrpc

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// structCases are Structs whose JSON depends on every rule the encoder
// copies from encoding/json: key order, escapes (HTML, control characters,
// U+2028, invalid UTF-8), the two number forms and their boundaries, null,
// nesting.
func structCases(t testing.TB) []*structpb.Struct {
	t.Helper()
	num := func(f float64) *structpb.Value { return structpb.NewNumberValue(f) }
	list := func(vs ...*structpb.Value) *structpb.Value {
		return structpb.NewListValue(&structpb.ListValue{Values: vs})
	}
	obj := func(m map[string]*structpb.Value) *structpb.Value {
		return structpb.NewStructValue(&structpb.Struct{Fields: m})
	}
	return []*structpb.Struct{
		{},
		{Fields: map[string]*structpb.Value{"z": num(1), "a": num(2), "m": num(3), "A": num(4), "é": num(5), "": num(6)}},
		{Fields: map[string]*structpb.Value{
			"s":    structpb.NewStringValue("<a href=\"x\">&amp;</a>\\ \b\f\n\r\t\x00\x1f\x7f \u2028\u2029 é 日本 \xff\xfe ok"),
			"<&>":  structpb.NewBoolValue(true),
			"f":    structpb.NewBoolValue(false),
			"null": structpb.NewNullValue(),
			"none": {},
		}},
		{Fields: map[string]*structpb.Value{"n": list(
			num(0), num(math.Copysign(0, -1)), num(1), num(-1), num(0.1), num(1e20), num(1e21), num(123456789012345678901234),
			num(1e-6), num(9.99e-7), num(1e-7), num(-2.5e-10), num(math.MaxFloat64), num(math.SmallestNonzeroFloat64),
			num(1<<53), num(1<<53+1), num(3.141592653589793),
		)}},
		{Fields: map[string]*structpb.Value{
			"type": structpb.NewStringValue("object"),
			"properties": obj(map[string]*structpb.Value{
				"b": obj(map[string]*structpb.Value{"type": structpb.NewStringValue("string"), "enum": list(structpb.NewStringValue("x"), structpb.NewStringValue("y"))}),
				"a": obj(map[string]*structpb.Value{"items": obj(map[string]*structpb.Value{"d": obj(nil), "c": list(list(), obj(map[string]*structpb.Value{"z": num(1), "y": num(2)}))})}),
			}),
			"required": list(structpb.NewStringValue("b"), structpb.NewStringValue("a")),
		}},
	}
}

// TestStructEncoderMatchesEncodingJSON: the encoder writes, byte for byte,
// what encoding/json writes for the Struct's AsMap, the conversion it
// replaces, whether one encoder serves every Struct or each has its own.
func TestStructEncoderMatchesEncodingJSON(t *testing.T) {
	var shared structEncoder
	for i, s := range structCases(t) {
		want, err := json.Marshal(s.AsMap())
		if err != nil {
			t.Fatal(err)
		}
		got, err := shared.raw(s)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("case %d, shared encoder:\n got %s, %v\nwant %s", i, got, err, want)
		}
		got, err = structToRaw(s)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("case %d, structToRaw:\n got %s, %v\nwant %s", i, got, err, want)
		}
	}
	if got, err := structToRaw(nil); got != nil || err != nil {
		t.Errorf("structToRaw(nil) = %s, %v; want nil, nil", got, err)
	}
}

// TestStructEncoderRefusesNonFinite: NaN and the infinities have no JSON
// form; the conversion fails, as json.Marshal did, and the encoder is
// usable afterwards.
func TestStructEncoderRefusesNonFinite(t *testing.T) {
	var e structEncoder
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		s := &structpb.Struct{Fields: map[string]*structpb.Value{
			"a": structpb.NewNumberValue(1),
			"b": structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{structpb.NewNumberValue(f)}}),
		}}
		if got, err := e.raw(s); err == nil {
			t.Errorf("%v: got %s, want an error", f, got)
		}
	}
	ok := &structpb.Struct{Fields: map[string]*structpb.Value{"k": structpb.NewStringValue("v")}}
	if got, err := e.raw(ok); err != nil || string(got) != `{"k":"v"}` {
		t.Errorf("after the errors: %s, %v", got, err)
	}
}

// FuzzStructEncoder: for any Struct a peer can send, the encoder agrees
// with encoding/json on AsMap, bytes and errors alike.
func FuzzStructEncoder(f *testing.F) {
	for _, s := range structCases(f) {
		// proto3 refuses invalid UTF-8 in a string both ways, so the case
		// that has some cannot be a seed (nor come from a peer).
		if b, err := proto.Marshal(s); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s structpb.Struct
		if proto.Unmarshal(data, &s) != nil {
			return
		}
		want, werr := json.Marshal(s.AsMap())
		var e structEncoder
		got, gerr := e.raw(&s)
		if (werr != nil) != (gerr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("encoder %s, %v; encoding/json %s, %v", got, gerr, want, werr)
		}
	})
}

// TestRawToStructMatchesEncodingJSON: a call's arguments reach the wire
// as the Struct that encoding/json's reading of them gives, and anything
// but an object is refused by name.
func TestRawToStructMatchesEncodingJSON(t *testing.T) {
	for _, raw := range []string{
		`{}`,
		`{"path":"C:\\Users\\Zoë\\notes \"draft\".md","lines":[1,2.5,-3e2],"opts":{"recursive":true,"depth":null,"tags":[]}}`,
		`{"text":"Grüße\naus Köln\t\u2014 \ud83d\ude00","a":1,"a":2}`,
	} {
		var m map[string]any
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatal(err)
		}
		want, err := structpb.NewStruct(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := rawToStruct(json.RawMessage(raw))
		if err != nil || !proto.Equal(got, want) {
			t.Errorf("rawToStruct(%s) = %v, %v; want %v", raw, got, err, want)
		}
	}
	for raw, word := range map[string]string{`[1]`: "not an array", `"x"`: "not a string", `1`: "not a number", `true`: "not a boolean", `{"a":}`: "invalid character '}'"} {
		if _, err := rawToStruct(json.RawMessage(raw)); err == nil || !strings.Contains(err.Error(), word) {
			t.Errorf("rawToStruct(%s): %v, want an error with %q", raw, err, word)
		}
	}
	for _, raw := range []string{``, `null`, " null\n"} {
		if s, err := rawToStruct(json.RawMessage(raw)); s != nil || err != nil {
			t.Errorf("rawToStruct(%q) = %v, %v; want no arguments", raw, s, err)
		}
	}
}
