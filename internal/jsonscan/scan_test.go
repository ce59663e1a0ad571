package jsonscan

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// whole reports whether data is one valid JSON value, by Value and Finish.
func whole(data []byte) error {
	end, _, err := Value(data, Space(data, 0), 0)
	if err == nil {
		err = Finish(data, end)
	}
	return err
}

// streamed scans data fed in pieces of n bytes (all at once if n is zero)
// with watch, and returns the events with their absolute offsets and the
// offset and event it stopped with. A space is fed at the end, as a stream
// would bring the next line, so that a top-level number ends.
func streamed(data []byte, n, watch int) (events []string, end int, last Event) {
	if n <= 0 {
		n = len(data) + 1
	}
	var s Scanner
	data = append(data[:len(data):len(data)], ' ')
	for base := 0; base < len(data); base += n {
		p := data[base:min(base+n, len(data))]
		for i := 0; i < len(p); {
			j, ev := s.Step(p, i, watch)
			switch ev {
			case Begin, End:
				events = append(events, fmt.Sprintf("%d:%d:%d:%v", ev, base+j, s.Depth(), s.Key()))
			case Done, Error:
				return events, base + j, ev
			}
			i = j
		}
	}
	return events, len(data), More
}

// hostile are inputs that a hand-written scanner is likely to get wrong.
var hostile = []string{
	// Strings.
	`""`, `"a"`, `"\"\\\/\b\f\n\r\t"`, `"\u0041\u00e9\u2028"`, `"\ud83d\ude00"`,
	`"\ud800"`, `"\udc00"`, `"\ud800\ud800"`, `"\ud83d\u0041"`, `"\ud83d"x`, "\"\xff\xfe\"", "\"\xed\xa0\x80\"",
	`"`, `"abc`, `"\`, `"\u`, `"\u12`, `"\u123`, `"\u12g4"`, `"\x"`, `"\'"`, `"\U0041"`,
	"\"a\nb\"", "\"\x00\"", "\"\x1f\"", "\"\x7f\"", `"a"b`, `"a" "b"`,
	// Numbers.
	`0`, `-0`, `1`, `-1`, `0.5`, `-0.0e+00`, `1E9`, `1e-9`, `123456789012345678901234567890`,
	`1e999999999999`, `-` + strings.Repeat("9", 400) + `.` + strings.Repeat("9", 400) + `e-` + strings.Repeat("9", 40),
	`01`, `00`, `+1`, `.5`, `1.`, `1.e5`, `1e`, `1e+`, `1e-`, `-`, `--1`, `-a`, `1ee5`, `0x10`, `NaN`, `Infinity`, `1_000`,
	// Literals.
	`true`, `false`, `null`, `tru`, `nul`, `fals`, `truee`, `nulll`, `True`, `nUll`, `t`, `n`,
	// Containers.
	`[]`, `{}`, `[1,2]`, `{"a":1}`, `{"a":[{"b":null}],"c":{}}`, ` [ 1 , { "a" : "b" } ] `,
	`[`, `{`, `[1`, `[1,`, `[1,]`, `[,1]`, `[1 2]`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{,}`, `{a:1}`, `{'a':1}`,
	`{"a" 1}`, `{"a":1 "b":2}`, `[1}`, `{"a":1]`, `]`, `}`, `[]]`, `{}}`, `[][]`, `{} x`, `1 2`,
	"[1,\f2]", "\v1", "\ufeff1", "[1]\x00",
	// Nothing.
	``, ` `, "\t\r\n",
}

func TestHostileMatchesEncodingJSON(t *testing.T) {
	for _, in := range hostile {
		checkAgainstStd(t, []byte(in))
	}
}

// checkAgainstStd holds the whole-buffer and streaming scans of data to
// encoding/json: the same inputs are valid, splitting the input changes
// nothing, and a valid string decodes to what encoding/json decodes.
func checkAgainstStd(t *testing.T, data []byte) {
	t.Helper()
	err := whole(data)
	if valid := json.Valid(data); (err == nil) != valid {
		t.Fatalf("%q: Value says %v, json.Valid says %v", data, err, valid)
	}
	wantEvents, wantEnd, wantLast := streamed(data, 0, 1)
	for _, n := range []int{1, 2, 3, 7} {
		events, end, last := streamed(data, n, 1)
		if fmt.Sprint(events) != fmt.Sprint(wantEvents) || end != wantEnd || last != wantLast {
			t.Fatalf("%q in pieces of %d: %v, %d, %d; whole: %v, %d, %d", data, n, events, end, last, wantEvents, wantEnd, wantLast)
		}
	}
	// The stream ends where the value does, and agrees on validity.
	if streamValid := wantLast == Done && Finish(data, min(wantEnd, len(data))) == nil; streamValid != (err == nil) {
		t.Fatalf("%q: streaming scan stopped with %d at %d; Value says %v", data, wantLast, wantEnd, err)
	}
	if len(data) > 0 && data[0] == '"' {
		var want string
		werr := json.Unmarshal(data, &want)
		end, f, err := Value(data, 0, 0)
		if err == nil && Finish(data, end) != nil {
			err = errors.New("trailing data")
		}
		if (err == nil) != (werr == nil) {
			t.Fatalf("Value(%q): %v; encoding/json: %v", data, err, werr)
		}
		if err == nil {
			if got := Unquote(data[:end], f); got != want {
				t.Fatalf("Unquote(%q) = %q, want %q", data, got, want)
			}
		}
	}
}

func TestErrorsInEncodingJSONWords(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`"\x"`, `invalid character 'x' in string escape code (offset 2)`},
		{`"\u12g4"`, `invalid character 'g' in \u hexadecimal character escape (offset 5)`},
		{"\"a\x01\"", `invalid character '\x01' in string literal (offset 2)`},
		{`-a`, `invalid character 'a' in numeric literal (offset 1)`},
		{`1.x`, `invalid character 'x' after decimal point in numeric literal (offset 2)`},
		{`1e+x`, `invalid character 'x' in exponent of numeric literal (offset 3)`},
		{`[tru]`, `invalid character ']' in literal true (expecting 'e') (offset 4)`},
		{`[nUll]`, `invalid character 'U' in literal null (expecting 'u') (offset 2)`},
		{`[1 2]`, `invalid character '2' after array element (offset 3)`},
		{`{"a":1 "b"}`, `invalid character '"' after object key:value pair (offset 7)`},
		{`{"a" 1}`, `invalid character '1' after object key (offset 5)`},
		{`{1:1}`, `invalid character '1' looking for beginning of object key string (offset 1)`},
		{`[,]`, `invalid character ',' looking for beginning of value (offset 1)`},
		{`[1] x`, `invalid character 'x' after top-level value (offset 4)`},
		{`[1,`, `unexpected end of JSON input`},
		{`"abc`, `unexpected end of JSON input`},
		{`-`, `unexpected end of JSON input`},
	} {
		if err := whole([]byte(tc.in)); err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %s", tc.in, err, tc.want)
		}
	}
}

