package payload

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestMake checks that every kind has exactly the size asked for, is valid
// UTF-8 (and, for JSON, a valid document; for Image, base64), and that its
// JSON encoding has the escapes the benchmarks are about.
func TestMake(t *testing.T) {
	for _, kind := range Kinds {
		for _, n := range []int{0, 4, 64, 1000, 1024, 4096, 1 << 20} {
			s, err := Make(kind, n)
			if err != nil {
				t.Fatalf("Make(%s, %d): %v", kind, n, err)
			}
			if len(s) != n {
				t.Fatalf("Make(%s, %d) is %d bytes", kind, n, len(s))
			}
			if !utf8.ValidString(s) {
				t.Fatalf("Make(%s, %d) is not valid UTF-8", kind, n)
			}
			switch kind {
			case JSON:
				if n >= 5 && !json.Valid([]byte(s)) {
					t.Fatalf("Make(json, %d) is not valid JSON", n)
				}
			case Image:
				raw, err := base64.StdEncoding.DecodeString(s)
				want, _ := ImageBytes(n)
				if err != nil || string(raw) != string(want) {
					t.Fatalf("Make(image, %d) is not the base64 of ImageBytes: %v", n, err)
				}
			}
			if kind == Image || n < 1000 {
				continue
			}
			wire, _ := json.Marshal(s)
			for _, esc := range []string{`\n`, `\"`, `\\`} {
				if !strings.Contains(string(wire), esc) {
					t.Errorf("Make(%s, %d) on the wire has no %s", kind, n, esc)
				}
			}
			if kind == Text {
				for _, esc := range []string{`\t`, `\u001b`, "🐙", "日本"} {
					if !strings.Contains(string(wire), esc) {
						t.Errorf("Make(text, %d) on the wire has no %s", n, esc)
					}
				}
			}
		}
	}
	if _, err := Make(Image, 6); err == nil {
		t.Error("Make(image, 6): no error for a size that is not a multiple of 4")
	}
	if _, err := Make("x", 6); err == nil {
		t.Error(`Make("x", 6): no error for an unknown kind`)
	}
}

// TestDeterministic: the server and the harness make the payload apart,
// so the same call must give the same bytes.
func TestDeterministic(t *testing.T) {
	for _, kind := range Kinds {
		a, _ := Make(kind, 1<<16)
		b, _ := Make(kind, 1<<16)
		if a != b {
			t.Errorf("Make(%s) differs from call to call", kind)
		}
	}
}

// TestSum: the streamed hash is the hash of what Make returns, and the
// receiving side's hashes agree with it.
func TestSum(t *testing.T) {
	for _, kind := range Kinds {
		s, _ := Make(kind, 1<<16)
		sum, err := Sum(kind, 1<<16)
		if err != nil || sum != sha256.Sum256([]byte(s)) || SumOf(s) != sum {
			t.Errorf("Sum(%s) does not hash Make's payload: %v", kind, err)
		}
	}
	raw, _ := ImageBytes(1 << 16)
	if sum, _ := Sum(Image, 1<<16); SumOfBase64(raw) != sum {
		t.Error("SumOfBase64(ImageBytes) differs from Sum(image)")
	}
}
