package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tako-mcp/tako/streamablehttp"
	"github.com/tako-mcp/tako/transport"
)

// tracingTransport records, for every request, whether net/http gave it a
// kept-alive connection (httptrace GotConn: Reused, WasIdle, IdleTime).
type tracingTransport struct {
	rt   http.RoundTripper
	mu   sync.Mutex
	gots []gotConn
}

type gotConn struct {
	method, mcpMethod string
	reused, wasIdle   bool
	idle              time.Duration
}

func (t *tracingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	method, mcpMethod := req.Method, req.Header.Get("Mcp-Method")
	ctx := httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			t.mu.Lock()
			t.gots = append(t.gots, gotConn{method, mcpMethod, info.Reused, info.WasIdle, info.IdleTime})
			t.mu.Unlock()
		},
	})
	return t.rt.RoundTrip(req.WithContext(ctx))
}

// TestTakoHTTPConnTrace traces the connections of sequential echo calls
// by tako over Streamable HTTP with a transport configured as tako's own
// default (a clone of http.DefaultTransport with 64 idle connections per
// host; tako's own cannot be traced from outside, since its requests'
// contexts descend from the Conn's, not the caller's). It logs (-v) how
// many requests got a fresh connection; it fails only if sequential calls
// dial more than a couple of connections, which would mean they are not
// reused.
func TestTakoHTTPConnTrace(t *testing.T) {
	bins := testBins(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ep, err := httpTransport.Serve(ctx, bins, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	defer tr.CloseIdleConnections()
	tt := &tracingTransport{rt: tr}
	conn, err := streamablehttp.Dial(ctx, ep.URL, &streamablehttp.Options{RoundTripper: tt})
	if err != nil {
		t.Fatal(err)
	}
	s, err := transport.Connect(ctx, conn, &transport.Options{ProtocolVersion: protocolVersion})
	if err != nil {
		t.Fatal(err)
	}
	c := &takoClient{s: s}
	const calls = 500
	tt.mu.Lock()
	setup := len(tt.gots)
	tt.mu.Unlock()
	for range calls {
		if err := c.echo(ctx); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := ep.Conns()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tally := map[string]int{}
	for i, g := range tt.gots {
		phase := "calls"
		if i < setup {
			phase = "setup"
		}
		tally[fmt.Sprintf("%s %s %s reused=%v wasIdle=%v", phase, g.method, g.mcpMethod, g.reused, g.wasIdle)]++
	}
	var lines []string
	for k, n := range tally {
		lines = append(lines, fmt.Sprintf("%5d  %s", n, k))
	}
	sort.Strings(lines)
	t.Logf("%d sequential echo calls; server saw %d TCP connections in all; GotConn per request:\n%s", calls, before, strings.Join(lines, "\n"))
	fresh := 0
	for _, g := range tt.gots[setup:] {
		if g.method == http.MethodPost && !g.reused {
			fresh++
		}
	}
	if fresh > 2 {
		t.Errorf("%d of %d sequential POSTs got a fresh connection", fresh, calls)
	}
}
