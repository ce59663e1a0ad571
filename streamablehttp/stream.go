package streamablehttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// Reading the answer to a request: a JSON body, or an SSE stream that is
// resumed (legacy) or reported lost (2026-07-28) when it breaks before the
// response.

// readJSONBody reads an application/json answer: one message or a batch.
// size is the body's Content-Length, -1 if unknown.
func (c *Conn) readJSONBody(r *request, body io.Reader, size int64) {
	br := c.budget.reader(r.ctx, body)
	defer br.done()
	b, err := readBody(br, size, c.maxSize)
	switch {
	case err != nil:
		if c.pending(r) && c.ctx.Err() == nil && r.ctx.Err() == nil {
			c.fail(r, fmt.Errorf("reading the response body: %w (%w)", err, c.lostErr(r)))
		}
		return
	case len(b) > c.maxSize:
		c.fail(r, fmt.Errorf("response body over %d bytes: %w", c.maxSize, transport.ErrMessageTooLarge))
		return
	}
	msgs, err := mcp.DecodeMessages(b)
	if err != nil {
		c.fail(r, fmt.Errorf("%w: response body: %v", transport.ErrProtocol, err))
		return
	}
	for _, m := range msgs {
		c.deliver(m, r)
	}
	if r.response != nil {
		// The body has been read to its end: nothing to wait for.
		c.in.Put(r.response, nil)
	}
	if c.pending(r) {
		c.fail(r, fmt.Errorf("%w: the JSON answer to %s held no response to it", transport.ErrProtocol, r.method))
	}
}

