package bench

import (
	"context"
	"testing"
	"time"
)

// TestTakoHTTPConnTrace counts the TCP connections of tako's own HTTP
// client (streamablehttp.Dial with nil options, the transport the Conn
// makes for itself, as the "http" figures use) at the server, which sees
// every connection whatever the client's configuration: 500 sequential
// echo calls, then 2,000 from ConcCallers goroutines. Sequential calls
// must reuse one kept-alive connection (at most 2 fresh); concurrent ones
// must keep, and reuse, about one per caller (at most 2 x ConcCallers),
// which Go's default of 2 idle connections per host does not: it closes
// most of them as the answers come back and dials again (thousands of
// connections for a few thousand calls).
//
// It used to trace a clone of http.DefaultTransport set up by the test
// with tako's setting copied into it, so a change to tako's own transport
// could not fail it.
func TestTakoHTTPConnTrace(t *testing.T) {
	bins := testBins(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ep, err := httpTransport.Serve(ctx, bins, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	c, err := startTakoHTTP(ctx, ep.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	conns := func() int64 {
		t.Helper()
		n, err := ep.Conns()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	setup := conns()

	const seq = 500
	for range seq {
		if err := c.echo(ctx); err != nil {
			t.Fatal(err)
		}
	}
	afterSeq := conns()

	const conc = 2000
	if _, _, err := callConcurrentlyTimed(ctx, c, conc); err != nil {
		t.Fatal(err)
	}
	afterConc := conns()

	t.Logf("tako's own HTTP client: %d connections for the handshake, %d more for %d sequential calls, %d more for %d calls from %d callers",
		setup, afterSeq-setup, seq, afterConc-afterSeq, conc, ConcCallers)
	if fresh := afterSeq - setup; fresh > 2 {
		t.Errorf("%d sequential calls opened %d connections, want at most 2: kept-alive connections are not reused", seq, fresh)
	}
	if fresh, most := afterConc-afterSeq, int64(2*ConcCallers); fresh > most {
		t.Errorf("%d calls from %d callers opened %d connections, want at most %d: the pool does not keep a connection per caller", conc, ConcCallers, fresh, most)
	}
}
