package apiclient

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{map[string]string{"Retry-After": "2"}, 2 * time.Second, true},
		{map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond, true},
		{map[string]string{"Retry-After": now.Add(10 * time.Second).Format(http.TimeFormat)}, 10 * time.Second, true},
		{map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0, true},
		{map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond, true},
		{map[string]string{"Retry-After": "soon"}, 0, false},
		{map[string]string{"Retry-After": "-3"}, 0, false},
		{nil, 0, false},
	}
	for _, c := range cases {
		h := http.Header{}
		for k, v := range c.header {
			h.Set(k, v)
		}
		got, ok := RetryAfter(h, now)
		if got != c.want || ok != c.ok {
			t.Errorf("%v: got %v %v, want %v %v", c.header, got, ok, c.want, c.ok)
		}
	}
}

func TestReadEvents(t *testing.T) {
	stream := ": keep-alive\n\nevent: a\ndata: one\ndata: two\n\ndata: {\"x\":1}\n\ndata: last"
	var got []Event
	err := ReadEvents(strings.NewReader(stream), 1024, func(e Event) error { got = append(got, e); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Name != "a" || string(got[0].Data) != "one\ntwo" || string(got[1].Data) != `{"x":1}` || string(got[2].Data) != "last" {
		t.Errorf("events: %q", got)
	}
	err = ReadEvents(strings.NewReader("data: "+strings.Repeat("x", 100)+"\n\n"), 50, func(Event) error { return nil })
	if !errors.Is(err, ErrEventTooLarge) {
		t.Errorf("oversized event: %v", err)
	}
}

func TestDoNetworkErrorRetried(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			// Hijack and drop the connection: a network error.
			c, _, _ := w.(http.Hijacker).Hijack()
			c.Close()
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	var waits []time.Duration
	resp, err := Do(context.Background(), srv.Client(), Retry{
		MaxRetries: 2,
		Sleep:      func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil },
	}, func(ctx context.Context) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader("{}"))
	})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || hits.Load() != 2 || len(waits) != 1 {
		t.Errorf("status %d, hits %d, waits %v", resp.StatusCode, hits.Load(), waits)
	}
}
