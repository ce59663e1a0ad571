package apiclient

import (
	"bytes"
	"context"
	"hash/maphash"
	"io"
	"net/http"
	"sync"

	"github.com/tako-mcp/tako/orchestrator"
)

// ToolsJSON keeps the JSON of the tool list a provider last sent. An agent
// sends the same tools on every turn, and encoding/json compacts each raw
// schema every time it marshals it: with 10,000 tools of 2 KB schemas a
// turn spent 210 ms and 37 MB in json.Marshal (bench/, the scale suite).
// A list is known again by a hash of its names, descriptions and schemas,
// a few milliseconds for those 20 MB; the cache holds only the JSON.
// The zero value is ready; it is safe for concurrent use.
type ToolsJSON struct {
	mu   sync.Mutex
	seed maphash.Seed
	sum  uint64
	n    int
	json []byte
}

// Get returns the JSON of tools: the cached one if tools are those of the
// last call, else what encode returns, which is cached. The result must
// not be modified.
func (c *ToolsJSON) Get(tools []orchestrator.ToolDef, encode func() ([]byte, error)) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.json == nil {
		c.seed = maphash.MakeSeed()
	}
	var h maphash.Hash
	h.SetSeed(c.seed)
	for i := range tools {
		t := &tools[i]
		// Each part with its length, so that no two lists write the
		// same bytes.
		writeLen(&h, len(t.Name))
		h.WriteString(t.Name)
		writeLen(&h, len(t.Description))
		h.WriteString(t.Description)
		writeLen(&h, len(t.InputSchema))
		h.Write(t.InputSchema)
	}
	sum := h.Sum64()
	if c.json != nil && sum == c.sum && len(tools) == c.n {
		return c.json, nil
	}
	b, err := encode()
	if err != nil {
		return nil, err
	}
	c.sum, c.n, c.json = sum, len(tools), b
	return b, nil
}

func writeLen(h *maphash.Hash, n int) {
	var b [8]byte
	for i := range b {
		b[i] = byte(n >> (8 * i))
	}
	h.Write(b[:])
}

// Body is a request body in pieces, sent one after another: a turn's own
// JSON around the cached JSON of its tools, which is sent from the cache
// rather than copied into every request (20 MB a turn for 10,000 tools).
type Body [][]byte

// Len is the body's size in bytes.
func (b Body) Len() int {
	n := 0
	for _, p := range b {
		n += len(p)
	}
	return n
}

// Bytes returns the body in one slice.
func (b Body) Bytes() []byte {
	out := make([]byte, 0, b.Len())
	for _, p := range b {
		out = append(out, p...)
	}
	return out
}

// Reader reads the body from its start.
func (b Body) Reader() io.Reader {
	rs := make([]io.Reader, len(b))
	for i, p := range b {
		rs[i] = bytes.NewReader(p)
	}
	return io.MultiReader(rs...)
}

// NewRequest is http.NewRequestWithContext with b as the body, its length
// set and GetBody able to read it again.
func (b Body) NewRequest(ctx context.Context, method, url string) (*http.Request, error) {
	r, err := http.NewRequestWithContext(ctx, method, url, b.Reader())
	if err != nil {
		return nil, err
	}
	r.ContentLength = int64(b.Len())
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(b.Reader()), nil }
	return r, nil
}

// Splice adds the member "name":value to the end of the JSON object obj,
// which must not be empty ({}), without copying either. value is not
// checked: it is JSON this package's caller made.
func Splice(obj []byte, name string, value []byte) Body {
	return Body{obj[:len(obj)-1], []byte(`,"` + name + `":`), value, []byte("}")}
}
