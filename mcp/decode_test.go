package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/tako-mcp/tako/internal/jsonscan"
)

// wireMessage is the union of every field a JSON-RPC message may carry: the
// struct the reference decoder unmarshals into.
type wireMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      *ID             `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// decodeMessageStd is DecodeMessage as it was written with encoding/json:
// the reference that the hand-written decoder must match on every input.
func decodeMessageStd(data []byte) (*Message, error) {
	var w wireMessage
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("mcp: decode message: %w", err)
	}
	if w.JSONRPC != "2.0" {
		return nil, fmt.Errorf("%w: jsonrpc member is %q", ErrNotJSONRPC, w.JSONRPC)
	}
	m := &Message{Method: w.Method, Params: w.Params, Result: w.Result, Error: w.Error}
	if w.ID != nil {
		m.ID = *w.ID
	}
	if string(m.Result) == "null" && (m.Error != nil || m.Method != "") {
		m.Result = nil
	}
	if m.Method != "" {
		if m.Result != nil || m.Error != nil {
			return nil, fmt.Errorf("%w: %s message carries a result or an error", ErrNotJSONRPC, m.Method)
		}
	} else {
		m.Params = nil
		if m.Error == nil && m.Result == nil {
			return nil, fmt.Errorf("%w: response without result or error", ErrNotJSONRPC)
		}
		if m.Error != nil && m.Result != nil {
			return nil, fmt.Errorf("%w: response with both result and error", ErrNotJSONRPC)
		}
		if m.Error == nil && !m.ID.IsValid() {
			return nil, fmt.Errorf("%w: result without id", ErrNotJSONRPC)
		}
	}
	return m, nil
}

// requireSameDecode decodes data with both decoders and fails unless they
// agree: both refuse (and agree on whether the input is JSON that is not
// JSON-RPC), or both accept with equal messages, raw members byte for byte.
// It reports whether they accepted data.
func requireSameDecode(t *testing.T, data []byte) bool {
	t.Helper()
	want, wantErr := decodeMessageStd(data)
	got, gotErr := DecodeMessage(data)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("DecodeMessage(%q):\n got %+v, %v\nwant %+v, %v", data, got, gotErr, want, wantErr)
	}
	if wantErr != nil {
		if errors.Is(gotErr, ErrNotJSONRPC) != errors.Is(wantErr, ErrNotJSONRPC) {
			t.Fatalf("DecodeMessage(%q): error %q, want one like %q", data, gotErr, wantErr)
		}
		if errors.Is(wantErr, ErrNotJSONRPC) && gotErr.Error() != wantErr.Error() {
			t.Fatalf("DecodeMessage(%q): error %q, want %q", data, gotErr, wantErr)
		}
		return false
	}
	if got.ID != want.ID || got.Method != want.Method {
		t.Fatalf("DecodeMessage(%q): id %v method %q, want id %v method %q", data, got.ID, got.Method, want.ID, want.Method)
	}
	for _, f := range []struct {
		name      string
		got, want json.RawMessage
	}{{"params", got.Params, want.Params}, {"result", got.Result, want.Result}} {
		if (f.got == nil) != (f.want == nil) || !bytes.Equal(f.got, f.want) {
			t.Fatalf("DecodeMessage(%q): %s %q, want %q", data, f.name, f.got, f.want)
		}
	}
	if (got.Error == nil) != (want.Error == nil) {
		t.Fatalf("DecodeMessage(%q): error member %+v, want %+v", data, got.Error, want.Error)
	}
	if e, w := got.Error, want.Error; e != nil {
		if e.Code != w.Code || e.Message != w.Message || (e.Data == nil) != (w.Data == nil) || !bytes.Equal(e.Data, w.Data) {
			t.Fatalf("DecodeMessage(%q): error member %d %q %q, want %d %q %q", data, e.Code, e.Message, e.Data, w.Code, w.Message, w.Data)
		}
	}
	return true
}

// trickyMessages are inputs on which a hand-written decoder is likely to
// part ways with encoding/json: the seeds of FuzzDecodeMatchesStd.
var trickyMessages = []string{
	// The shapes.
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}`,
	`{"jsonrpc":"2.0","id":"a","result":{"content":[{"type":"text","text":"hi"}]}}`,
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse","data":{"x":[1,2]}}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0.5}}`,
	`{"jsonrpc":"2.0","id":7,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{}}`,
	`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
	`{"jsonrpc":"2.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":null}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":"x","extra":[{}]}}`,
	// White space everywhere it may go, and where it may not.
	"{\"jsonrpc\":\"2.0\",\"id\":2.0,\"method\":\"m\",\"params\":{\n\"a\" : [ 1 ,\r\n 2 ]\n}}",
	" \r\n\t{ \"jsonrpc\" : \"2.0\" , \"id\" : 1 , \"result\" : { } }\r\n ",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\v",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\x00",
	"\ufeff{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[1,\f2]}",
	// Ids.
	`{"jsonrpc":"2.0","id":9223372036854775807,"result":null}`,
	`{"jsonrpc":"2.0","id":-9223372036854775808,"result":{}}`,
	`{"jsonrpc":"2.0","id":9223372036854775808,"result":{}}`,
	`{"jsonrpc":"2.0","id":-9223372036854775809,"result":{}}`,
	`{"jsonrpc":"2.0","id":999999999999999999,"result":{}}`,
	`{"jsonrpc":"2.0","id":-999999999999999999,"result":{}}`,
	`{"jsonrpc":"2.0","id":1000000000000000000,"result":{}}`,
	`{"jsonrpc":"2.0","id":0,"result":{}}`,
	`{"jsonrpc":"2.0","id":-0,"result":{}}`,
	`{"jsonrpc":"2.0","id":-0.0e5,"result":{}}`,
	`{"jsonrpc":"2.0","id":00,"result":{}}`,
	`{"jsonrpc":"2.0","id":01,"result":{}}`,
	`{"jsonrpc":"2.0","id":+1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1e2,"result":{},"error":null}`,
	`{"jsonrpc":"2.0","id":1E+2,"result":{}}`,
	`{"jsonrpc":"2.0","id":100e-2,"result":{}}`,
	`{"jsonrpc":"2.0","id":1.5,"result":{}}`,
	`{"jsonrpc":"2.0","id":1.,"result":{}}`,
	`{"jsonrpc":"2.0","id":.5,"result":{}}`,
	`{"jsonrpc":"2.0","id":1e,"result":{}}`,
	`{"jsonrpc":"2.0","id":1e+,"result":{}}`,
	`{"jsonrpc":"2.0","id":-,"result":{}}`,
	`{"jsonrpc":"2.0","id":-a,"result":{}}`,
	`{"jsonrpc":"2.0","id":1e999999999999,"result":{}}`,
	`{"jsonrpc":"2.0","id":9223372036854775807.000,"result":{}}`,
	`{"jsonrpc":"2.0","id":9007199254740993.0,"result":{}}`,
	`{"jsonrpc":"2.0","id":-9223372036854775809.0,"result":{}}`,
	`{"jsonrpc":"2.0","id":"","result":{}}`,
	`{"jsonrpc":"2.0","id":"caf\u00e9 \u2028\ud800","result":{}}`,
	`{"jsonrpc":"2.0","id":"\ud83d\ude00\ud83d","result":{}}`,
	`{"jsonrpc":"2.0","id":"\ud83d\ud83d\ude00","result":{}}`,
	`{"jsonrpc":"2.0","id":"\ude00\ud83d","result":{}}`,
	`{"jsonrpc":"2.0","id":"\u12","result":{}}`,
	`{"jsonrpc":"2.0","id":"\u12g4","result":{}}`,
	`{"jsonrpc":"2.0","id":"\x","result":{}}`,
	`{"jsonrpc":"2.0","id":"\'","result":{}}`,
	`{"jsonrpc":"2.0","id":"\/\b\f\n\r\t\"\\","result":{}}`,
	"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\xfe\xed\xa0\x80\xe2\x82\",\"result\":{}}",
	"{\"jsonrpc\":\"2.0\",\"id\":\"tab\there\",\"result\":{}}",
	"{\"jsonrpc\":\"2.0\",\"id\":\"del\x7f\",\"result\":{}}",
	`{"jsonrpc":"2.0","id":true,"method":"x"}`,
	`{"jsonrpc":"2.0","id":false,"method":"x"}`,
	`{"jsonrpc":"2.0","id":{},"method":"x"}`,
	`{"jsonrpc":"2.0","id":[1],"method":"x"}`,
	`{"jsonrpc":"2.0","id":[1,],"method":"x"}`,
	`{"jsonrpc":"2.0","id":nul,"method":"x"}`,
	`{"jsonrpc":"2.0","id":null,"result":{}}`,
	`{"jsonrpc":"2.0","id":null,"method":"notifications/x"}`,
	// Repeated members: the last one wins, but null leaves strings alone.
	`{"jsonrpc":"2.0","id":1,"id":"b","result":{}}`,
	`{"jsonrpc":"2.0","id":1,"id":null,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"id":null,"method":"m"}`,
	`{"jsonrpc":"2.0","id":1,"id":true,"id":2,"result":{}}`,
	`{"jsonrpc":"2.0","jsonrpc":null,"id":1,"result":{}}`,
	`{"jsonrpc":"1.0","jsonrpc":"2.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","jsonrpc":"1.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","jsonrpc":2,"id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"method":"a","method":null}`,
	`{"jsonrpc":"2.0","id":1,"method":"a","method":""}`,
	`{"jsonrpc":"2.0","id":1,"method":"a","method":"","result":{}}`,
	`{"jsonrpc":"2.0","id":1,"params":{},"params":null,"method":"a"}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":1},"result":null}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":1},"result":[2]}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"a","data":5},"error":{"code":2}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"a","data":5},"error":null,"error":{"code":3}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"a"},"error":{"code":null,"message":null,"data":null}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"code":2,"message":"a","message":"b"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"a"},"error":5}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"a"},"error":null,"result":1}`,
	// Names: unescaped, then folded as encoding/json folds them.
	`{"JSONRPC":"2.0","ID":1,"Method":"x"}`,
	`{"JsonRpc":"2.0","iD":1,"RESULT":{}}`,
	`{"jsonrpc":"2.0","Id":1,"ERROR":{"CODE":5,"Message":"m","DATA":1}}`,
	`{"json\u0072pc":"2.0","\u0069d":1,"\u006dethod":"x","p\u0061rams":[]}`,
	`{"jsonrpc":"2.0","id":1,"\u0052esult":{}}`,
	"{\"j\u017fonrpc\":\"2.0\",\"id\":1,\"re\u017fult\":{}}",
	`{"j\u017fonrpc":"2.0","id":1,"result":{}}`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1,\"me\u017f\u017fage\":\"m\"}}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1,\"me\u017fsage\":\"m\"}}",
	"{\"jsonrpc\":\"2.0\",\"\u0130d\":1,\"result\":{}}",
	"{\"jsonrpc\":\"2.0\",\"\u212ad\":1,\"result\":{}}",
	"{\"jsonrpc\":\"2.0\",\"id\xff\":1,\"result\":{}}",
	`{"jsonrpc":"2.0","id ":1,"result":{}}`,
	`{"jsonrpc":"2.0","i":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"methods":"x","result":{}}`,
	`{"jsonrpc":"2.0","id":1,"":{},"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"result":{},"x-trace":{"a":[1,{"b":null}]}}`,
	// The version.
	`{"jsonrpc":"2\u002e0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0 ","id":1,"result":{}}`,
	`{"jsonrpc":"2.00","id":1,"result":{}}`,
	`{"jsonrpc":2.0,"id":1,"result":{}}`,
	`{"jsonrpc":{},"id":1,"result":{}}`,
	`{"jsonrpc":null,"id":1,"result":{}}`,
	`{"jsonrpc":"\ud800","id":1,"result":{}}`,
	"{\"jsonrpc\":\"\xff\",\"id\":1,\"result\":{}}",
	// Methods.
	`{"jsonrpc":"2.0","method":"\u0000"}`,
	`{"jsonrpc":"2.0","method":""}`,
	`{"jsonrpc":"2.0","method":7}`,
	`{"jsonrpc":"2.0","method":["x"]}`,
	`{"jsonrpc":"2.0","method":"notifications\/progress","params":{}}`,
	"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progre\xffss\",\"params\":{}}",
	`{"jsonrpc":"2.0","method":"ping","result":null}`,
	`{"jsonrpc":"2.0","method":"ping","error":null}`,
	`{"jsonrpc":"2.0","method":"ping","result":{}}`,
	`{"jsonrpc":"2.0","method":"ping","error":{}}`,
	// Responses.
	`{"jsonrpc":"2.0","id":1}`,
	`{"jsonrpc":"2.0","id":1,"result":null,"error":null}`,
	`{"jsonrpc":"2.0","id":1,"result":null,"error":{"code":1,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`,
	`{"jsonrpc":"2.0","result":{}}`,
	`{"jsonrpc":"2.0","error":{"code":1,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"result":"x","params":{"ignored":true}}`,
	`{"jsonrpc":"2.0","id":1,"result":0}`,
	`{"jsonrpc":"2.0","id":1,"result":false}`,
	`{"jsonrpc":"2.0","id":1,"result":-1.5e-3}`,
	// Error objects.
	`{"jsonrpc":"2.0","id":1,"error":"boom"}`,
	`{"jsonrpc":"2.0","id":1,"error":[]}`,
	`{"jsonrpc":"2.0","id":1,"error":true}`,
	`{"jsonrpc":"2.0","id":1,"error":7}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1.0,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1e2,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-0,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":9223372036854775807,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-9223372036854775808,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":9223372036854775808,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":"1","message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":true,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":[],"message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":1}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":{}}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"caf\u00e9\n\ud800x"}}`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1,\"message\":\"bad \xc3\x28 utf8 \xf0\x9f\x98\"}}",
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":{"x":[1,2,{"y":"z"}]}}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":{"x":}}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m",}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1 "message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}`,
	`{"jsonrpc":"2.0","id":1,"error":{`,
	// Invalid JSON in places the decoder only skips.
	`{"jsonrpc":"2.0","id":1,"result":{"a":[1,2,]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":01}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":1.}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":-}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":1e}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":tru}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":truee}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":nulll}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":NaN}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":"\u00zz"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":"\q"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a" 1}}`,
	`{"jsonrpc":"2.0","id":1,"result":{a:1}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":1,}}`,
	`{"jsonrpc":"2.0","id":1,"result":{,}}`,
	`{"jsonrpc":"2.0","id":1,"result":[,1]}`,
	`{"jsonrpc":"2.0","id":1,"result":[1 2]}`,
	`{"jsonrpc":"2.0","id":1,"result":[1}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":1]}`,
	`{"jsonrpc":"2.0","id":1,"result":{}}}`,
	`{"jsonrpc":"2.0","id":1,"result":{}},`,
	`{"jsonrpc":"2.0","id":1,"result":{}} x`,
	`{"jsonrpc":"2.0","id":1,"result":{}}{"jsonrpc":"2.0","id":2,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"result":{},}`,
	`{"jsonrpc":"2.0","id":1,"result":{}`,
	`{"jsonrpc":"2.0","id":1,"result":`,
	`{"jsonrpc":"2.0","id":1,"result"`,
	`{"jsonrpc":"2.0","id":1,"result`,
	`{"jsonrpc":"2.0","id":1,`,
	`{"jsonrpc":"2.0","id":1 "result":{}}`,
	`{"jsonrpc":"2.0","id":1,,"result":{}}`,
	`{'jsonrpc':'2.0'}`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"raw\nnewline\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"\x7f\xff\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"x\":\"\x1f\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"x\":\"\\u",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"x\":\"\\",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"x\":\"",
	// Not an object.
	``, ` `, `null`, ` null `, `nul`, `true`, `[]`, `[{"jsonrpc":"2.0","id":1,"result":{}}]`,
	`{}`, `{ }`, `"x"`, `1`, `-`, `{`, `}`, `{"`, `{"a"`, `{"a":`, `{"a":1`,
	`[1,]`, `[[]]x`, `null x`,
}

