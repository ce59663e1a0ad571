package inspect

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/tako-mcp/tako/mcp"
)

// entry is one message (or, for gRPC, one operation) in the history. The
// page gets the summary (every field but body) live, and the body when a
// person expands the entry.
type entry struct {
	Seq    int64     `json:"seq"`
	Server string    `json:"server"`
	Time   time.Time `json:"time"`
	Dir    string    `json:"dir"`
	Kind   string    `json:"kind"`
	Method string    `json:"method,omitempty"`
	ID     string    `json:"id,omitempty"`
	// Group is the Seq of the entry that started the conversation this
	// one belongs to (its own Seq when it starts one), and Label names
	// the conversation ("tools/call echo").
	Group int64  `json:"group"`
	Label string `json:"label,omitempty"`
	// Name is a tools/call's or prompts/get's name, a read's URI.
	Name string `json:"name,omitempty"`
	Size int    `json:"size"`
	// Ms is, for a response, the time since its request.
	Ms        float64    `json:"ms,omitempty"`
	Error     *mcp.Error `json:"error,omitempty"`
	Truncated bool       `json:"truncated,omitempty"`
	body      []byte
}

// pendingReq is a request waiting for its response: its group, when it
// went, what it was.
type pendingReq struct {
	group  int64
	at     time.Time
	method string
	dir    string
	token  string // its progress token
}

// history keeps the entries of every server in order, bounded by bytes
// and by count (the oldest go first), and groups each message with the
// conversation it belongs to.
type history struct {
	mu         sync.Mutex
	maxBytes   int
	maxEntries int
	seq        int64
	entries    []*entry // oldest first
	bytes      int
	dropped    int64

	// Per server, what grouping needs: requests awaiting answers by id
	// and direction, progress tokens, retries after input_required, tasks.
	pending  map[string]map[string]*pendingReq // server -> dir+id
	progress map[string]map[string]int64       // server -> token -> group
	retries  map[string]map[string]int64       // server -> requestState -> group
	tasks    map[string]map[string]int64       // server -> task id -> group
	labels   map[int64]string
}

func newHistory(maxBytes, maxEntries int) *history {
	return &history{
		maxBytes: maxBytes, maxEntries: maxEntries,
		pending:  map[string]map[string]*pendingReq{},
		progress: map[string]map[string]int64{},
		retries:  map[string]map[string]int64{},
		tasks:    map[string]map[string]int64{},
		labels:   map[int64]string{},
	}
}

func sub[V any](m map[string]map[string]V, k string) map[string]V {
	s, ok := m[k]
	if !ok {
		s = map[string]V{}
		m[k] = s
	}
	return s
}

// addMessage records m, sent (dirOut) or received (dirIn) by server.
func (h *history) addMessage(server, dir string, m *mcp.Message) *entry {
	body := m.AppendJSON(nil)
	e := &entry{Server: server, Time: time.Now(), Dir: dir, Kind: kindOf(m), Method: m.Method, Size: len(body), Error: m.Error}
	if m.ID.IsValid() {
		e.ID = string(m.ID.AppendJSON(nil))
	}
	f := factsOf(m)
	e.Name = f.name
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	e.Seq = h.seq
	h.group(e, m, f)
	h.keep(e, body)
	return e
}

// addOp records an operation of a transport without messages.
func (h *history) addOp(server, method, name string, body []byte, d time.Duration, rpcErr *mcp.Error) *entry {
	e := &entry{Server: server, Time: time.Now(), Dir: dirOp, Kind: "operation", Method: method, Name: name, Size: len(body), Ms: float64(d.Microseconds()) / 1000, Error: rpcErr}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	e.Seq, e.Group = h.seq, h.seq
	e.Label = label(method, name)
	h.keep(e, body)
	return e
}

func label(method, name string) string {
	if name != "" {
		return method + " " + name
	}
	return method
}

