package streamablehttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/streamablehttp"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/transport/httpauth"
)

// oldSSEServer is a 2024-11-05 HTTP+SSE server: it refuses the Streamable
// HTTP POST with 405, and its GET stream opens with the endpoint event
// endpoint (made from the server's own URL), then carries the answers to
// what is posted to /messages.
type oldSSEServer struct {
	endpoint func(self string) string
	self     string

	mu     sync.Mutex
	stream chan *mcp.Message // the open GET stream's outbox
	tokens []string          // the Authorization of every POST to /messages
}

func (s *oldSSEServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/mcp":
		out := make(chan *mcp.Message, 16)
		s.mu.Lock()
		s.stream = out
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "event: endpoint\ndata: %s\n\n", s.endpoint(s.self))
		w.(http.Flusher).Flush()
		for {
			select {
			case m := <-out:
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", m.AppendJSON(nil))
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	case r.Method == http.MethodPost && r.URL.Path == "/messages":
		b, _ := io.ReadAll(r.Body)
		msg, err := mcp.DecodeMessage(b)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.tokens = append(s.tokens, r.Header.Get("Authorization"))
		out := s.stream
		s.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		var answer *mcp.Message
		switch msg.Method {
		case mcp.MethodInitialize:
			answer = &mcp.Message{ID: msg.ID, Result: []byte(`{"protocolVersion":"2024-11-05","capabilities":{"tools":{}},"serverInfo":{"name":"old","version":"1"}}`)}
		case mcp.MethodToolsCall:
			answer = echoResult(msg)
		}
		if answer != nil && out != nil {
			out <- answer
		}
	default:
		http.Error(w, "the 2024-11-05 transport: GET /mcp, POST /messages", http.StatusMethodNotAllowed)
	}
}

func startOldSSE(t *testing.T, endpoint func(self string) string) (*oldSSEServer, string) {
	srv := &oldSSEServer{endpoint: endpoint}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	srv.self = hs.URL
	return srv, hs.URL + "/mcp"
}

// credentialed are the options of a caller with a bearer token and an API
// key, both secrets of the origin the caller named.
func credentialed() *streamablehttp.Options {
	return &streamablehttp.Options{
		Header: http.Header{"X-Api-Key": {"secret-key"}},
		Auth:   httpauth.TokenSource(func(context.Context) (string, error) { return "secret-token", nil }),
	}
}

// TestHTTPSSEEndpointOnAnotherOriginIsRefused: "the 2024-11-05 HTTP+SSE
// fallback trusts the server's endpoint event". A server whose endpoint
// event named another origin (here another loopback server, on another
// port) got every POST sent there, with the caller's bearer token and
// X-Api-Key: the cross-origin redirect fix, walked around. The event is now
// refused with *EndpointOriginError before any message is posted: the other
// origin receives no request at all, let alone one with the credentials.
func TestHTTPSSEEndpointOnAnotherOriginIsRefused(t *testing.T) {
	var (
		mu   sync.Mutex
		seen []string // what reached the other origin
	)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s %s Authorization=%q X-Api-Key=%q", r.Method, r.URL, r.Header.Get("Authorization"), r.Header.Get("X-Api-Key")))
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	defer other.Close()
	otherHost := strings.TrimPrefix(other.URL, "http://")
	for name, endpoint := range map[string]string{
		"absolute":        other.URL + "/messages?sessionId=x",
		"scheme-relative": "//" + otherHost + "/messages?sessionId=x",
	} {
		t.Run(name, func(t *testing.T) {
			_, u := startOldSSE(t, func(string) string { return endpoint })
			ctx := testContext(t)
			conn, err := streamablehttp.Dial(ctx, u, credentialed())
			if err != nil {
				t.Fatal(err)
			}
			_, err = transport.Connect(ctx, conn, &transport.Options{ProtocolVersion: mcp.Version20241105})
			var oe *streamablehttp.EndpointOriginError
			if !errors.As(err, &oe) {
				t.Errorf("connect: %v, want *EndpointOriginError", err)
			} else if oe.To != "http://"+otherHost {
				t.Errorf("EndpointOriginError.To = %q, want http://%s", oe.To, otherHost)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("the error shows a secret: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen) != 0 {
				t.Fatalf("the other origin received %d requests:\n%s", len(seen), strings.Join(seen, "\n"))
			}
		})
	}
}

// TestHTTPSSEEndpointOnTheSameOriginIsUsed: the refusal is of other
// origins only: an endpoint on the server's own origin, relative or
// absolute, gets the messages and the caller's token, and calls work.
func TestHTTPSSEEndpointOnTheSameOriginIsUsed(t *testing.T) {
	for name, endpoint := range map[string]func(self string) string{
		"relative": func(string) string { return "/messages?sessionId=x" },
		"absolute": func(self string) string { return self + "/messages?sessionId=x" },
	} {
		t.Run(name, func(t *testing.T) {
			srv, u := startOldSSE(t, endpoint)
			ctx := testContext(t)
			conn, err := streamablehttp.Dial(ctx, u, credentialed())
			if err != nil {
				t.Fatal(err)
			}
			s, err := transport.Connect(ctx, conn, &transport.Options{ProtocolVersion: mcp.Version20241105})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer s.Close()
			if got, err := callEcho(ctx, s, "same"); err != nil || !strings.Contains(got, "same") {
				t.Fatalf("call: %q, %v", got, err)
			}
			srv.mu.Lock()
			defer srv.mu.Unlock()
			if len(srv.tokens) < 2 {
				t.Errorf("%d POSTs reached the endpoint, want the initialize and the call at least", len(srv.tokens))
			}
			for _, tok := range srv.tokens {
				if tok != "Bearer secret-token" {
					t.Errorf("a POST to the same origin carried Authorization %q", tok)
				}
			}
		})
	}
}

// TestOldSSEGETWithoutAnswerEndsWithConnect: "the 2024-11-05 fallback's
// GET outlives Connect's context". The GET that opens the HTTP+SSE stream
// was sent under the Conn's own life, so a server that refused the POST
// and then never answered the GET held Connect (and its caller) until
// Close, whatever the context said. The GET is now bounded by the
// handshake's context until the stream has named its endpoint.
func TestOldSSEGETWithoutAnswerEndsWithConnect(t *testing.T) {
	release := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			select { // no headers, ever
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		http.Error(w, "GET only", http.StatusMethodNotAllowed)
	}))
	defer hs.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	conn, err := streamablehttp.Dial(ctx, hs.URL+"/sse", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	done := make(chan error, 1)
	go func() {
		s, err := transport.Connect(ctx, conn, &transport.Options{ProtocolVersion: mcp.Version20241105})
		if err == nil {
			s.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, transport.ErrLegacyWire) {
			t.Errorf("Connect: %v, want the refusal and the deadline", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Connect still waits for the GET 10 s after its context ended")
	}
}