// TestDecodeMatchesStd runs the tricky inputs and deep nesting through both
// decoders.
func TestDecodeMatchesStd(t *testing.T) {
	accepted := 0
	for _, s := range trickyMessages {
		if requireSameDecode(t, []byte(s)) {
			accepted++
		}
	}
	t.Logf("both accepted %d of %d tricky messages", accepted, len(trickyMessages))
	// encoding/json refuses more than 10000 nested arrays and objects,
	// counting the top-level one, wherever they are.
	for _, n := range []int{9998, 9999, 10000, 10001, 20000} {
		for _, tmpl := range []string{
			`{"jsonrpc":"2.0","id":1,"result":%s}`,
			`{"jsonrpc":"2.0","id":1,"x":%s,"result":{}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":%s}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","x":%s}}`,
			`{"jsonrpc":"2.0","id":%s,"result":{}}`,
			`{"jsonrpc":"2.0","method":"m","params":%s}`,
			`%s`,
		} {
			for _, open := range []string{"[", `{"a":`, `[{"a":`} {
				var b strings.Builder
				for range n {
					b.WriteString(open)
				}
				inner := b.String() + strings.Repeat("]", strings.Count(b.String(), "[")) + strings.Repeat("}", strings.Count(b.String(), "{"))
				if open == `[{"a":` {
					inner = b.String() + strings.Repeat("}]", n)
				}
				requireSameDecode(t, []byte(fmt.Sprintf(tmpl, inner)))
			}
		}
	}
}