// readBody reads r to its end, up to max+1 bytes. With the length known
// (and under the cap) the body is read into one slice of its size, instead
// of one grown as it arrives, which allocates about twice what it keeps.
func readBody(r io.Reader, size int64, max int) ([]byte, error) {
	if size < 0 || size > int64(max) {
		return io.ReadAll(io.LimitReader(r, int64(max)+1))
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	// net/http ends the body at Content-Length; one more read sees EOF
	// and lets the connection go back to the pool.
	var one [1]byte
	if n, _ := r.Read(one[:]); n > 0 {
		return nil, fmt.Errorf("%w: the body runs past its Content-Length", transport.ErrProtocol)
	}
	return b, nil
}

// lostErr is the sentinel for a request whose answer was cut off: on the
// 2026 wire the engine re-sends it (checklist §4C.1).
func (c *Conn) lostErr(r *request) error {
	if r.modern {
		return transport.ErrRequestLost
	}
	return transport.ErrConnectionLost
}

// fail delivers an error for request r, if nothing has been delivered for
// it yet.
func (c *Conn) fail(r *request, err error) {
	if r.answered.CompareAndSwap(false, true) {
		c.in.Put(nil, &transport.MessageError{ID: r.id, Err: err})
	}
}

// pending reports whether r still waits for its response on its stream.
func (c *Conn) pending(r *request) bool { return !r.answered.Load() }

// readPOSTStream reads the SSE answer to r. If it breaks before the
// response: on the 2026 wire the request is lost (the engine re-sends it);
// on the legacy wire it is resumed with GET and Last-Event-ID when the
// server gave event ids (checklist §4B.8).
func (c *Conn) readPOSTStream(r *request, body io.Reader) {
	st := &streamState{}
	err := c.readEvents(r.ctx, body, st, r, nil)
	if r.response != nil {
		c.finish(r, body)
		return
	}
	if !c.pending(r) {
		return
	}
	if r.ctx.Err() != nil {
		return
	}
	if errors.Is(err, transport.ErrMessageTooLarge) {
		c.fail(r, err)
		return
	}
	if r.modern || st.lastID == "" {
		c.fail(r, fmt.Errorf("the response stream ended before the response: %w", c.lostErr(r)))
		return
	}
	c.resume(r, st)
}

// resume re-opens the stream of r with GET + Last-Event-ID until the
// response arrives or the attempts run out.
func (c *Conn) resume(r *request, st *streamState) {
	failures := 0
	for c.pending(r) {
		if !sleep(r.ctx, c.delay(st, failures)) {
			return
		}
		resp, err := c.get(r.ctx, st.lastID, r.session)
		if err != nil {
			failures++
			var se *StatusError
			if r.ctx.Err() != nil {
				return
			}
			// A refusal, or a page that is not a stream, comes again.
			refused := errors.As(err, &se) && (se.Code == http.StatusMethodNotAllowed || se.Code == http.StatusNotFound) || errors.Is(err, transport.ErrNotMCP)
			if refused || failures > c.opts.Reconnect.Attempts {
				c.fail(r, fmt.Errorf("resuming the response stream: %w (%w)", err, transport.ErrConnectionLost))
				return
			}
			continue
		}
		failures = 0
		err = c.readEvents(r.ctx, resp.Body, st, r, nil)
		if r.response != nil {
			c.finish(r, resp.Body)
		}
		resp.Body.Close()
		if errors.Is(err, transport.ErrMessageTooLarge) {
			c.fail(r, err)
			return
		}
	}
}

// delay is how long to wait before reconnect attempt number failures+1:
// the server's retry field when it sent one (checklist §4B.8, a MUST since
// 2025-11-25), else exponential backoff.
func (c *Conn) delay(st *streamState, failures int) time.Duration {
	if st.retry > 0 && failures == 0 {
		return st.retry
	}
	d := c.opts.Reconnect.Backoff
	for i := 0; i < failures && d < c.opts.Reconnect.MaxBackoff; i++ {
		d *= 2
	}
	if st.retry > d {
		d = st.retry
	}
	return min(d, c.opts.Reconnect.MaxBackoff)
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// streamState is what survives a reconnect: the last event id and the
// server's retry delay.
type streamState struct {
	lastID string
	retry  time.Duration
}

// readEvents reads one SSE stream to its end, or, on the stream of request
// r, until r's response has passed, delivering its messages. onEvent, when
// set, sees every non-message event first (the 2024-11-05 endpoint event).
func (c *Conn) readEvents(ctx context.Context, body io.Reader, st *streamState, r *request, onEvent func(event)) error {
	br := c.budget.reader(ctx, body)
	defer br.done()
	// On the stack: a reader per response was a tenth of a call's bytes.
	// The standalone GET stream, or 2024-11-05's, waits between events
	// with a small buffer (idle).
	var er eventReader
	er.init(br, c.maxSize+4096, r == nil)
	defer er.release()
	for {
		ev, err := er.Next()
		if err != nil {
			if errors.Is(err, transport.ErrMessageTooLarge) {
				return fmt.Errorf("an event over %d bytes: %w", c.maxSize, err)
			}
			return err
		}
		if ev.hasID {
			st.lastID = ev.id
		}
		if ev.hasRetry {
			st.retry = ev.retry
		}
		if ev.typ != "" && ev.typ != "message" {
			if onEvent != nil {
				onEvent(ev)
			}
			continue
		}
		if len(bytes.TrimSpace(ev.data)) == 0 {
			continue // a priming event
		}
		msgs, err := mcp.DecodeMessages(ev.data)
		br.delivered()
		if err != nil {
			// A response gone wrong fails its call at once, as on every
			// transport; on its own request's stream it also ends the
			// stream's purpose.
			me := &transport.MessageError{Err: fmt.Errorf("%w: SSE event: %w", transport.ErrProtocol, err)}
			me.ID, _ = mcp.ResponseID(ev.data)
			if r != nil && me.ID.IsValid() && me.ID == r.id {
				c.fail(r, me.Err)
				return nil
			}
			c.in.Put(nil, me)
			continue
		}
		for _, m := range msgs {
			c.deliver(m, r)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if r != nil && r.answered.Load() {
			// The response has arrived: the server should end the
			// stream now (§4B.5); do not wait for it to.
			return nil
		}
	}
}

// deliver queues a message for Read. On the stream of request r, the
// response to r is not queued but kept in r for finish, which queues it
// once the stream has ended (or promptly, if the stream lingers).
func (c *Conn) deliver(m *mcp.Message, r *request) {
	if r != nil && m.IsResponse() && m.ID == r.id {
		r.response = m
		r.answered.Store(true)
		return
	}
	c.in.Put(m, nil)
}

// Bounds on reading a stream past its response (finish). The server
// should end the stream right after the response (checklist §4B.5).
const (
	// endWait is how long the response is held for the stream's end;
	// lingerWait replaces it once the server has been seen to keep a
	// stream open past drainWait.
	endWait    = 20 * time.Millisecond
	lingerWait = 2 * time.Millisecond
	// drainWait and maxDrain bound the reading of what follows; a
	// stream that goes on past them is cut.
	drainWait = 250 * time.Millisecond
	maxDrain  = 64 << 10
)

// queueResponse queues r's response for the engine, once, whichever of
// finish and its timer comes first.
func (c *Conn) queueResponse(r *request) {
	if r.queued.CompareAndSwap(false, true) {
		c.in.Put(r.response, nil)
	}
}

// finish ends the stream of r once its response has been read: it lets go
// of the call's context and reads what is left, bounded, and queues the
// response when the stream has ended or after endWait, whichever is first.
//
// Why: net/http puts a connection back in its pool only when the body was
// read to its end, and the caller cancels its context (and sends its next
// request) the moment its call returns. A stream closed at its response
// costs a TCP connection per call; a response queued before the stream's
// end makes the next sequential call race the end for the connection, and
// dial a new one when it loses. The server's end of stream follows its
// response within microseconds, but a loaded machine can delay it by a
// few milliseconds (2 ms was lost about once in 2,000 calls under load),
// so the response waits up to endWait for it. A server that keeps its
// streams open past drainWait is remembered, and from then on costs only
// lingerWait per response.
func (c *Conn) finish(r *request, body io.Reader) {
	r.detach()
	wait := endWait
	if c.lingers.Load() {
		wait = lingerWait
	}
	// In the common case the stream ends within microseconds and no
	// timer fires; the cut's timer is made only once the response has
	// waited, and is not stopped: runRequest cancels r as soon as finish
	// returns, so a late cut does nothing.
	t := time.AfterFunc(wait, func() {
		c.queueResponse(r)
		time.AfterFunc(drainWait-wait, r.cancel)
	})
	_, err := io.Copy(io.Discard, io.LimitReader(body, maxDrain))
	t.Stop()
	c.queueResponse(r)
	if err != nil && r.ctx.Err() != nil && c.ctx.Err() == nil {
		c.lingers.Store(true) // cut at drainWait
	}
}
