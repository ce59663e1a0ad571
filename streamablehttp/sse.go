package streamablehttp

import (
	"io"
	"time"

	"github.com/tako-mcp/tako/internal/sse"
)

// The SSE reader is internal/sse's, a package of its own so that bench/
// can hold it to the reader this transport first used
// (github.com/r3labs/sse/v2): see its design note. This is its face here.

// event is one Server-Sent Event, its fields parsed per the WHATWG rules.
type event struct {
	typ      string // "" means "message"
	data     []byte // data lines joined with \n; owned by the event
	id       string
	hasID    bool
	retry    time.Duration
	hasRetry bool
}

// eventReader is sse.Reader with events of this package's shape.
type eventReader struct{ r sse.Reader }

// init makes er read events of at most maxEvent bytes from body. idle
// says the stream may sit for a long time between events (the standalone
// GET stream): it waits for each with a small buffer.
func (er *eventReader) init(body io.Reader, maxEvent int, idle bool) {
	er.r.Init(body, maxEvent, idle)
}

// Next returns the next complete event; see sse.Reader.Next.
func (er *eventReader) Next() (event, error) {
	e, err := er.r.Next()
	return event{typ: e.Type, data: e.Data, id: e.ID, hasID: e.HasID, retry: e.Retry, hasRetry: e.HasRetry}, err
}

// release gives the read buffer back; er must not be used after.
func (er *eventReader) release() { er.r.Release() }