// TestDecodeNestingLimit pins the exact limit, so that a change in the
// reference (or in the decoder) shows up here and not as a flaky fuzz
// finding.
func TestDecodeNestingLimit(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	// The message object is one level, so its result may hold 9999.
	if _, err := DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"result":` + nest(jsonscan.MaxDepth-1) + `}`)); err != nil {
		t.Errorf("%d levels: %v", jsonscan.MaxDepth, err)
	}
	if _, err := DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"result":` + nest(jsonscan.MaxDepth) + `}`)); err == nil {
		t.Errorf("%d levels accepted", jsonscan.MaxDepth+1)
	}
	// A million levels is refused without exhausting the stack.
	if _, err := DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"result":` + nest(1_000_000) + `}`)); err == nil {
		t.Error("a million levels accepted")
	}
}

// TestDecodeAliasesInput checks what DecodeMessage's doc promises: Params,
// Result and Error.Data are sub-slices of the input, and appending to one
// cannot overwrite the bytes that follow it.
func TestDecodeAliasesInput(t *testing.T) {
	data := []byte(`{"jsonrpc":"2.0","id":1,"result":{"a":1},"x":0}`)
	m, err := DecodeMessage(data)
	if err != nil {
		t.Fatal(err)
	}
	if &m.Result[0] != &data[bytes.Index(data, []byte(`{"a"`))] {
		t.Error("Result does not alias the input")
	}
	_ = append(m.Result, "zzzz"...)
	if !bytes.HasSuffix(data, []byte(`,"x":0}`)) {
		t.Errorf("appending to Result overwrote the input: %s", data)
	}
	data = []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":[1]}}`)
	if m, err = DecodeMessage(data); err != nil {
		t.Fatal(err)
	}
	if &m.Error.Data[0] != &data[bytes.IndexByte(data, '[')] {
		t.Error("Error.Data does not alias the input")
	}
}

