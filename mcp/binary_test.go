package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// pngLike is binary data as an image has it: every byte value, NULs and
// bytes that are not UTF-8 among them.
func pngLike(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>8)
	}
	return append([]byte("\x89PNG\r\n\x1a\n"), b...)
}

func TestBinaryForms(t *testing.T) {
	raw := pngLike(1000)
	b64 := base64.StdEncoding.EncodeToString(raw)
	fromBytes, fromText := BinaryFromBytes(raw), BinaryFromBase64(b64)

	if got := fromBytes.Base64(); got != b64 {
		t.Errorf("Base64 of bytes = %.20q…, want %.20q…", got, b64)
	}
	if got := fromText.Base64(); got != b64 {
		t.Errorf("Base64 of text = %.20q…, want the text", got)
	}
	got, err := fromBytes.Bytes()
	if err != nil || &got[0] != &raw[0] || len(got) != len(raw) {
		t.Errorf("Bytes of bytes: %v; shares the caller's array: %v", err, err == nil && &got[0] == &raw[0])
	}
	got, err = fromText.Bytes()
	if err != nil || !bytes.Equal(got, raw) {
		t.Errorf("Bytes of text: %v, equal: %v", err, bytes.Equal(got, raw))
	}
	if r, ok := fromBytes.Raw(); !ok || cap(r) != len(raw) {
		t.Errorf("Raw of bytes: ok %v, cap %d, want true and %d (an append must not write past the data)", ok, cap(r), len(raw))
	}
	if r, ok := fromText.Raw(); ok || r != nil {
		t.Errorf("Raw of text = %d bytes, %v; want nil, false", len(r), ok)
	}
	if !fromBytes.Equal(fromText) || !fromText.Equal(fromBytes) || !fromText.Equal(BinaryFromBase64(strings.Clone(b64))) {
		t.Error("the same data in either form is not Equal")
	}
	if fromBytes.Equal(BinaryFromBytes(raw[1:])) || fromText.Equal(BinaryFromBase64(b64[4:])) || fromBytes.Equal(BinaryFromBase64(b64[4:])) {
		t.Error("different data is Equal")
	}
	if fromBytes.Size() != len(raw) || fromText.Size() != len(raw) {
		t.Errorf("Size = %d (bytes), %d (text), want %d", fromBytes.Size(), fromText.Size(), len(raw))
	}
	if got := string(fromBytes.AppendBase64([]byte("x:"))); got != "x:"+b64 {
		t.Errorf("AppendBase64 of bytes = %.20q…", got)
	}
	if got := string(fromText.AppendBase64([]byte("x:"))); got != "x:"+b64 {
		t.Errorf("AppendBase64 of text = %.20q…", got)
	}
}

// TestBinaryDeepEqualComparesData: reflect.DeepEqual, which the decoders'
// differential tests and users' own tests compare results with, sees the
// data itself, not where it is or its first byte.
func TestBinaryDeepEqualComparesData(t *testing.T) {
	a, b := pngLike(64), pngLike(64)
	b[40] ^= 1
	if reflect.DeepEqual(BinaryFromBytes(a), BinaryFromBytes(b)) {
		t.Error("bytes differing at one place are DeepEqual")
	}
	if !reflect.DeepEqual(BinaryFromBytes(a), BinaryFromBytes(bytes.Clone(a))) {
		t.Error("equal bytes in two arrays are not DeepEqual")
	}
	ta, tb := base64.StdEncoding.EncodeToString(a), base64.StdEncoding.EncodeToString(b)
	if reflect.DeepEqual(BinaryFromBase64(ta), BinaryFromBase64(tb)) || !reflect.DeepEqual(BinaryFromBase64(ta), BinaryFromBase64(strings.Clone(ta))) {
		t.Error("DeepEqual of texts does not follow the text")
	}
}

func TestBinaryZero(t *testing.T) {
	for name, b := range map[string]Binary{"zero": {}, "empty text": BinaryFromBase64(""), "empty bytes": BinaryFromBytes([]byte{}), "nil bytes": BinaryFromBytes(nil)} {
		if !b.IsZero() || b.Size() != 0 || b.Base64() != "" || !b.Equal(Binary{}) {
			t.Errorf("%s: IsZero %v, Size %d, Base64 %q", name, b.IsZero(), b.Size(), b.Base64())
		}
		if got, err := b.Bytes(); err != nil || len(got) != 0 {
			t.Errorf("%s: Bytes = %v, %v", name, got, err)
		}
	}
	if BinaryFromBase64("AA==").IsZero() || BinaryFromBytes([]byte{0}).IsZero() {
		t.Error("one byte IsZero")
	}
}

// TestBinarySize: the size is counted from the text without decoding it,
// padding and line breaks left out (moved here from cmd/tako's
// base64Size, with the orchestrator's decodedLen beside it).
func TestBinarySize(t *testing.T) {
	for _, s := range []string{"", "a", "ab", "abc", "abcd", "abcdefghij", strings.Repeat("xyz", 1000)} {
		enc := base64.StdEncoding.EncodeToString([]byte(s))
		if got := BinaryFromBase64(enc).Size(); got != len(s) {
			t.Errorf("Size of %q = %d, want %d", enc, got, len(s))
		}
	}
	// MIME-style base64, 76 letters a line.
	raw := pngLike(300)
	enc := base64.StdEncoding.EncodeToString(raw)
	var lines strings.Builder
	for len(enc) > 76 {
		lines.WriteString(enc[:76] + "\r\n")
		enc = enc[76:]
	}
	lines.WriteString(enc)
	if got := BinaryFromBase64(lines.String()).Size(); got != len(raw) {
		t.Errorf("Size of base64 in lines = %d, want %d", got, len(raw))
	}
}

