package streamablehttp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// TestConcurrentLargeEventsShareOneBudget: "on HTTP the size cap is per
// stream, not per connection". Eight concurrent calls, each answered with
// one SSE event just under the message cap, all succeed, and the bytes the
// Conn holds at once stay within its one budget plus one message (and a
// chunk per stream), not eight messages (before: about 950 MB for eight
// 100 MB events).
func TestConcurrentLargeEventsShareOneBudget(t *testing.T) {
	const size = 1 << 20
	const maxMsg = 3 << 19
	payload := strings.Repeat("x", size)
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
		var res string
		switch msg.Method {
		case mcp.MethodInitialize:
			w.Header().Set("Mcp-Session-Id", "s")
			res = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"big","version":"1"}}`
		default:
			res = `{"content":[{"type":"text","text":"` + payload + `"}]}`
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}\n\n", msg.ID.AppendJSON(nil), res)
	}))
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := Dial(ctx, hs.URL, &Options{MaxMessageSize: maxMsg})
	if err != nil {
		t.Fatal(err)
	}
	s, err := transport.Connect(ctx, c, &transport.Options{ProtocolVersion: mcp.Version20251125})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const calls = 8
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
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a call under the cap failed: %v", err)
		}
	}
	bound := int64(maxMsg) + int64(maxMsg) + 4096 + calls*budgetChunk
	if peak := c.budget.peakUse(); peak > bound {
		t.Fatalf("the Conn held %d bytes of unread messages at once, want at most %d (one budget, one message, a chunk a stream)", peak, bound)
	} else {
		t.Logf("peak %d bytes held for %d concurrent %d-byte events (budget %d)", peak, calls, size, maxMsg)
	}
}