// TestDecodeMethodNames checks that the protocol's method names, which the
// decoder returns as constants, decode like any other string.
func TestDecodeMethodNames(t *testing.T) {
	for _, name := range []string{
		NotificationProgress, NotificationMessage, NotificationCancelled, NotificationToolsListChanged,
		NotificationPromptsListChanged, NotificationResourcesListChanged, NotificationResourceUpdated,
		NotificationElicitationComplete, NotificationSubscriptionsAck, NotificationTasksStatus, NotificationTasks,
		MethodPing, MethodRootsList, MethodSamplingCreateMessage, MethodElicitationCreate,
		MethodToolsCall, "notifications/progres", "notifications/progresss", "x",
	} {
		for _, wire := range []string{
			`{"jsonrpc":"2.0","method":"` + name + `","params":{}}`,
			`{"jsonrpc":"2.0","id":3,"method":"` + name + `"}`,
			`{"jsonrpc":"2.0","id":3,"method":"\u00` + fmt.Sprintf("%x", name[0]) + name[1:] + `"}`,
		} {
			requireSameDecode(t, []byte(wire))
			m, err := DecodeMessage([]byte(wire))
			if err != nil || m.Method != name {
				t.Errorf("DecodeMessage(%s) = %+v, %v", wire, m, err)
			}
		}
	}
}

