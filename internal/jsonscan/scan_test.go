package jsonscan

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// whole scans data as one buffer, the way the decoders do, and reports
// whether it is one valid JSON value.
func whole(data []byte) error {
	var s Scanner
	end, ev := s.Step(data, 0, -1)
	if ev == Error || !s.Complete() {
		return s.Err(data, end)
	}
	return Finish(data, end)
}

// one scans the value at the start of data and returns where it ends and
// its flags.
func one(data []byte) (int, Flags, error) { return Value(data, 0, 0) }

// streamed scans data fed in pieces of n bytes (all at once if n is zero),
// watching depth 1, and returns each End with its offset and the bytes of
// the token, gathered from the pieces as the id recovery gathers them, and
// the offset and event it stopped with. A space is fed at the end, as a
// stream would bring the next line, so that a top-level number ends.
func streamed(data []byte, n int) (events []string, end int, last Event) {
	if n <= 0 {
		n = len(data) + 1
	}
	var s Scanner
	var tok []byte
	data = append(data[:len(data):len(data)], ' ')
	for base := 0; base < len(data); base += n {
		p := data[base:min(base+n, len(data))]
		for i := 0; i < len(p); {
			j, ev := s.Step(p, i, 1)
			if s.Depth() == 1 && (ev == End || s.Partial()) {
				tok = append(tok, p[s.Start():j]...)
			}
			switch ev {
			case End:
				events = append(events, fmt.Sprintf("%d:%d:%v:%s", base+j, s.Depth(), s.Key(), tok))
				tok = tok[:0]
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
	`{"id":12,"r":{"x":[1,"}"]},"\u006d":true}`, `{"a":"\"","b\\":"\\\""}`,
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

// checkAgainstStd holds the scanner to encoding/json on data: the same
// inputs are valid, splitting the input changes nothing the scanner
// reports, and a string decodes to what encoding/json decodes.
func checkAgainstStd(t *testing.T, data []byte) {
	t.Helper()
	err := whole(data)
	if valid := json.Valid(data); (err == nil) != valid {
		t.Fatalf("%q: scanner says %v, json.Valid says %v", data, err, valid)
	}
	wantEvents, wantEnd, wantLast := streamed(data, 0)
	for _, n := range []int{1, 2, 3, 7} {
		events, end, last := streamed(data, n)
		if fmt.Sprint(events) != fmt.Sprint(wantEvents) || end != wantEnd || last != wantLast {
			t.Fatalf("%q in pieces of %d: %q, %d, %d; whole: %q, %d, %d", data, n, events, end, last, wantEvents, wantEnd, wantLast)
		}
	}
	// The stream ends where the value does, and agrees on validity.
	i := Space(data, 0)
	if streamValid := wantLast == Done && Finish(data, min(wantEnd, len(data))) == nil; streamValid != (err == nil) {
		t.Fatalf("%q: the stream stopped with %d at %d; the buffer scan says %v", data, wantLast, wantEnd, err)
	}
	if i < len(data) && data[i] == '"' && err == nil {
		var want string
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("%q: valid, but encoding/json says %v", data, err)
		}
		end, f, _ := one(data[i:])
		if got := Unquote(data[i:i+end], f); got != want {
			t.Fatalf("Unquote(%q) = %q, want %q", data, got, want)
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

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		in   string
		end  int
		want Flags
	}{
		{`0,`, 1, Integer}, {`-12]`, 3, Integer}, {`1.5}`, 3, 0}, {`2e3 `, 3, 0},
		{`"plain"`, 7, 0}, {`"caf\u00e9" rest`, 11, Escaped}, {"\"caf\xc3\xa9\"", 7, NonASCII},
		{"\"\xc3\xa9\\n\"", 6, Escaped | NonASCII}, {`false,`, 5, 0}, {`[1]`, 3, 0},
	} {
		if end, f, err := one([]byte(tc.in)); err != nil || end != tc.end || f != tc.want {
			t.Errorf("%s: %d, %v, %v; want %d, %v", tc.in, end, f, err, tc.end, tc.want)
		}
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
		_, f, err := one([]byte(tc.in))
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
	}
	// A million levels fail at the limit without exhausting the stack.
	if err := whole([]byte(strings.Repeat("[", 1_000_000))); err == nil {
		t.Error("a million levels accepted")
	}
	// Past 64 levels the kinds go on in a slice: mixed kinds close right.
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
	if err := whole([]byte(b.String())); err != nil {
		t.Errorf("200 mixed levels: %v", err)
	}
	checkAgainstStd(t, []byte(b.String()))
}

// TestStepEvents pins what Step reports while watching the members of an
// object, in whichever pieces it comes.
func TestStepEvents(t *testing.T) {
	data := []byte(` {"id":12,"r":{"x":[1,"}"]},"\u006d":true} `)
	want := `[6:1:true:"id" 9:1:false:12 13:1:true:"r" 27:1:false:{"x":[1,"}"]} ` +
		`36:1:true:"\u006d" 41:1:false:true]`
	for _, n := range []int{0, 1, 4} {
		events, end, last := streamed(data, n)
		if fmt.Sprint(events) != want || end != 42 || last != Done {
			t.Errorf("in pieces of %d: %s, %d, %d\nwant %s, 42, Done", n, events, end, last, want)
		}
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

// TestWholeBuffer walks an object as the decoders do.
func TestWholeBuffer(t *testing.T) {
	data := []byte(` { "a\n" : 1.5 , "b":[ ] , "c":{"d":[true]}}`)
	i, empty := Open(data, 1)
	var got []string
	for more := !empty; more; {
		key, kf, v, err := Key(data, i)
		if err != nil {
			t.Fatal(err)
		}
		end, f, err := Value(data, v, 1)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s/%v=%s/%v", key, kf, data[v:end], f))
		if i, more, err = Next(data, end, '}'); err != nil {
			t.Fatal(err)
		}
	}
	if want := `[a\n/1=1.5/0 b/0=[ ]/0 c/0={"d":[true]}/0]`; fmt.Sprint(got) != want || Finish(data, i) != nil {
		t.Errorf("got %s, want %s", got, want)
	}
	for _, tc := range []struct {
		in   string
		want string
	}{
		{`{"a" 1}`, "after object key"},
		{`{"a":1 2}`, "after object key:value pair"},
		{`{1}`, "looking for beginning of object key string"},
		{`{"a":[1 2]}`, "after array element"},
		{`{"a":`, "unexpected end"},
		{`{"a"`, "unexpected end"},
	} {
		data := []byte(tc.in)
		i, _ := Open(data, 0)
		_, _, v, err := Key(data, i)
		if err == nil {
			var end int
			if end, _, err = Value(data, v, 1); err == nil {
				_, _, err = Next(data, end, '}')
			}
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.in, err, tc.want)
		}
	}
	// Value counts the containers around it against the limit.
	if _, _, err := Value([]byte(nest("[", MaxDepth-2)), 0, 2); err != nil {
		t.Errorf("%d levels inside 2: %v", MaxDepth-2, err)
	}
	if _, _, err := Value([]byte(nest("[", MaxDepth-1)), 0, 2); err == nil {
		t.Errorf("%d levels inside 2 accepted", MaxDepth-1)
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
