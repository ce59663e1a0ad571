package inspect

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// netEntry is one HTTP request of an http server, for the network view:
// what went, what came back, and the SSE events of a streamed answer.
type netEntry struct {
	N      int64             `json:"n"`
	Server string            `json:"server"`
	Time   time.Time         `json:"time"`
	Method string            `json:"method"`
	URL    string            `json:"url"`
	RPC    string            `json:"rpc,omitempty"` // the JSON-RPC method(s) of the body
	Req    map[string]string `json:"reqHeaders,omitempty"`
	Status int               `json:"status,omitempty"`
	Resp   map[string]string `json:"respHeaders,omitempty"`
	// Session is the Mcp-Session-Id sent or received.
	Session string  `json:"session,omitempty"`
	Ms      float64 `json:"ms,omitempty"` // until the headers came
	Size    int64   `json:"size"`         // response bytes read so far
	Done    bool    `json:"done"`
	DoneMs  float64 `json:"doneMs,omitempty"`
	Err     string  `json:"error,omitempty"`
	// Events are the SSE events of a text/event-stream answer (at most
	// maxSSEEvents; Dropped counts the rest).
	Events  []sseEvent `json:"events,omitempty"`
	Dropped int        `json:"droppedEvents,omitempty"`
	Preview string     `json:"preview,omitempty"` // the start of a body that is not a stream
}

// sseEvent is one event of an SSE answer.
type sseEvent struct {
	ID    string  `json:"id,omitempty"`
	Event string  `json:"event,omitempty"`
	Size  int     `json:"size"`
	Data  string  `json:"data,omitempty"` // its start
	Retry string  `json:"retry,omitempty"`
	Ms    float64 `json:"ms"`
}

// netLog keeps the network entries, oldest dropped first.
type netLog struct {
	mu      sync.Mutex
	max     int
	n       int64
	entries []*netEntry
}

func newNetLog(max int) *netLog { return &netLog{max: max} }

func (l *netLog) add(e *netEntry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	e.N = l.n
	l.entries = append(l.entries, e)
	if len(l.entries) > l.max {
		l.entries = append(l.entries[:0:0], l.entries[len(l.entries)-l.max:]...)
	}
}

// snapshot is a copy of e safe to marshal while it is being updated.
func (l *netLog) snapshot(e *netEntry) netEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := *e
	c.Events = append([]sseEvent(nil), e.Events...)
	return c
}

func (l *netLog) list(server string, after int64) []netEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []netEntry
	for _, e := range l.entries {
		if e.N > after && (server == "" || e.Server == server) {
			c := *e
			c.Events = append([]sseEvent(nil), e.Events...)
			out = append(out, c)
		}
	}
	return out
}

// update changes e under the log's lock.
func (l *netLog) update(e *netEntry, f func(*netEntry)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f(e)
}

// netRecorder is the RoundTripper wrapper of one http server
// (dial.Server.WrapRoundTripper).
type netRecorder struct {
	next   http.RoundTripper
	ins    *Inspector
	server string
	// onChallenge is told of a 401 or 403 with WWW-Authenticate, the
	// first step of an OAuth login.
	onChallenge func(*http.Response)
}

// shownRequestHeaders and shownResponseHeaders are the headers the view
// shows with their values (Authorization and DPoP masked), beside every
// Mcp-* header (Mcp-Param-* included). plumbingHeaders are Go's own,
// left out. Any other request header is one the user configured (an API
// key, as often as not): the view shows its name, that it was sent, and
// masks its value.
var (
	shownRequestHeaders  = []string{"Accept", "Content-Type", "Last-Event-Id", "Authorization", "Dpop"}
	shownResponseHeaders = []string{"Content-Type", "Mcp-Session-Id", "Www-Authenticate", "Retry-After", "Location", "Content-Length"}
	plumbingHeaders      = []string{"User-Agent", "Accept-Encoding", "Content-Length"}
)

// requestHeader is what the view shows of a request header k, and
// whether it shows it at all.
func requestHeader(k string, v []string) (string, bool) {
	joined := strings.Join(v, ", ")
	switch {
	case keepHeader(k, shownRequestHeaders), strings.HasPrefix(k, "Mcp-"):
		return maskHeader(k, joined), true
	case keepHeader(k, plumbingHeaders):
		return "", false
	}
	return mask(joined), true
}

func (r *netRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	e := &netEntry{Server: r.server, Time: time.Now(), Method: req.Method, URL: stripQuery(req.URL.String()), Req: map[string]string{}}
	for k, v := range req.Header {
		ck := http.CanonicalHeaderKey(k)
		if shown, ok := requestHeader(ck, v); ok {
			e.Req[ck] = shown
		}
	}
	e.Session = req.Header.Get("Mcp-Session-Id")
	if req.GetBody != nil && req.Body != nil {
		if b, err := req.GetBody(); err == nil {
			head, _ := io.ReadAll(io.LimitReader(b, 64<<10))
			b.Close()
			e.RPC = rpcMethods(head)
		}
	}
	r.ins.net.add(e)
	r.ins.events.publish("net", r.ins.net.snapshot(e))
	resp, err := r.next.RoundTrip(req)
	now := time.Now()
	if err != nil {
		r.ins.net.update(e, func(e *netEntry) {
			e.Err, e.Done, e.Ms = err.Error(), true, ms(now.Sub(e.Time))
		})
		r.ins.events.publish("net", r.ins.net.snapshot(e))
		return nil, err
	}
	r.ins.net.update(e, func(e *netEntry) {
		e.Status, e.Ms, e.Resp = resp.StatusCode, ms(now.Sub(e.Time)), map[string]string{}
		for k, v := range resp.Header {
			if keepHeader(k, shownResponseHeaders) {
				e.Resp[k] = strings.Join(v, ", ")
			}
		}
		if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
			e.Session = s
		}
	})
	r.ins.events.publish("net", r.ins.net.snapshot(e))
	if (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) && resp.Header.Get("WWW-Authenticate") != "" && r.onChallenge != nil {
		r.onChallenge(resp)
	}
	stream := strings.HasPrefix(strings.ToLower(resp.Header.Get("Content-Type")), "text/event-stream")
	resp.Body = &watchedBody{rc: resp.Body, r: r, e: e, stream: stream}
	return resp, nil
}