// FuzzDecodeMatchesStd holds the hand-written decoder to encoding/json on
// arbitrary input: the same inputs are refused, and what is accepted
// decodes to the same message.
func FuzzDecodeMatchesStd(f *testing.F) {
	for _, s := range trickyMessages {
		f.Add([]byte(s))
	}
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":"a","result":{"content":[{"type":"text","text":"hi"}]}}`,
		`{"jsonrpc":"2.0","id":1e2,"result":{},"error":null}`,
		`{"jsonrpc":"2.0","id":"\u2028\ud800","method":"\u0000"}`,
		`{"jsonrpc":"2.0","id":-9223372036854775809.0,"result":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Add(typicalCallToolResponse)
	f.Fuzz(func(t *testing.T, data []byte) {
		requireSameDecode(t, data)
	})
}

// BenchmarkDecodeMessageStd is BenchmarkDecodeMessage for the reference
// decoder, so that the two can be compared in one run on one machine.
func BenchmarkDecodeMessageStd(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(typicalCallToolResponse)))
	for b.Loop() {
		m, err := decodeMessageStd(typicalCallToolResponse)
		if err != nil || m.Result == nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeNotification decodes a progress notification: its method
// name is one the decoder returns as a constant, so the *Message is the
// only allocation.
func BenchmarkDecodeNotification(b *testing.B) {
	data := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":42,"progress":0.5,"total":1,"message":"half way"}}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		m, err := DecodeMessage(data)
		if err != nil || m.Method != NotificationProgress {
			b.Fatal(m, err)
		}
	}
}

// TestMessageUnmarshalJSONOutlivesDecoderBuffer pins a bug: Message's
// UnmarshalJSON kept Params and Result as sub-slices of the bytes
// encoding/json passed it, which a json.Decoder reuses for the next value,
// so the first of two streamed messages had its params overwritten.
func TestMessageUnmarshalJSONOutlivesDecoderBuffer(t *testing.T) {
	stream := `{"jsonrpc":"2.0","id":1,"method":"a","params":{"first":111111}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"b","params":{"other":222222}}` + "\n"
	// One byte per read makes the decoder refill, and so shift its buffer,
	// while it reads the second message.
	dec := json.NewDecoder(iotest.OneByteReader(strings.NewReader(stream)))
	var first, second Message
	if err := dec.Decode(&first); err != nil {
		t.Fatal(err)
	}
	if err := dec.Decode(&second); err != nil {
		t.Fatal(err)
	}
	if string(first.Params) != `{"first":111111}` || string(second.Params) != `{"other":222222}` {
		t.Errorf("params %s and %s", first.Params, second.Params)
	}
}

// TestDecodeMatchesStdCombinations builds messages out of member snippets
// (right and wrong names, values of every type, repeats, odd white space)
// in a fixed pseudo-random sequence, a structured complement to the fuzzer,
// which rarely mutates its way to a well-formed envelope.
func TestDecodeMatchesStdCombinations(t *testing.T) {
	members := []string{
		`"jsonrpc":"2.0"`, `"jsonrpc":"2.0"`, `"jsonrpc":"1.0"`, `"jsonrpc":null`, `"jsonrpc":2`, `"JSONRPC":"2\u002e0"`,
		`"id":1`, `"id":"x"`, `"id":null`, `"id":1.0`, `"id":1.5`, `"id":true`, `"id":[]`, `"Id":-7`, `"id":"\ud800"`,
		`"method":"ping"`, `"method":"x"`, `"method":null`, `"method":""`, `"method":1`, `"METHOD":"notifications/progress"`,
		`"params":{}`, `"params":null`, `"params":[1,{"a":"b"}]`, `"params":"s"`, `"Params":{"x":{}}`,
		`"result":{}`, `"result":null`, `"result":[]`, `"result":0`, `"RESULT":{"a":[true,false,null]}`,
		`"error":{"code":1,"message":"m"}`, `"error":null`, `"error":{}`, `"error":{"data":[1]}`, `"error":{"code":null}`,
		`"error":{"message":"\u00e9","code":-32000,"data":null}`, `"error":{"Code":2,"x":{}}`, `"error":{"code":"1"}`, `"error":1`,
		`"x":{"id":1,"method":"y"}`, `"":0`, `"idx":1`,
	}
	spaces := []string{"", "", "", " ", "\n\t", "\r\n "}
	rng := rand.New(rand.NewPCG(1, 2))
	accepted := 0
	const runs = 200_000
	for range runs {
		var b strings.Builder
		b.WriteString(spaces[rng.IntN(len(spaces))] + "{")
		n := rng.IntN(6)
		if rng.IntN(4) > 0 {
			// Most messages start right, so that most get past the
			// version check to the members that follow.
			b.WriteString(`"jsonrpc":"2.0",`)
			n++
		}
		for k := range n {
			if k > 0 && !strings.HasSuffix(b.String(), ",") {
				b.WriteString("," + spaces[rng.IntN(len(spaces))])
			}
			b.WriteString(members[rng.IntN(len(members))])
		}
		b.WriteString("}" + spaces[rng.IntN(len(spaces))])
		if requireSameDecode(t, []byte(b.String())) {
			accepted++
		}
	}
	t.Logf("both accepted %d of %d", accepted, runs)
}
