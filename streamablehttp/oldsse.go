package streamablehttp

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// The 2024-11-05 HTTP+SSE transport (checklist §4D): a GET opens one SSE
// stream whose first event, "endpoint", names the URL to POST every client
// message to; every server message (responses included) arrives on that
// stream. When the server refuses the initialize POST with 400, 404 or 405,
// the Conn reports transport.ErrLegacyWire and the engine, which makes the
// era decisions (DESIGN.md: the wire knows, the engine acts), asks it to
// switch (SwitchWire) and sends the initialize again.
//
// The endpoint event is the server's word, and the server may be hostile:
// every message, with the caller's headers and credentials, goes where it
// says. So it must name the origin of the URL the caller gave (scheme, host
// and port); one on another origin is refused with *EndpointOriginError and
// the stream closed, before any message is posted, as a redirect to another
// origin is (DESIGN.md rule 6). Using it without credentials was weighed
// and dropped: the spec's endpoint is the server's own message path, the
// SDKs' servers send a path on their own origin, a server that needs the
// caller's credentials would fail there anyway, and the caller's Header is
// as much a secret (an API key) as the token, so "without credentials"
// would mean without the caller's headers too: a mode nobody has asked for.

// oldSSE is the state of a Conn switched to the 2024-11-05 transport.
type oldSSE struct {
	endpoint *url.URL // where messages are posted
}

// SwitchWire implements transport.Informed: the engine met
// transport.ErrLegacyWire on the initialize (the POST refused with 400, 404
// or 405) and asks for the 2024-11-05 HTTP+SSE transport at the same URL.
// It opens the SSE stream and waits, bounded by ctx, for its endpoint
// event; every message from then on is posted there. The stream lives with
// the Conn. Errors: a *StatusError or *ContentTypeError for a GET that is
// not an event stream, an *EndpointOriginError for an endpoint on another
// origin, transport.ErrConnectionLost for a stream that ended first.
func (c *Conn) SwitchWire(ctx context.Context) error {
	c.mu.Lock()
	switched := c.old != nil
	c.mu.Unlock()
	if switched {
		return nil
	}
	u, err := c.openOldStream(ctx)
	if err != nil {
		return fmt.Errorf("mcp http: the 2024-11-05 HTTP+SSE transport: %w", err)
	}
	c.mu.Lock()
	c.old = &oldSSE{endpoint: u}
	c.sessionID = ""
	c.mu.Unlock()
	c.log.Info("mcp http: using the 2024-11-05 HTTP+SSE transport", "endpoint", u.String())
	return nil
}

// openOldStream opens the SSE stream at the Conn's URL and returns the
// endpoint its first event names. Until then ctx bounds the stream too;
// from then on it lives with the Conn.
func (c *Conn) openOldStream(ctx context.Context) (*url.URL, error) {
	sctx, cancel := context.WithCancel(c.ctx)
	stop := context.AfterFunc(ctx, cancel)
	fail := func(err error) (*url.URL, error) {
		stop()
		cancel()
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	h := c.baseHeaders(ctx)
	h.Set("Accept", "text/event-stream")
	resp, err := c.do(sctx, http.MethodGet, c.endpoint, nil, h, "GET")
	if err != nil {
		return fail(err)
	}
	if resp.StatusCode != http.StatusOK {
		return fail(&StatusError{Code: resp.StatusCode, Body: readErrorBody(resp), Method: "GET"})
	}
	if ct := mediaType(resp.Header.Get("Content-Type")); ct != "text/event-stream" {
		// A web site's page at the URL (its POST refused with 405).
		return fail(&ContentTypeError{Code: resp.StatusCode, ContentType: ct, Body: readErrorBody(resp), Method: "GET"})
	}
	endpoint := make(chan endpointEvent, 1)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		resp.Body.Close()
		return fail(fmt.Errorf("mcp http: %w", transport.ErrClosed))
	}
	c.wg.Add(1)
	c.mu.Unlock()
	go c.runOldStream(resp, endpoint, cancel)
	ev, ok := <-endpoint // the stream ends when sctx does
	switch {
	case !ok:
		return fail(fmt.Errorf("the SSE stream ended before its endpoint event: %w", transport.ErrConnectionLost))
	case ev.err != nil:
		return fail(ev.err)
	case !stop():
		// ctx ended as the event came, and took the stream with it.
		return fail(context.Cause(ctx))
	}
	return ev.u, nil
}

// EndpointOriginError is a 2024-11-05 endpoint event the Conn refused: it
// named another origin than the URL the Conn was given, and every message
// posted there would carry the caller's headers and credentials.
type EndpointOriginError struct {
	From, To string // origins, scheme://host:port: the Conn's and the event's
}

func (e *EndpointOriginError) Error() string {
	return fmt.Sprintf("mcp http: refusing the HTTP+SSE endpoint event of %s: it names another origin, %s, and credentials and headers stay with their origin", e.From, e.To)
}

// endpointEvent is what runOldStream makes of the endpoint event: the URL
// to post to, or why it was refused.
type endpointEvent struct {
	u   *url.URL
	err error
}

// runOldStream reads the 2024-11-05 SSE stream. Its end ends the
// connection (the transport has no resumption). An endpoint event on
// another origin ends it at once.
func (c *Conn) runOldStream(resp *http.Response, endpoint chan<- endpointEvent, cancel context.CancelFunc) {
	defer c.wg.Done()
	defer cancel()
	defer resp.Body.Close()
	sent, refused := false, false
	base := resp.Request.URL
	err := c.readEvents(c.ctx, resp.Body, &streamState{}, nil, func(ev event) {
		if ev.typ != "endpoint" || sent {
			return
		}
		u, err := base.Parse(strings.TrimSpace(string(ev.data)))
		if err != nil {
			c.log.Warn("mcp http: bad endpoint event", "data", string(ev.data), "err", err)
			return
		}
		sent = true
		if from, to := origin(c.endpoint), origin(u); from != to {
			refused = true
			endpoint <- endpointEvent{err: &EndpointOriginError{From: from, To: to}}
			// Nothing more is read from a server that tried: closing the
			// body ends readEvents at its next read.
			resp.Body.Close()
			return
		}
		endpoint <- endpointEvent{u: u}
	})
	if !sent {
		close(endpoint)
	}
	if refused {
		return // the fallback reports it; there is no connection to lose
	}
	if resp.Request.Context().Err() == nil {
		// Neither Close nor a failed switch (whose error says why) ended
		// it: the server did, and with it the connection.
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		c.in.End(fmt.Errorf("mcp http: the HTTP+SSE stream ended: %v: %w", err, transport.ErrConnectionLost))
	}
}

// post sends one message to the endpoint.
func (o *oldSSE) post(ctx context.Context, c *Conn, msg *mcp.Message, body []byte) error {
	what := msg.Method
	if what == "" {
		what = "response"
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel)
	defer stop()
	h := c.baseHeaders(ctx)
	h.Set("Content-Type", "application/json")
	resp, err := c.do(rctx, http.MethodPost, o.endpoint, body, h, what)
	if err != nil {
		return err
	}
	b := readErrorBody(resp)
	if resp.StatusCode/100 != 2 {
		return &StatusError{Code: resp.StatusCode, Body: b, Method: what}
	}
	return nil
}
