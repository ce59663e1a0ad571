package jsonscan

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

// unquoteCases are literals whose every path Unquote takes: plain,
// escaped, valid and invalid UTF-8, surrogate pairs and lone surrogates.
var unquoteCases = []string{
	`""`, `"plain"`, `"\n"`, `"a\tb\"c\\d\/e\bf\fg\rh"`,
	`"\u001b[33mslow\u001b[0m \u003cselect\u003e \u0026"`,
	`"caf\u00e9 \u65e5\u672c \ud83d\udc19"`, "\"café 日本 🐙\\n\"",
	"\"a\xffb\\n\xc3\"", "\"\xed\xa0\x80\"", `"\ud800"`, `"\udc00\ud800x"`,
	`"\ud83d\u0041"`, `"\ud83d\\u"`, "\"\xf0\x9f\x90\\n\x99\"",
}

// TestUnquoteMatchesStd holds Unquote and AppendUnquoted to encoding/json's
// decoding of the same literals.
func TestUnquoteMatchesStd(t *testing.T) {
	for _, lit := range unquoteCases {
		checkUnquote(t, []byte(lit))
	}
}

func checkUnquote(t *testing.T, lit []byte) {
	t.Helper()
	end, f, err := Value(lit, 0, 0)
	if err != nil || end != len(lit) || lit[0] != '"' {
		return
	}
	var want string
	if err := json.Unmarshal(lit, &want); err != nil {
		t.Fatalf("encoding/json refuses %q, which Value accepts: %v", lit, err)
	}
	if got := Unquote(lit, f); got != want {
		t.Errorf("Unquote(%q) = %q, want %q", lit, got, want)
	}
	if got := Unquote(lit, Escaped|NonASCII); got != want {
		t.Errorf("Unquote(%q, Escaped|NonASCII) = %q, want %q", lit, got, want)
	}
	if got := string(AppendUnquoted([]byte("x"), lit[1:len(lit)-1])); got != "x"+want {
		t.Errorf("AppendUnquoted(%q) = %q, want %q", lit, got, "x"+want)
	}
}

// FuzzUnquoteMatchesStd: any string literal Value accepts decodes as
// encoding/json decodes it.
func FuzzUnquoteMatchesStd(f *testing.F) {
	for _, lit := range unquoteCases {
		f.Add([]byte(lit))
	}
	f.Fuzz(func(t *testing.T, lit []byte) { checkUnquote(t, lit) })
}

// TestUnquoteAllocatesOnlyTheString pins the fix for escaped strings
// costing six times their size: Unquote appended into a buffer that grew
// as it went and then copied it into a string, so a 1 MiB text with a
// newline every line allocated about 6 MiB. Now it allocates the string
// once, at its decoded size (rounded up to the allocator's page).
func TestUnquoteAllocatesOnlyTheString(t *testing.T) {
	line := "2026-12-01T15:52:00.000Z\tINFO\tuser \"alice\" café → 日本 🐙 \x1b[0m <ok>\n"
	text := strings.Repeat(line, (1<<20)/len(line))
	lit, err := json.Marshal(text)
	if err != nil {
		t.Fatal(err)
	}
	_, f, err := Value(lit, 0, 0)
	if err != nil || f&Escaped == 0 {
		t.Fatalf("Value: %v, flags %v", err, f)
	}
	var got string
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	got = Unquote(lit, f)
	runtime.ReadMemStats(&m1)
	if got != text {
		t.Fatal("Unquote decoded another text")
	}
	if alloc, limit := m1.TotalAlloc-m0.TotalAlloc, uint64(len(text))+8<<10; alloc > limit {
		t.Errorf("Unquote of a %d-byte escaped text allocated %d bytes, want at most %d (the string once)", len(text), alloc, limit)
	}
}

// BenchmarkUnquote decodes a 1 MiB log-like text (an escape every few dozen
// bytes, UTF-8 on every line) and a JSON document held as text (an escape
// every few bytes).
func BenchmarkUnquote(b *testing.B) {
	for _, bc := range []struct{ name, line string }{
		{"log", "2026-12-01T15:52:00.000Z\tINFO\tuser \"alice\" café → 日本 🐙 \x1b[0m <ok>\n"},
		{"json", "    \"description\": \"A \\\"quoted\\\" name\",\n    \"tags\": [\"alpha\", \"beta\"],\n"},
	} {
		lit, _ := json.Marshal(strings.Repeat(bc.line, (1<<20)/len(bc.line)))
		_, f, _ := Value(lit, 0, 0)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(lit)))
			for b.Loop() {
				Unquote(lit, f)
			}
		})
	}
}
