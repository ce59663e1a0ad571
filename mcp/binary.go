package mcp

import (
	"encoding/base64"
	"errors"
	"strings"
	"unsafe"

	"github.com/tako-mcp/tako/internal/jsonscan"
)

// Binary is binary data: an image's or audio clip's ([Content.Data]) or a
// binary resource's ([ResourceContents.Blob]).
//
// MCP's JSON carries such data as base64 text; its gRPC service carries
// raw bytes. A Binary holds the form it was made from and makes the other
// only when asked, so that neither wire pays for the other's:
//
//   - Read over stdio, HTTP or WebSocket, a block keeps the base64 text it
//     arrived as. Handed on as text (to a model's API, a bridge, --json),
//     it is never decoded and encoded again, and a server's bad base64
//     fails only the caller that asks for the bytes, not the whole result.
//   - Read over gRPC, a block keeps the bytes protobuf decoded, a quarter
//     smaller than their base64, and writes base64 only when marshalled or
//     asked for.
//
// The zero Binary holds no data. A Binary is a small value, copied freely;
// copies share the bytes, which must not be modified.
//
// Both forms live in one string (bytes as the string's memory) beside a
// flag: three words, one more than the text alone, and reflect.DeepEqual
// compares the data a Binary holds, not where it is.
type Binary struct {
	_   [0]func() // not comparable: == would say text and bytes of the same data differ; see Equal
	s   string    // the base64 text, or the bytes themselves
	raw bool      // s holds the bytes
}

// BinaryFromBase64 returns a Binary holding the base64 text s (standard
// encoding, padded), unchecked: [Binary.Bytes] reports bad base64.
func BinaryFromBase64(s string) Binary { return Binary{s: s} }

// BinaryFromBytes returns a Binary holding b itself, not a copy: b must
// not be modified afterwards.
func BinaryFromBytes(b []byte) Binary {
	if len(b) == 0 {
		return Binary{}
	}
	return Binary{s: unsafe.String(unsafe.SliceData(b), len(b)), raw: true}
}

// bytes is the bytes of a b made from bytes: a slice whose capacity is
// its length, so that an append by the caller cannot write past them.
func (b Binary) bytes() []byte { return unsafe.Slice(unsafe.StringData(b.s), len(b.s)) }

// IsZero reports whether b holds no data.
func (b Binary) IsZero() bool { return b.s == "" }

// Base64 returns the data as standard, padded base64: the text b was made
// from, or its bytes encoded (a new string on each call).
func (b Binary) Base64() string {
	if !b.raw {
		return b.s
	}
	raw := b.bytes()
	var sb strings.Builder
	sb.Grow(base64.StdEncoding.EncodedLen(len(raw)))
	// Through a chunk on the stack, a whole number of 3-byte groups at a
	// time, so that the string is the one allocation.
	const in = 768
	var chunk [in / 3 * 4]byte
	for r := raw; len(r) > 0; {
		n := min(len(r), in)
		base64.StdEncoding.Encode(chunk[:], r[:n])
		sb.Write(chunk[:base64.StdEncoding.EncodedLen(n)])
		r = r[n:]
	}
	return sb.String()
}

// String returns [Binary.Base64], so that a block prints as its wire form.
func (b Binary) String() string { return b.Base64() }

// Bytes returns the data: the bytes b was made from, shared, which the
// caller must not modify; or its base64 text decoded into a new slice, or
// the decoding error.
func (b Binary) Bytes() ([]byte, error) {
	if b.raw {
		return b.bytes(), nil
	}
	return base64.StdEncoding.DecodeString(b.s)
}

// Raw returns the bytes b was made from, shared, and true; or false when
// b holds base64 text, which it leaves undecoded. It serves code that
// handles each form in its own way, streaming text through a decoder, say,
// where [Binary.Bytes] would decode it whole.
func (b Binary) Raw() ([]byte, bool) {
	if !b.raw {
		return nil, false
	}
	return b.bytes(), true
}

// Size returns the number of bytes of data, without decoding text (it may
// be megabytes of audio): exact for bytes and for valid base64, with line
// breaks or not, and what the text's letters make it otherwise.
func (b Binary) Size() int {
	if b.raw {
		return len(b.s)
	}
	s, n := b.s, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '=', ' ', '\n', '\r', '\t':
		default:
			n++
		}
	}
	return n * 6 / 8
}

// Equal reports whether b and o hold the same data, whatever their forms:
// for two texts, the same text.
func (b Binary) Equal(o Binary) bool {
	if b.raw == o.raw {
		return b.s == o.s
	}
	return b.Base64() == o.Base64()
}

// AppendBase64 appends the data's base64 to dst, as [Binary.Base64]
// would return it, without making a string of it.
func (b Binary) AppendBase64(dst []byte) []byte {
	if b.raw {
		return base64.StdEncoding.AppendEncode(dst, b.bytes())
	}
	return append(dst, b.s...)
}

// MarshalJSON writes the data as a JSON string of its base64.
func (b Binary) MarshalJSON() ([]byte, error) {
	if !b.raw {
		// Text from a peer is written as it came, escaped where it is not
		// base64, so that a bad string still makes valid JSON.
		return AppendJSONString(make([]byte, 0, len(b.s)+2), b.s), nil
	}
	out := make([]byte, 0, base64.StdEncoding.EncodedLen(len(b.s))+2)
	out = append(out, '"')
	out = b.AppendBase64(out)
	return append(out, '"'), nil
}

// errBinaryNotString is the error of a Binary's member that is not a
// JSON string.
var errBinaryNotString = errors.New("mcp: binary data is not a JSON string")

// UnmarshalJSON keeps a JSON string as base64 text, undecoded; null leaves
// b as it is, as it would a string.
func (b *Binary) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	end, f, err := jsonscan.Value(data, 0, 1)
	if err != nil {
		return err
	}
	if data[0] != '"' || end != len(data) {
		return errBinaryNotString
	}
	*b = BinaryFromBase64(jsonscan.Unquote(data, f))
	return nil
}
