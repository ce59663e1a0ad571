package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	r3sse "github.com/r3labs/sse/v2"

	"github.com/tako-mcp/tako/bench/internal/payload"
	takosse "github.com/tako-mcp/tako/internal/sse"
)

// The SSE reader kept honest. tako first read SSE with
// github.com/r3labs/sse/v2's EventStreamReader, whose split function looks
// for the blank line that ends an event from the start of its buffer on
// every read: an event that arrives in 64 KiB reads (as the network, and
// tako's budget, hand it out) is scanned again and again, quadratic in its
// size. tako's reader (internal/sse) looks at each byte once. These are
// the same streams through both, in one process.

// SSECase is one stream for both readers: its events and their bytes.
type SSECase struct {
	Name   string
	Stream []byte
	Events int
	Runs   int // measured runs of each reader
}

// sseChunk is how much of a stream one Read hands out, as a socket read
// and tako's budget do.
const sseChunk = 64 << 10

// sseMax is both readers' cap on one event: tako's default message cap.
const sseMax = 64<<20 + 4096

// SSECases are the streams: one event of a tools/call result of 1 KiB,
// 1 MiB and 16 MiB of log text (escaped as JSON, as a server sends it),
// and 10,000 small events (progress notifications) in one stream.
func SSECases() ([]SSECase, error) {
	var cases []SSECase
	for _, c := range []struct {
		name string
		n    int
		runs int
	}{{"one 1 KiB event", 1 << 10, 200}, {"one 1 MiB event", 1 << 20, 5}, {"one 16 MiB event", 16 << 20, 2}} {
		text, err := payload.Make(payload.Text, c.n)
		if err != nil {
			return nil, err
		}
		lit, _ := json.Marshal(text)
		ev := `event: message` + "\n" + `data: {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":` + string(lit) + `}]}}` + "\n\n"
		cases = append(cases, SSECase{Name: c.name, Stream: []byte(ev), Events: 1, Runs: c.runs})
	}
	var b strings.Builder
	const small = 10000
	for i := range small {
		fmt.Fprintf(&b, "id: %d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":7,\"progress\":%d,\"total\":%d}}\n\n", i, i, small)
	}
	cases = append(cases, SSECase{Name: "10,000 small events", Stream: []byte(b.String()), Events: small, Runs: 10})
	return cases, nil
}

// chunks hands out its bytes sseChunk at a time.
type chunks struct{ b []byte }

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), sseChunk)], c.b)
	c.b = c.b[n:]
	return n, nil
}

// ReadSSETako reads stream with tako's reader and returns the events.
func ReadSSETako(stream []byte) (int, error) {
	r := takosse.NewReader(&chunks{b: stream}, sseMax, false)
	defer r.Release()
	n := 0
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if len(ev.Data) == 0 {
			return n, errors.New("an event without data")
		}
		n++
	}
}

// ReadSSER3labs reads stream with r3labs/sse's EventStreamReader and
// returns the events. It only splits the stream into events (tako's
// reader also parses their fields), so it is given the easier job.
func ReadSSER3labs(stream []byte) (int, error) {
	r := r3sse.NewEventStreamReader(&chunks{b: stream}, sseMax)
	n := 0
	for {
		ev, err := r.ReadEvent()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if len(ev) > 0 {
			n++
		}
	}
}

// SSEFigure is one reader's figures on one case.
type SSEFigure struct {
	Time time.Duration // median of the runs
	Heap uint64        // least bytes allocated by a run
}

// CompareSSE runs each case through both readers in turns (tako, r3labs,
// tako, ...) and checks that both found every event.
func CompareSSE(cases []SSECase) (tako, r3 []SSEFigure, err error) {
	readers := []func([]byte) (int, error){ReadSSETako, ReadSSER3labs}
	for _, c := range cases {
		times := make([][]time.Duration, 2)
		heaps := make([]uint64, 2)
		for i, read := range readers {
			if n, err := read(c.Stream); err != nil || n != c.Events {
				return nil, nil, fmt.Errorf("%s: reader %d found %d events (%v), want %d", c.Name, i, n, err, c.Events)
			}
			heaps[i] = ^uint64(0)
		}
		for range c.Runs {
			for i, read := range readers {
				// A collection, then a run outside the figures that fills
				// the pools again (tako's reader takes its read buffer
				// and a long line's blocks from them, as it does on a
				// session that has read before), then the one measured.
				runtime.GC()
				if _, err := read(c.Stream); err != nil {
					return nil, nil, err
				}
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				start := time.Now()
				_, err := read(c.Stream)
				d := time.Since(start)
				runtime.ReadMemStats(&m1)
				if err != nil {
					return nil, nil, err
				}
				times[i] = append(times[i], d)
				heaps[i] = min(heaps[i], m1.TotalAlloc-m0.TotalAlloc)
			}
		}
		tako = append(tako, SSEFigure{median(times[0]), heaps[0]})
		r3 = append(r3, SSEFigure{median(times[1]), heaps[1]})
	}
	return tako, r3, nil
}
