package streamablehttp

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/tako-mcp/tako/mcp"
)

// The standalone GET stream of a legacy session (checklist §4B.7), and GET
// requests in general (it also resumes a POST stream, stream.go).

// get opens a GET stream (the standalone stream, or a resumption).
func (c *Conn) get(ctx context.Context, lastID, sid string) (*http.Response, error) {
	h := c.baseHeaders(ctx)
	h.Set("Accept", "text/event-stream")
	c.mu.Lock()
	version := c.version
	c.mu.Unlock()
	if sid != "" {
		h.Set("Mcp-Session-Id", sid)
	}
	if version != "" {
		h.Set("Mcp-Protocol-Version", version)
	}
	if lastID != "" {
		h.Set("Last-Event-ID", lastID)
	}
	resp, err := c.do(ctx, http.MethodGet, c.endpoint, nil, h, "GET")
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &StatusError{Code: resp.StatusCode, Body: readErrorBody(resp), Method: "GET"}
	}
	if ct := mediaType(resp.Header.Get("Content-Type")); ct != "text/event-stream" {
		return nil, &ContentTypeError{Code: resp.StatusCode, ContentType: ct, Body: readErrorBody(resp), Method: "GET"}
	}
	return resp, nil
}

// startGET opens the standalone GET stream of a legacy session, after
// notifications/initialized (checklist §4B.7).
// The returned channel is closed once the first GET has been answered (or
// has failed).
func (c *Conn) startGET() <-chan struct{} {
	opened := make(chan struct{})
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.old != nil || c.version == "" || mcp.IsModernVersion(c.version) {
		close(opened)
		return opened
	}
	if c.getCancel != nil {
		c.getCancel()
	}
	ctx, cancel := context.WithCancel(c.ctx)
	c.getCancel = cancel
	sid := c.sessionID
	c.wg.Add(1)
	go c.runGET(ctx, sid, opened)
	return opened
}

// runGET holds the standalone GET stream: 405 means the server offers
// none (never retried); a drop is re-opened after the server's retry delay
// or with backoff, resuming from the last event id.
func (c *Conn) runGET(ctx context.Context, sid string, opened chan struct{}) {
	defer c.wg.Done()
	var once sync.Once
	signal := func() { once.Do(func() { close(opened) }) }
	defer signal()
	st := &streamState{}
	failures := 0
	for {
		resp, err := c.get(ctx, st.lastID, sid)
		signal()
		if ctx.Err() != nil {
			if err == nil {
				resp.Body.Close()
			}
			return
		}
		if err != nil {
			var se *StatusError
			if errors.As(err, &se) && (se.Code == http.StatusMethodNotAllowed || se.Code == http.StatusNotFound) {
				c.log.Debug("mcp http: no standalone GET stream", "status", se.Code)
				return
			}
			var cte *ContentTypeError
			if errors.As(err, &cte) {
				// Not a stream, and asking again brings the same page.
				c.log.Debug("mcp http: no standalone GET stream", "err", err)
				return
			}
			failures++
			if c.opts.Reconnect.Attempts < 0 || failures > c.opts.Reconnect.Attempts {
				c.log.Warn("mcp http: giving up the GET stream", "err", err)
				return
			}
			c.log.Debug("mcp http: GET stream failed; retrying", "err", err, "attempt", failures)
			if !sleep(ctx, c.delay(&streamState{}, failures-1)) {
				return
			}
			continue
		}
		failures = 0
		c.readEvents(ctx, resp.Body, st, nil, nil)
		resp.Body.Close()
		if ctx.Err() != nil || c.opts.Reconnect.Attempts < 0 {
			return
		}
		if !sleep(ctx, c.delay(st, 0)) {
			return
		}
	}
}
