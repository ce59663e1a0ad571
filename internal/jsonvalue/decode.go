// Package jsonvalue decodes JSON into the values encoding/json makes for
// an any, in one pass on internal/jsonscan. They are what the schema
// validator checks (a tool's structured result on every call, a
// registry tool's arguments) and what a gRPC call's arguments are built
// from.
//
// Why not json.Unmarshal: it reads its input twice, once to check it and
// once to decode it, each a byte at a time through its state machine.
// That was two fifths of checking a structured result against its output
// schema. Decode is 1.66× faster and allocates 15% less
// (BenchmarkDecode).
package jsonvalue

import (
	"fmt"
	"strconv"

	"github.com/tako-mcp/tako/internal/jsonscan"
)

// Decode returns the value encoding/json gives an any for JSON data
// (map[string]any, []any, string, float64, bool or nil), by its rules:
// the grammar exactly, the last of a repeated member, invalid UTF-8 and
// unpaired surrogates as U+FFFD, at most jsonscan.MaxDepth levels, and a
// syntax error reported before a number that float64 cannot hold.
// FuzzDecodeMatchesStd holds it to them. Its syntax errors are
// jsonscan's, encoding/json's words with the offset of the bad byte.
func Decode(data []byte) (any, error) {
	d := decoder{data: data}
	v, end, err := d.value(jsonscan.Space(data, 0), 0)
	if err == nil {
		err = jsonscan.Finish(data, end)
	}
	if err != nil {
		return nil, err
	}
	if d.numErr != nil {
		return nil, d.numErr
	}
	return v, nil
}

// decoder is one Decode's state.
type decoder struct {
	data []byte
	// numErr is the first number out of float64's range. Decoding goes
	// on, so that a syntax error after it is the one reported, as
	// encoding/json checks the whole input before it decodes.
	numErr error
}

// value decodes the value at data[i], inside depth arrays and objects,
// and returns it with the offset after it.
func (d *decoder) value(i, depth int) (any, int, error) {
	data := d.data
	if i < len(data) {
		switch data[i] {
		case '{', '[':
			if depth >= jsonscan.MaxDepth {
				// One level too many: the scanner words the error.
				end, _, err := jsonscan.Value(data, i, depth)
				return nil, end, err
			}
			if data[i] == '{' {
				return d.object(i, depth+1)
			}
			return d.array(i, depth+1)
		}
	}
	end, f, err := jsonscan.Value(data, i, depth)
	if err != nil {
		return nil, end, err
	}
	switch data[i] {
	case '"':
		return jsonscan.Unquote(data[i:end], f), end, nil
	case 't':
		return true, end, nil
	case 'f':
		return false, end, nil
	case 'n':
		return nil, end, nil
	}
	x, err := strconv.ParseFloat(string(data[i:end]), 64)
	if err != nil {
		// The grammar is checked, so only the range is left to fail.
		if d.numErr == nil {
			d.numErr = fmt.Errorf("json: cannot unmarshal number %s into Go value of type float64", data[i:end])
		}
		return nil, end, nil
	}
	return x, end, nil
}

// object decodes the object whose opening brace is data[i], at level
// depth.
func (d *decoder) object(i, depth int) (any, int, error) {
	m := map[string]any{}
	i, empty := jsonscan.Open(d.data, i)
	for more := !empty; more; {
		key, f, v, err := jsonscan.Key(d.data, i)
		if err != nil {
			return nil, v, err
		}
		// The key's literal, quotes included, starts at i.
		name := jsonscan.Unquote(d.data[i:i+len(key)+2], f)
		x, end, err := d.value(v, depth)
		if err != nil {
			return nil, end, err
		}
		m[name] = x
		if i, more, err = jsonscan.Next(d.data, end, '}'); err != nil {
			return nil, i, err
		}
	}
	return m, i, nil
}

// array decodes the array whose opening bracket is data[i], at level
// depth. An empty array is an empty slice, not nil, as encoding/json
// makes it.
func (d *decoder) array(i, depth int) (any, int, error) {
	a := []any{}
	i, empty := jsonscan.Open(d.data, i)
	for more := !empty; more; {
		x, end, err := d.value(i, depth)
		if err != nil {
			return nil, end, err
		}
		a = append(a, x)
		if i, more, err = jsonscan.Next(d.data, end, ']'); err != nil {
			return nil, i, err
		}
	}
	return a, i, nil
}
