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
// stream. The Conn switches to it, transparently for the engine, when the
// server refuses the initialize POST with 400, 404 or 405.
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

// fallbackToOldSSE opens the SSE stream at the Conn's URL, waits for the
// endpoint event and posts the initialize request (body) there. cause is
// why the Streamable HTTP attempt failed, reported if this fails too.
func (c *Conn) fallbackToOldSSE(r *request, body []byte, cause error) error {
	defer r.cancel() // r.ctx bounds only the switch; the stream lives with the Conn
	h := c.baseHeaders(r.ctx)
	h.Set("Accept", "text/event-stream")
	fail := func(err error) error {
		return fmt.Errorf("%w; the 2024-11-05 HTTP+SSE transport failed too: %w", cause, err)
	}
	resp, err := c.do(c.ctx, http.MethodGet, c.endpoint, nil, h, "GET")
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
		return fmt.Errorf("mcp http: %w", transport.ErrClosed)
	}
	c.wg.Add(1)
	c.mu.Unlock()
	go c.runOldStream(resp, endpoint)

	var u *url.URL
	select {
	case ev, ok := <-endpoint:
		switch {
		case !ok:
			return fail(fmt.Errorf("the SSE stream ended before its endpoint event: %w", transport.ErrConnectionLost))
		case ev.err != nil:
			return fail(ev.err)
		}
		u = ev.u
	case <-r.ctx.Done():
		return context.Cause(r.ctx)
	}
	old := &oldSSE{endpoint: u}
	c.mu.Lock()
	c.old = old
	c.sessionID = ""
	c.mu.Unlock()
	c.log.Info("mcp http: using the 2024-11-05 HTTP+SSE transport", "endpoint", u.String())
	return old.postBody(r.ctx, c, r.method, body)
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
func (c *Conn) runOldStream(resp *http.Response, endpoint chan<- endpointEvent) {
	defer c.wg.Done()
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
	if c.ctx.Err() == nil {
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
	return o.postBody(ctx, c, what, body)
}

func (o *oldSSE) postBody(ctx context.Context, c *Conn, what string, body []byte) error {
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
