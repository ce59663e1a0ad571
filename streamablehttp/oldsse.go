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
	endpoint := make(chan *url.URL, 1)
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
	case u = <-endpoint:
		if u == nil {
			return fail(fmt.Errorf("the SSE stream ended before its endpoint event: %w", transport.ErrConnectionLost))
		}
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

// runOldStream reads the 2024-11-05 SSE stream. Its end ends the
// connection (the transport has no resumption).
func (c *Conn) runOldStream(resp *http.Response, endpoint chan<- *url.URL) {
	defer c.wg.Done()
	defer resp.Body.Close()
	sent := false
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
		endpoint <- u
	})
	if !sent {
		close(endpoint)
	}
	if c.ctx.Err() == nil {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		c.q.fail(fmt.Errorf("mcp http: the HTTP+SSE stream ended: %v: %w", err, transport.ErrConnectionLost))
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