func keepHeader(k string, shown []string) bool {
	for _, s := range shown {
		if strings.EqualFold(s, k) {
			return true
		}
	}
	return false
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// stripQuery leaves a URL's query and credentials out: they may hold
// secrets.
func stripQuery(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	if at := strings.Index(u, "@"); at >= 0 {
		if sch := strings.Index(u, "://"); sch >= 0 && sch < at && !strings.Contains(u[sch+3:at], "/") {
			u = u[:sch+3] + u[at+1:]
		}
	}
	return u
}

// rpcMethods names the JSON-RPC method(s) in a request body, or "response"
// for an answer to the server's request.
func rpcMethods(body []byte) string {
	body = bytes.TrimSpace(body)
	var one struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	if len(body) > 0 && body[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(body, &batch) != nil {
			return "batch"
		}
		var names []string
		for _, m := range batch {
			names = append(names, rpcMethods(m))
		}
		return strings.Join(names, ", ")
	}
	if json.Unmarshal(body, &one) != nil {
		return ""
	}
	if one.Method == "" {
		return "response " + string(one.ID)
	}
	return one.Method
}

// watchedBody counts what is read of a response, parses the events of an
// SSE answer as they pass, and marks the entry done when the body ends.
type watchedBody struct {
	rc     io.ReadCloser
	r      *netRecorder
	e      *netEntry
	stream bool
	line   []byte // an SSE line being read
	cur    sseEvent
	data   bytes.Buffer
	ended  sync.Once
	head   bytes.Buffer // a non-stream body's start
	fields bool         // the event being read has a field
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		chunk := p[:n]
		b.r.ins.net.update(b.e, func(e *netEntry) { e.Size += int64(n) })
		if b.stream {
			b.scan(chunk)
		} else if b.head.Len() < maxPreview {
			b.head.Write(chunk[:min(len(chunk), maxPreview-b.head.Len())])
		}
	}
	if err != nil {
		b.end(err)
	}
	return n, err
}

func (b *watchedBody) Close() error {
	err := b.rc.Close()
	b.end(nil)
	return err
}

func (b *watchedBody) end(err error) {
	b.ended.Do(func() {
		b.r.ins.net.update(b.e, func(e *netEntry) {
			e.Done, e.DoneMs = true, ms(time.Since(e.Time))
			if err != nil && err != io.EOF {
				e.Err = err.Error()
			}
			if !b.stream {
				e.Preview = b.head.String()
			}
		})
		b.r.ins.events.publish("net", b.r.ins.net.snapshot(b.e))
	})
}

// scan feeds the SSE parser a chunk: lines end at \n (a \r before it is
// dropped); a blank line ends an event. Only the start of each event's
// data is kept.
func (b *watchedBody) scan(chunk []byte) {
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			if len(b.line) < maxPreview {
				b.line = append(b.line, chunk[:min(len(chunk), maxPreview-len(b.line))]...)
			}
			b.cur.Size += len(chunk)
			return
		}
		if len(b.line) < maxPreview {
			b.line = append(b.line, chunk[:min(i, maxPreview-len(b.line))]...)
		}
		b.cur.Size += i
		b.field(bytes.TrimSuffix(b.line, []byte("\r")))
		b.line = b.line[:0]
		chunk = chunk[i+1:]
	}
}

func (b *watchedBody) field(line []byte) {
	if len(line) == 0 {
		// A blank line ends an event; one of comments alone is none.
		if b.fields {
			ev := b.cur
			ev.Data = b.data.String()
			ev.Ms = ms(time.Since(b.e.Time))
			b.r.ins.net.update(b.e, func(e *netEntry) {
				if len(e.Events) < maxSSEEvents {
					e.Events = append(e.Events, ev)
				} else {
					e.Dropped++
				}
			})
			b.r.ins.events.publish("net-sse", map[string]any{"n": b.e.N, "server": b.e.Server, "event": ev})
		}
		b.cur, b.data, b.fields = sseEvent{}, bytes.Buffer{}, false
		return
	}
	if line[0] != ':' {
		b.fields = true
	}
	name, value, _ := bytes.Cut(line, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	switch string(name) {
	case "id":
		b.cur.ID = string(value)
	case "event":
		b.cur.Event = string(value)
	case "retry":
		b.cur.Retry = string(value)
	case "data":
		if b.data.Len() < maxPreview {
			if b.data.Len() > 0 {
				b.data.WriteByte('\n')
			}
			b.data.Write(value[:min(len(value), maxPreview-b.data.Len())])
		}
	}
}
