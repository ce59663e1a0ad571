// Package apiclient holds what the model providers share: sending a JSON
// request with retries and backoff that honour retry-after, and reading a
// server-sent event stream.
package apiclient

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Retry configures retries.
type Retry struct {
	// MaxRetries is how many times a retryable failure is retried.
	MaxRetries int
	// Base is the first backoff; each next one doubles, up to Max.
	Base, Max time.Duration
	// Retryable says which statuses are retried.
	Retryable func(status int) bool
	// Sleep waits d or until ctx ends; nil means a timer. Tests replace
	// it to see the waits without waiting.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Do sends the request built by build (called again for each attempt, so
// its body is fresh) and returns the first response that is not retried.
// A response with a retryable status, or a network error, is retried after
// the server's retry-after (seconds, an HTTP date, or retry-after-ms) when
// it gives one, else after an exponential backoff with jitter.
func Do(ctx context.Context, client *http.Client, r Retry, build func(ctx context.Context) (*http.Request, error)) (*http.Response, error) {
	sleep := r.Sleep
	if sleep == nil {
		sleep = timerSleep
	}
	for attempt := 0; ; attempt++ {
		req, err := build(ctx)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		last := attempt >= r.MaxRetries
		switch {
		case err != nil:
			if ctx.Err() != nil || last {
				return nil, err
			}
		case r.Retryable != nil && r.Retryable(resp.StatusCode) && !last:
			wait, ok := RetryAfter(resp.Header, time.Now())
			// Drain a little so that the connection can be reused.
			io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			if ok {
				if err := sleep(ctx, min(wait, 5*time.Minute)); err != nil {
					return nil, err
				}
				continue
			}
		default:
			return resp, nil
		}
		if err := sleep(ctx, backoff(r, attempt)); err != nil {
			return nil, err
		}
	}
}

func backoff(r Retry, attempt int) time.Duration {
	base, maxWait := r.Base, r.Max
	if base <= 0 {
		base = 500 * time.Millisecond
	}
	if maxWait <= 0 {
		maxWait = 20 * time.Second
	}
	d := base << min(attempt, 20)
	if d > maxWait || d <= 0 {
		d = maxWait
	}
	// Full jitter on the upper half keeps many clients from retrying in
	// step.
	return d/2 + rand.N(d/2+1)
}

func timerSleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// RetryAfter reads retry-after-ms or retry-after (delta seconds or an HTTP
// date) from h.
func RetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// ReadBody reads at most limit bytes of resp's body and closes it.
func ReadBody(resp *http.Response, limit int64) ([]byte, error) {
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("response body larger than %d bytes", limit)
	}
	return b, nil
}

// Event is one server-sent event.
type Event struct {
	Name string
	Data []byte
}

// ErrEventTooLarge is returned for an event line longer than the limit.
var ErrEventTooLarge = errors.New("server-sent event too large")

// ReadEvents reads a server-sent event stream from r and calls fn with each
// event, until the stream ends, fn returns an error, or a line exceeds
// maxLine bytes.
func ReadEvents(r io.Reader, maxLine int, fn func(Event) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(64<<10, maxLine)), maxLine)
	var (
		ev      Event
		hasData bool
	)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if hasData {
				if err := fn(ev); err != nil {
					return err
				}
			}
			ev, hasData = Event{}, false
			continue
		}
		if line[0] == ':' {
			continue // a comment, such as a keep-alive
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			ev.Name = string(value)
		case "data":
			if hasData {
				ev.Data = append(ev.Data, '\n')
			}
			ev.Data = append(ev.Data, value...)
			hasData = true
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return ErrEventTooLarge
		}
		return err
	}
	if hasData {
		return fn(ev)
	}
	return nil
}
