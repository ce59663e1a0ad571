package jsonvalue

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/tako-mcp/tako/internal/jsonscan"
)

// decodeSeeds are documents where a decoder could part ways with
// encoding/json: FuzzDecodeMatchesStd's seeds.
var decodeSeeds = []string{
	`{"temperature":-1.5,"conditions":"light snow","humidity":87,"forecast":[{"day":"2026-12-01","summary":"Schnee am Nachmittag, \"böig\"\nnachts klar"}]}`,
	`{}`, `[]`, `{"a":[]}`, `[[],{}]`, `null`, `true`, `false`, `0`, `-0`, `1e308`, `1e309`, `-1e400`, `[1e400, x]`, `[1e400]`,
	`123456789012345678901234567890`, `0.1`, `5e-324`, `2e-400`,
	`{"a":1,"a":2}`, `{"a":{"b":1},"a":{"c":2}}`, `{"\u0061":1,"a":2}`, `{"é":"\u00e9"}`,
	`"\ud83d\ude00"`, `"\ud800"`, "\"\xff\xfe\"", "{\"\xff\":1}", `"tab\tquote\"slash\\"`,
	` [ 1 , { "a" : "b" } ] `, "\t\r\n{}\n",
	``, ` `, `[`, `{`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `[1 2]`, `{} x`, `1 2`, `"abc`, `{"a":tru}`, `[nul]`, `"\x"`,
	`"\`, `{"a":"\u12g4"}`, `[01]`, `[-]`, `{"a":1]`, `[}`,
}

// TestDecodeMatchesStd: each seed decodes to what encoding/json makes of
// it, or fails where encoding/json does, in its words.
func TestDecodeMatchesStd(t *testing.T) {
	for _, s := range decodeSeeds {
		checkDecode(t, []byte(s))
	}
}

// TestDecodeDepth: as many levels as encoding/json allows decode; one
// more is refused, as encoding/json refuses it.
func TestDecodeDepth(t *testing.T) {
	nest := func(n int) []byte {
		return []byte(strings.Repeat(`[{"a":`, n/2) + strings.Repeat("[", n%2) + "1" + strings.Repeat("]", n%2) + strings.Repeat("}]", n/2))
	}
	for _, n := range []int{jsonscan.MaxDepth - 1, jsonscan.MaxDepth, jsonscan.MaxDepth + 1} {
		checkDecode(t, nest(n))
	}
	if _, err := Decode(nest(jsonscan.MaxDepth)); err != nil {
		t.Errorf("%d levels: %v", jsonscan.MaxDepth, err)
	}
	if _, err := Decode(nest(jsonscan.MaxDepth + 1)); err == nil || !strings.Contains(err.Error(), "exceeded max depth") {
		t.Errorf("%d levels: %v, want exceeded max depth", jsonscan.MaxDepth+1, err)
	}
}

// FuzzDecodeMatchesStd holds Decode to encoding/json on any input.
func FuzzDecodeMatchesStd(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkDecode(t, data) })
}

// offset is what jsonscan adds to encoding/json's words: where.
var offset = regexp.MustCompile(` \(offset \d+\)$`)

func checkDecode(t *testing.T, data []byte) {
	t.Helper()
	var want any
	wantErr := json.Unmarshal(data, &want)
	got, err := Decode(data)
	switch {
	case (err == nil) != (wantErr == nil):
		t.Fatalf("Decode(%.200q): %v; encoding/json: %v", data, err, wantErr)
	case err != nil:
		// At the end of the input, encoding/json words what it makes of
		// a space it adds there ("\"\\" is "invalid character ' ' in
		// string escape code"); jsonscan says the input ended.
		if w, g := wantErr.Error(), offset.ReplaceAllString(err.Error(), ""); g != w && !errors.Is(err, jsonscan.ErrEnd) {
			t.Fatalf("Decode(%.200q): %q; encoding/json: %q", data, g, w)
		}
		if got != nil {
			t.Fatalf("Decode(%.200q) failed but returned %v", data, got)
		}
	case !reflect.DeepEqual(got, want):
		t.Fatalf("Decode(%.200q) = %s; encoding/json: %s", data, show(got), show(want))
	}
}

func show(v any) string { return fmt.Sprintf("%#v", v) }

// BenchmarkDecode decodes a tool's structured result, a week's forecast,
// with Decode and with encoding/json.
func BenchmarkDecode(b *testing.B) {
	var days []string
	for d := range 7 {
		days = append(days, fmt.Sprintf(`{"day":"2026-12-%02d","high":%d.5,"low":-%d,"summary":"Schnee am Nachmittag, \"böig\"\nnachts klar"}`, d+1, d, d))
	}
	doc := []byte(`{"temperature":-1.5,"conditions":"light snow","humidity":87,"forecast":[` + strings.Join(days, ",") + `]}`)
	b.Run("schemacheck", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			if _, err := Decode(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			var v any
			if err := json.Unmarshal(doc, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