func TestTokens(t *testing.T) {
	for _, tc := range []struct {
		in      string
		end     int
		integer bool
	}{{`0,`, 1, true}, {`-12]`, 3, true}, {`1.5}`, 3, false}, {`2e3 `, 3, false}, {`7`, 1, true}} {
		end, f, err := Value([]byte(tc.in), 0, 0)
		if err != nil || end != tc.end || (f == Integer) != tc.integer {
			t.Errorf("Value(%s) = %d, %v, %v", tc.in, end, f, err)
		}
	}
	if end, f, err := Value([]byte(`"caf\u00e9" rest`), 0, 0); err != nil || end != 11 || f != Escaped {
		t.Errorf("string: %d %v %v", end, f, err)
	}
	if _, f, _ := Value([]byte("\"caf\xc3\xa9\""), 0, 0); f != NonASCII {
		t.Errorf("string: flags %v, want NonASCII", f)
	}
	if end, f, err := Value([]byte(`false,`), 0, 0); err != nil || end != 5 || f != 0 {
		t.Errorf("literal: %d %v %v", end, f, err)
	}
	data := []byte(`{ "a\n" : 1 , "b":[ ] }`)
	i, empty := Open(data, 0)
	key, f, v, err := Key(data, i)
	if empty || string(key) != `a\n` || f != Escaped || data[v] != '1' || err != nil {
		t.Fatalf("Key: %q %v %d %v", key, f, v, err)
	}
	i, more, err := Next(data, v+1, '}')
	if !more || err != nil || data[i] != '"' {
		t.Fatalf("Next: %d %v %v", i, more, err)
	}
	if _, _, v, _ = Key(data, i); data[v] != '[' {
		t.Fatalf("second Key: value at %d", v)
	}
	if end, empty := Open(data, v); !empty || data[end] != ' ' {
		t.Fatalf("Open of an empty array: %d %v", end, empty)
	}
}

