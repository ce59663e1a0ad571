package streamablehttp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// countingConn counts the bytes the client reads off one TCP connection
// into its readMeter.
type countingConn struct {
	net.Conn
	m *readMeter
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.m.add(n)
	return n, err
}

// readMeter is what the client has taken off its sockets since base, and
// says so when that passes limit (over) and everything (all), until
// stopped.
type readMeter struct {
	total, base     atomic.Int64
	limit, everyone int64
	stopped         atomic.Bool
	peak            atomic.Int64
	overOnce        sync.Once
	allOnce         sync.Once
	over, all       chan struct{}
}

func (m *readMeter) add(n int) {
	got := m.total.Add(int64(n)) - m.base.Load()
	if m.stopped.Load() {
		return
	}
	for p := m.peak.Load(); got > p && !m.peak.CompareAndSwap(p, got); p = m.peak.Load() {
	}
	if got > m.limit {
		m.overOnce.Do(func() { close(m.over) })
	}
	if got >= m.everyone {
		m.allOnce.Do(func() { close(m.all) })
	}
}

// TestConcurrentLargeEventsShareOneBudget: "on HTTP the size cap is per
// stream, not per connection" (eight concurrent calls each answered with
// one event near the cap held about eight caps: 950 MB for eight 100 MB
// events). The Conn holds, for all its streams together, at most its one
// budget (MaxMessageSize) plus the one message allowed past it, and a
// little per stream.
//
// Measured from outside: the client's sockets count what it reads, and
// the server writes each of eight 1 MiB events but the blank line that
// ends it, so that no event completes and everything read is held. A Conn
// that honours its budget stops reading at the cap plus one message and
// its streams wait for each other (the budget's one hook says when, and
// only then are the events completed); one that does not (a budget per
// stream, a budget that always grants, none) reads all eight events,
// about twice the bound, and fails every run. The server then completes
// the events and every call must succeed.
func TestConcurrentLargeEventsShareOneBudget(t *testing.T) {
	const (
		size   = 1 << 20
		maxMsg = 3 << 19
		calls  = 8
	)
	// The cap, one message past it (with the event reader's margin), and
	// per stream a budget chunk of slack, net/http's 4 KiB read buffer,
	// and its response headers and chunk framing.
	const bound = maxMsg + maxMsg + 4096 + calls*(budgetChunk+4096+1024)
	payload := strings.Repeat("x", size)
	release := make(chan struct{})
	var releaseOnce sync.Once
	releaseAll := func() { releaseOnce.Do(func() { close(release) }) }
	defer releaseAll()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "no", http.StatusMethodNotAllowed)
			return
		}
		b, _ := io.ReadAll(r.Body)
		msg, err := mcp.DecodeMessage(b)
		if err != nil || !msg.IsRequest() {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		if msg.Method == mcp.MethodInitialize {
			w.Header().Set("Mcp-Session-Id", "s")
			w.WriteHeader(http.StatusOK)
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}\n\n", msg.ID.AppendJSON(nil),
				`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"big","version":"1"}}`)
			return
		}
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"", msg.ID.AppendJSON(nil))
		for off := 0; off < size; off += 32 << 10 {
			if _, err := io.WriteString(w, payload[off:min(off+32<<10, size)]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, `"}]}}`+"\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "\n") // the blank line that ends the event
	}))
	defer hs.Close()

	meter := &readMeter{limit: bound, everyone: calls * size, over: make(chan struct{}), all: make(chan struct{})}
	dialer := &net.Dialer{}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{conn, meter}, nil
	}}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := Dial(ctx, hs.URL, &Options{MaxMessageSize: maxMsg, RoundTripper: tr})
	if err != nil {
		t.Fatal(err)
	}
	s, err := transport.Connect(ctx, c, &transport.Options{ProtocolVersion: mcp.Version20251125})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	waiting := make(chan struct{})
	var waitOnce sync.Once
	c.budget.mu.Lock()
	c.budget.waited = func() { waitOnce.Do(func() { close(waiting) }) }
	c.budget.mu.Unlock()
	meter.base.Store(meter.total.Load())

	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "big", Arguments: json.RawMessage(`{}`)})
			if err == nil && len(res.Text()) != size {
				err = fmt.Errorf("result of %d bytes", len(res.Text()))
			}
			errs <- err
		}()
	}
	var over bool
	select {
	case <-waiting:
	case <-meter.over:
		// Past the bound: let it read on, to show how far it goes (all
		// of every event, for a Conn with no budget in force).
		over = true
		select {
		case <-meter.all:
		case <-waiting:
		case <-ctx.Done():
		}
	case <-ctx.Done():
		t.Fatalf("no stream waited for the budget and the Conn read only %d bytes of the %d-byte events", meter.peak.Load(), calls*size)
	}
	meter.stopped.Store(true)
	held := meter.peak.Load()
	releaseAll()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a call under the cap failed: %v", err)
		}
	}
	if over {
		t.Fatalf("the Conn read and held %d bytes of %d concurrent %d-byte events before any was complete: want at most %d (its one budget of %d, one message, a little per stream)", held, calls, size, bound, maxMsg)
	}
	t.Logf("the Conn held %d bytes of %d concurrent %d-byte events when a stream began to wait (bound %d, budget %d)", held, calls, size, bound, maxMsg)
}