func TestBinaryBadBase64(t *testing.T) {
	b := BinaryFromBase64("not base64!")
	if _, err := b.Bytes(); err == nil {
		t.Error("Bytes of bad base64: no error")
	}
	var c Content
	if err := json.Unmarshal([]byte(`{"type":"image","mimeType":"image/png","data":"not base64!"}`), &c); err != nil {
		t.Fatalf("a block with bad base64 fails to decode: %v (only asking for its bytes should)", err)
	}
	if _, err := c.Bytes(); err == nil {
		t.Error("Content.Bytes of bad base64: no error")
	}
}

func TestBinaryJSON(t *testing.T) {
	raw := pngLike(100)
	b64 := base64.StdEncoding.EncodeToString(raw)
	for name, b := range map[string]Binary{"bytes": BinaryFromBytes(raw), "text": BinaryFromBase64(b64)} {
		out, err := json.Marshal(b)
		if err != nil || string(out) != `"`+b64+`"` {
			t.Errorf("%s: Marshal = %.30s…, %v", name, out, err)
		}
	}
	// Text from a peer that is not base64 still makes valid JSON, and comes
	// back as it went.
	junk := "ab\"c\\d\n\u00e9\u2028<>&\x01"
	out, err := json.Marshal(BinaryFromBase64(junk))
	if err != nil || !json.Valid(out) {
		t.Fatalf("Marshal of junk text = %q, %v", out, err)
	}
	var back Binary
	if err := json.Unmarshal(out, &back); err != nil || back.Base64() != junk {
		t.Errorf("junk text back = %q, %v; want %q", back.Base64(), err, junk)
	}

	// null leaves the value as it was, as it would a string.
	kept := BinaryFromBase64("AAAA")
	if err := json.Unmarshal([]byte(`null`), &kept); err != nil || kept.Base64() != "AAAA" {
		t.Errorf("null: %q, %v", kept.Base64(), err)
	}
	for _, bad := range []string{`12`, `{}`, `["AA=="]`, `true`} {
		var b Binary
		if err := json.Unmarshal([]byte(bad), &b); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	var b Binary
	if err := b.UnmarshalJSON([]byte(`12`)); !errors.Is(err, errBinaryNotString) {
		t.Errorf("UnmarshalJSON(12) = %v, want errBinaryNotString", err)
	}
}

// TestImageContentFromBytesOnTheWire: a block made from bytes goes on the
// wire as base64 and comes back as text holding the same data.
func TestImageContentFromBytesOnTheWire(t *testing.T) {
	raw := pngLike(5000)
	res := CallToolResult{Content: []Content{ImageContent(raw, "image/png"), EmbeddedBlobResource("file:///a.pdf", "application/pdf", raw)}}
	out, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString(raw)
	if !bytes.Contains(out, []byte(`"data":"`+b64+`"`)) || !bytes.Contains(out, []byte(`"blob":"`+b64+`"`)) {
		t.Fatalf("the wire form has no base64 of the bytes: %.200s", out)
	}
	for name, decode := range map[string]func([]byte, *CallToolResult) error{
		"fast path":     DecodeCallToolResult,
		"encoding/json": func(b []byte, r *CallToolResult) error { return json.Unmarshal(b, r) },
	} {
		var back CallToolResult
		if err := decode(out, &back); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(back.Content) != 2 || !back.Content[0].Data.Equal(res.Content[0].Data) || back.Content[1].Resource == nil ||
			back.Content[1].Resource.Blob == nil || !back.Content[1].Resource.Blob.Equal(*res.Content[1].Resource.Blob) {
			t.Fatalf("%s: came back as %+v", name, back.Content)
		}
		if _, ok := back.Content[0].Data.Raw(); ok {
			t.Errorf("%s: decoded data is held as bytes; JSON's base64 text should be kept as it came", name)
		}
	}
}

// TestBase64OfBytesAllocatesOnce: encoding bytes makes the string and
// nothing else (EncodeToString would make a buffer and copy it).
func TestBase64OfBytesAllocatesOnce(t *testing.T) {
	b := BinaryFromBytes(pngLike(3000))
	if n := testing.AllocsPerRun(50, func() { _ = b.Base64() }); n != 1 {
		t.Errorf("Base64 of bytes allocates %v times, want 1", n)
	}
	text := BinaryFromBase64("AAAA")
	if n := testing.AllocsPerRun(50, func() { _ = text.Base64() }); n != 0 {
		t.Errorf("Base64 of text allocates %v times, want 0", n)
	}
}

// TestBase64MatchesStdAtEveryLength: every length around Base64's chunks.
func TestBase64MatchesStdAtEveryLength(t *testing.T) {
	raw := pngLike(2400)
	for n := 0; n < len(raw); n += 1 + n/50 {
		if got, want := BinaryFromBytes(raw[:n]).Base64(), base64.StdEncoding.EncodeToString(raw[:n]); got != want {
			t.Fatalf("Base64 of %d bytes = %.40q…, want %.40q…", n, got, want)
		}
	}
}