func TestUnquote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`"plain"`, "plain"},
		{`"\ud83d\ude00"`, "😀"},
		{`"\ud800"`, "\ufffd"},
		{`"\ud800\ud800"`, "\ufffd\ufffd"},
		{`"\ude00\ud83d"`, "\ufffd\ufffd"},
		{`"\ud83dx"`, "\ufffdx"},
		{"\"a\xffb\"", "a\ufffdb"},
		{`"\u0000\/"`, "\x00/"},
	} {
		_, f, err := Value([]byte(tc.in), 0, 0)
		if got := Unquote([]byte(tc.in), f); err != nil || got != tc.want {
			t.Errorf("Unquote(%s) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// nest nests n arrays ("[") or objects (`{"a":`), with a 0 inside.
func nest(open string, n int) string {
	closer := "]"
	if open != "[" {
		closer = "}"
	}
	return strings.Repeat(open, n) + "0" + strings.Repeat(closer, n)
}

func TestDepthLimit(t *testing.T) {
	for _, open := range []string{"[", `{"a":`} {
		if err := whole([]byte(nest(open, MaxDepth))); err != nil {
			t.Errorf("%s × %d: %v", open, MaxDepth, err)
		}
		if err := whole([]byte(nest(open, MaxDepth+1))); err == nil || !strings.Contains(err.Error(), "exceeded max depth") {
			t.Errorf("%s × %d: %v, want the depth error", open, MaxDepth+1, err)
		}
		// Containers around the value count.
		if _, _, err := Value([]byte(nest(open, MaxDepth-2)), 0, 2); err != nil {
			t.Errorf("%s × %d inside 2: %v", open, MaxDepth-2, err)
		}
		if _, _, err := Value([]byte(nest(open, MaxDepth-1)), 0, 2); err == nil {
			t.Errorf("%s × %d inside 2: accepted", open, MaxDepth-1)
		}
	}
	// A million levels fail at the limit without exhausting the stack.
	if err := whole([]byte(strings.Repeat("[", 1_000_000))); err == nil {
		t.Error("a million levels accepted")
	}
	// Past 64 levels the kinds go on in the slice: mixed kinds close right.
	var b strings.Builder
	for k := range 200 {
		if k%3 == 0 {
			b.WriteString(`{"k":`)
		} else {
			b.WriteString("[")
		}
	}
	b.WriteString("0")
	for k := 199; k >= 0; k-- {
		if k%3 == 0 {
			b.WriteString("}")
		} else {
			b.WriteString("]")
		}
	}
	checkAgainstStd(t, []byte(b.String()))
	if err := whole([]byte(b.String())); err != nil {
		t.Errorf("200 mixed levels: %v", err)
	}
}

// TestStepEvents pins what Step reports with watch 1 on an object, in
// whichever pieces it comes.
func TestStepEvents(t *testing.T) {
	data := []byte(` {"id":12,"r":{"x":[1,"}"]},"\u006d":true} `)
	want := "[1:1:0:false " + // the object begins
		"1:2:1:true 2:6:1:true 1:7:1:false 2:9:1:false " + // "id":12
		"1:10:1:true 2:13:1:true 1:14:1:false 2:27:1:false " + // "r":{...}
		"1:28:1:true 2:36:1:true 1:37:1:false 2:41:1:false]" // "\u006d":true
	for _, n := range []int{0, 1, 4} {
		events, end, last := streamed(data, n, 1)
		if fmt.Sprint(events) != want || end != 42 || last != Done {
			t.Errorf("in pieces of %d: %v, %d, %d\nwant %s, 42, Done", n, events, end, last, want)
		}
	}
	if events, _, last := streamed(data, 0, -1); len(events) != 0 || last != Done {
		t.Errorf("watch -1: %v, %d", events, last)
	}
	// An error stops the scanner for good.
	var s Scanner
	if i, ev := s.Step([]byte(`[1,]`), 0, -1); ev != Error || i != 3 {
		t.Errorf("[1,]: %d, %d", i, ev)
	}
	if _, ev := s.Step([]byte(`[]`), 0, -1); ev != Error {
		t.Errorf("after an error: %d", ev)
	}
}

// FuzzScan holds the scanner to encoding/json on arbitrary input, whole and
// in pieces of any size.
func FuzzScan(f *testing.F) {
	for _, s := range hostile {
		f.Add([]byte(s))
	}
	f.Add([]byte(nest("[", 70)))
	f.Add([]byte(`{"a":[{"b":"\u00e9"},-1.5e3,true,null]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkAgainstStd(t, data)
	})
}