// group finds the conversation e belongs to. A request starts one,
// unless it retries a request answered with input_required (its
// requestState says which) or names a task; its response, its progress,
// its cancellation, and the requests the server makes while a call of
// the client's is pending (elicitation, sampling, roots: a
// multi-round-trip call) join it.
func (h *history) group(e *entry, m *mcp.Message, f messageFacts) {
	srv := e.Server
	pend := sub(h.pending, srv)
	e.Group = e.Seq
	switch {
	case m.IsRequest():
		switch {
		case f.requestState != "" && sub(h.retries, srv)[f.requestState] != 0:
			e.Group = h.retries[srv][f.requestState]
		case f.taskID != "" && sub(h.tasks, srv)[f.taskID] != 0:
			e.Group = h.tasks[srv][f.taskID]
		case e.Dir == dirIn:
			// The server asks while the client waits: the latest call
			// of the client's that can ask (a ping cannot).
			var best *pendingReq
			for _, p := range pend {
				if p.dir == dirOut && p.method != mcp.MethodPing && p.method != mcp.MethodSubscriptionsListen && (best == nil || p.at.After(best.at)) {
					best = p
				}
			}
			if best != nil {
				e.Group = best.group
			}
		}
		if e.Group == e.Seq {
			h.labels[e.Seq] = label(m.Method, f.name)
		}
		p := &pendingReq{group: e.Group, at: e.Time, method: m.Method, dir: e.Dir}
		if f.progressToken != "" && f.progressToken != "null" {
			p.token = f.progressToken
			sub(h.progress, srv)[f.progressToken] = e.Group
		}
		if len(pend) >= maxGrouped {
			clear(pend) // requests never answered: a bound, not a session's
		}
		pend[e.Dir+e.ID] = p
	case m.IsNotification():
		switch {
		case m.Method == mcp.NotificationProgress:
			if g := sub(h.progress, srv)[f.progressToken]; g != 0 {
				e.Group = g
			}
		case m.Method == mcp.NotificationCancelled:
			// A side cancels a request it sent: it gets no answer.
			if p := pend[e.Dir+f.cancelled]; p != nil {
				e.Group = p.group
				delete(pend, e.Dir+f.cancelled)
			}
		case f.taskID != "" && sub(h.tasks, srv)[f.taskID] != 0:
			e.Group = h.tasks[srv][f.taskID]
		}
	default: // a response: to a request that went the other way
		other := dirIn
		if e.Dir == dirIn {
			other = dirOut
		}
		if p := pend[other+e.ID]; p != nil && e.ID != "" {
			e.Group = p.group
			e.Method = p.method
			e.Ms = float64(e.Time.Sub(p.at).Microseconds()) / 1000
			delete(pend, other+e.ID)
			if p.token != "" {
				delete(h.progress[srv], p.token)
			}
			if f.inputRequired != "" {
				boundedSet(sub(h.retries, srv), f.inputRequired, p.group)
			}
			if f.taskID != "" {
				boundedSet(sub(h.tasks, srv), f.taskID, p.group)
			}
		}
	}
	e.Label = h.labels[e.Group]
	if len(h.labels) > maxHistoryEntries {
		clear(h.labels) // a bound, never reached by a person's session
	}
}

// maxGrouped bounds each of grouping's maps per server.
const maxGrouped = 10_000

func boundedSet(m map[string]int64, k string, v int64) {
	if len(m) >= maxGrouped {
		clear(m)
	}
	m[k] = v
}

// keep stores e with body, dropping the oldest entries past the bounds.
func (h *history) keep(e *entry, body []byte) {
	if len(body) > maxBodyKept {
		body = body[:maxBodyKept:maxBodyKept]
		e.Truncated = true
	}
	e.body = body
	h.entries = append(h.entries, e)
	h.bytes += len(body)
	drop := 0
	for len(h.entries)-drop > h.maxEntries || h.bytes > h.maxBytes && drop < len(h.entries)-1 {
		h.bytes -= len(h.entries[drop].body)
		h.entries[drop] = nil
		drop++
	}
	if drop > 0 {
		h.dropped += int64(drop)
		h.entries = append(h.entries[:0:0], h.entries[drop:]...)
	}
}

// list returns up to limit entries of server (all servers when empty)
// after seq, oldest first, and how many were dropped from the history.
func (h *history) list(server string, after int64, limit int) ([]*entry, int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*entry
	i := h.find(after)
	for ; i < len(h.entries) && len(out) < limit; i++ {
		if e := h.entries[i]; server == "" || e.Server == server {
			out = append(out, e)
		}
	}
	return out, h.dropped
}

// find is the index of the first entry after seq.
func (h *history) find(seq int64) int {
	lo, hi := 0, len(h.entries)
	for lo < hi {
		mid := (lo + hi) / 2
		if h.entries[mid].Seq <= seq {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// get returns the entry seq and its body.
func (h *history) get(seq int64) (*entry, []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	i := h.find(seq - 1)
	if i < len(h.entries) && h.entries[i].Seq == seq {
		return h.entries[i], h.entries[i].body
	}
	return nil, nil
}

// lastSeq is the Seq of the latest entry.
func (h *history) lastSeq() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seq
}

// forget drops what grouping keeps of a server that is gone.
func (h *history) forget(server string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.pending, server)
	delete(h.progress, server)
	delete(h.retries, server)
	delete(h.tasks, server)
}

// exported is an entry with its body, for the session's export.
type exported struct {
	*entry
	Message json.RawMessage `json:"message,omitempty"`
	Partial string          `json:"partial,omitempty"`
}

// all returns every entry with its body.
func (h *history) all() []exported {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]exported, len(h.entries))
	for i, e := range h.entries {
		out[i].entry = e
		if e.Truncated || !json.Valid(e.body) {
			out[i].Partial = string(e.body)
		} else {
			out[i].Message = e.body
		}
	}
	return out
}
