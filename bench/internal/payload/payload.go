// Package payload makes the large tool results of tako's peer benchmarks:
// the server (servers/gosdk's big tool) returns them and the harness checks
// what each client decoded against the same bytes.
//
// Why not strings.Repeat("x", n): a string with no escapes is copied
// straight out of the wire by every decoder, so it hides the cost that real
// results have. Files, logs and JSON documents returned as text put a
// newline (\n on the wire) every line, quotes (\"), tabs (\t), backslashes
// and non-ASCII text, and a JSON encoder writes control characters such as
// a terminal's ESC as \u001b. Each kind here is one of those shapes, made
// deterministically so that every run sends the same bytes.
package payload

import (
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The kinds of payload.
const (
	// Text is log-like lines of about 70 bytes: a timestamp, tabs, quoted
	// names, a Windows path's backslashes, UTF-8 of two, three and four
	// bytes (é, →, 日本, 🐙), <, > and &, and ANSI colour escapes (ESC,
	// which JSON writes as \u001b).
	Text = "text"
	// JSON is a pretty-printed JSON document (an array of records) returned
	// as text: a quote every few bytes, a newline and indentation every
	// line. It is valid JSON of exactly the size asked for.
	JSON = "json"
	// Image is an image block's data: base64 of pseudo-random bytes, the
	// size asked for being the base64 text's (a multiple of 4). The server
	// sends it as {"type":"image","data":...,"mimeType":"image/png"}.
	Image = "image"
)

// Kinds are every kind, in the order of the tables.
var Kinds = []string{Text, JSON, Image}

// ImageMIME is the MIME type of an Image payload's block.
const ImageMIME = "image/png"

// Make returns the payload of kind of exactly n bytes: for Text and JSON,
// the text's UTF-8 bytes; for Image, the base64 text's.
func Make(kind string, n int) (string, error) {
	var b strings.Builder
	b.Grow(n)
	if err := Write(&b, kind, n); err != nil {
		return "", err
	}
	return b.String(), nil
}

// Write writes the payload Make returns to w, a few KiB at a time: the
// harness hashes what a client should have received without holding it,
// which would add to the peak RSS it measures.
func Write(w io.Writer, kind string, n int) error {
	if n < 0 {
		return fmt.Errorf("payload: size %d", n)
	}
	bw := bufio.NewWriterSize(w, 16<<10)
	var err error
	switch kind {
	case Text:
		err = text(bw, n)
	case JSON:
		err = jsonDoc(bw, n)
	case Image:
		err = image(bw, n)
	default:
		return fmt.Errorf("payload: no kind %q (want one of %s)", kind, strings.Join(Kinds, ", "))
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

// ImageBytes returns the bytes an Image payload of n base64 bytes encodes.
func ImageBytes(n int) ([]byte, error) {
	if n%4 != 0 {
		return nil, fmt.Errorf("payload: an image's base64 size must be a multiple of 4, got %d", n)
	}
	raw := make([]byte, n/4*3)
	newNoise().fill(raw)
	return raw, nil
}

// noise is xorshift: deterministic and incompressible enough to look like
// a PNG's deflated pixels.
type noise struct{ x uint64 }

func newNoise() *noise { return &noise{x: 0x9E3779B97F4A7C15} }

func (g *noise) fill(b []byte) {
	x := g.x
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x >> 32)
	}
	g.x = x
}

func image(w *bufio.Writer, n int) error {
	if n%4 != 0 {
		return fmt.Errorf("payload: an image's base64 size must be a multiple of 4, got %d", n)
	}
	enc := base64.NewEncoder(base64.StdEncoding, w)
	g := newNoise()
	var chunk [3 << 10]byte
	for left := n / 4 * 3; left > 0; {
		k := min(left, len(chunk))
		g.fill(chunk[:k])
		if _, err := enc.Write(chunk[:k]); err != nil {
			return err
		}
		left -= k
	}
	return enc.Close()
}

// logLines are the templates of Text's lines; %d is the line's number.
var logLines = [...]string{
	"2026-12-01T15:52:%02d.%03dZ\tINFO\tuser \"alice\" opened C:\\Users\\alice\\menu.txt (café)\n",
	"2026-12-01T15:52:%02d.%03dZ\tWARN\t\x1b[33mslow query\x1b[0m <select> took 12 ms & retried → ok\n",
	"2026-12-01T15:52:%02d.%03dZ\tDEBUG\tgreeting=\"こんにちは 日本\" emoji=🐙 tab\there\n",
	"2026-12-01T15:52:%02d.%03dZ\tINFO\trequest {\"id\": 42, \"path\": \"/api/v1/items\"} → 200\n",
}

func text(w *bufio.Writer, n int) error {
	var line []byte
	for i, done := 0, 0; done < n; i++ {
		line = fmt.Appendf(line[:0], logLines[i%len(logLines)], i/1000%60, i%1000)
		if done+len(line) > n {
			return last(w, line, n-done)
		}
		w.Write(line)
		done += len(line)
	}
	return nil
}

// last writes the first k bytes of s, cut back to a rune boundary and
// padded to k with spaces.
func last(w *bufio.Writer, s []byte, k int) error {
	s = s[:k]
	for len(s) > 0 {
		if r, size := utf8.DecodeLastRune(s); r != utf8.RuneError || size > 1 {
			break
		}
		s = s[:len(s)-1] // a rune the cut split
	}
	w.Write(s)
	_, err := w.WriteString(strings.Repeat(" ", k-len(s)))
	return err
}

func jsonDoc(w *bufio.Writer, n int) error {
	const open, closer = "[\n", "\n]\n"
	if n < len(open)+len(closer) {
		_, err := w.WriteString(strings.Repeat(" ", n))
		return err
	}
	w.WriteString(open)
	done := len(open)
	for i := 0; ; i++ {
		rec := record(i)
		sep := ""
		if i > 0 {
			sep = ",\n"
		}
		if done+len(sep)+len(rec)+len(closer) > n {
			break
		}
		w.WriteString(sep)
		w.WriteString(rec)
		done += len(sep) + len(rec)
	}
	// Whitespace before the closing bracket makes the size exact and the
	// document still valid.
	w.WriteString(strings.Repeat(" ", n-done-len(closer)))
	_, err := w.WriteString(closer)
	return err
}
func record(i int) string {
	id := strconv.Itoa(i)
	return `  {
    "id": ` + id + `,
    "name": "item ` + id + `",
    "description": "A \"quoted\" name, naïve café, 東京",
    "tags": ["alpha", "beta", "gamma"],
    "price": 12.5,
    "active": true,
    "path": "C:\\data\\item` + id + `.json"
  }`
}

// Sum is the SHA-256 of the payload Make returns, computed without holding
// it.
func Sum(kind string, n int) ([sha256.Size]byte, error) {
	h := sha256.New()
	if err := Write(h, kind, n); err != nil {
		return [sha256.Size]byte{}, err
	}
	return [sha256.Size]byte(h.Sum(nil)), nil
}

// SumOf is the SHA-256 of s, hashed a few KiB at a time: converting a
// 16 MiB string to bytes would add its size to the caller's heap and RSS.
func SumOf(s string) [sha256.Size]byte {
	h := sha256.New()
	var chunk [16 << 10]byte
	for len(s) > 0 {
		k := copy(chunk[:], s)
		h.Write(chunk[:k])
		s = s[k:]
	}
	return [sha256.Size]byte(h.Sum(nil))
}

// SumOfBase64 is the SHA-256 of the base64 text of raw, without holding
// that text.
func SumOfBase64(raw []byte) [sha256.Size]byte {
	h := sha256.New()
	enc := base64.NewEncoder(base64.StdEncoding, h)
	enc.Write(raw)
	enc.Close()
	return [sha256.Size]byte(h.Sum(nil))
}
