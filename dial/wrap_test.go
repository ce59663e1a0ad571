package dial_test

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/tako-mcp/tako/dial"
	"github.com/tako-mcp/tako/internal/testpki"
	"github.com/tako-mcp/tako/internal/testserve"
	"github.com/tako-mcp/tako/mcptest"
)

// seen records what a wrapped RoundTripper passed on.
type seen struct {
	mu       sync.Mutex
	statuses []int
	next     http.RoundTripper
}

func (s *seen) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(req)
	if err == nil {
		s.mu.Lock()
		s.statuses = append(s.statuses, resp.StatusCode)
		s.mu.Unlock()
	}
	return resp, err
}

func (s *seen) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.statuses)
}

// TestDialHTTPWrapRoundTripper: WrapRoundTripper sees every request of an
// http server, the handshake's included, over plain HTTP and over HTTPS
// with a pinned CA (what it wraps keeps the TLS settings); the wrapped
// RoundTripper's idle connections are closed with the Transport (goleak in
// TestMain); a stdio server ignores it.
func TestDialHTTPWrapRoundTripper(t *testing.T) {
	p := testpki.New(t)
	handler := testserve.StatelessHTTP(mcptest.NewReference(mcptest.Options{}), nil)
	plain := httptest.NewServer(handler)
	t.Cleanup(plain.Close)
	secure := httptest.NewUnstartedServer(handler)
	secure.TLS = &tls.Config{Certificates: []tls.Certificate{p.Server.TLS(t)}}
	secure.StartTLS()
	t.Cleanup(secure.Close)

	for _, tc := range []struct {
		name string
		s    dial.Server
	}{
		{"http", dial.Server{URL: plain.URL + "/mcp"}},
		{"https", dial.Server{URL: secure.URL + "/mcp", TLS: &dial.TLS{CAFile: p.CA.File}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls int
			w := &seen{}
			tc.s.WrapRoundTripper = func(next http.RoundTripper) http.RoundTripper {
				calls++
				w.next = next
				return w
			}
			tr := mustDial(t, tc.s, nil)
			afterHandshake := w.count()
			echo(t, tr, "watched")
			if calls != 1 {
				t.Errorf("WrapRoundTripper called %d times, want once per Dial", calls)
			}
			if afterHandshake == 0 || w.count() <= afterHandshake {
				t.Errorf("the wrapper saw %d requests in the handshake and %d in all; want the handshake's and the call's", afterHandshake, w.count())
			}
			for _, st := range w.statuses {
				if st != http.StatusOK {
					t.Errorf("the wrapper saw status %d: %v", st, w.statuses)
				}
			}
			tr.Close()
		})
	}

	called := false
	tr := mustDial(t, dial.Server{Command: demo(t), WrapRoundTripper: func(rt http.RoundTripper) http.RoundTripper {
		called = true
		return rt
	}}, nil)
	echo(t, tr, "stdio")
	if called {
		t.Error("WrapRoundTripper was called for a stdio server")
	}
}
