package auth

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// marker is in every hostile token answer's body: an error that shows it
// carries the body.
const marker = "BODY-MARKER-7f3a"

// clientCredentialsClient is a Client of h's MCP endpoint with the client
// credentials grant: no user, so each token answer is met at once.
func clientCredentialsClient(t *testing.T, h *hostileAS) *Client {
	return mustNew(t, h.URL+"/mcp", &Config{Grant: ClientCredentials{}, Client: &StaticClient{ID: "bot", Secret: "bot-secret"}})
}

// TestTokenEndpointAnswers: what a broken or hostile token endpoint
// answers gives a typed error (a *ProtocolError wrapping
// ErrBadTokenResponse or ErrUnsupportedTokenType) whose message does not
// carry the body; an answer larger than MaxTokenResponseSize is not read
// further. Before the fix a 100 MB body, an HTML page or a missing
// access_token gave an untyped "auth: token request: …" and token_type
// "mac" was used as Bearer.
func TestTokenEndpointAnswers(t *testing.T) {
	for _, tc := range []struct {
		name        string
		status      int
		contentType string
		body        string
		want        error
	}{
		{"HTML with 200", 200, "text/html", "<html><body>" + marker + "</body></html>", ErrBadTokenResponse},
		{"HTML with 400", 400, "text/html", "<html><body>" + marker + "</body></html>", ErrBadTokenResponse},
		{"plain text with 500", 500, "text/plain", "stack trace " + marker, ErrBadTokenResponse},
		{"JSON without a type with 200", 200, "", `{"access_token":"at-` + marker + `","token_type":"Bearer"}`, nil},
		{"not JSON without a type", 200, "", marker, ErrBadTokenResponse},
		{"no access_token", 200, "application/json", `{"token_type":"Bearer","note":"` + marker + `"}`, ErrBadTokenResponse},
		{"empty access_token", 200, "application/json", `{"access_token":"","token_type":"Bearer","note":"` + marker + `"}`, ErrBadTokenResponse},
		{"no token_type", 200, "application/json", `{"access_token":"at-` + marker + `"}`, ErrBadTokenResponse},
		{"token_type mac", 200, "application/json", `{"access_token":"at-` + marker + `","token_type":"mac"}`, ErrUnsupportedTokenType},
		{"token_type N_A outside an exchange", 200, "application/json", `{"access_token":"at-` + marker + `","token_type":"N_A"}`, ErrUnsupportedTokenType},
		{"an array", 200, "application/json", `["` + marker + `"]`, ErrBadTokenResponse},
		{"two objects", 200, "application/json", `{"access_token":"a","token_type":"Bearer"}{"` + marker + `":1}`, ErrBadTokenResponse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHostileAS(t)
			h.handle("/token", func(w http.ResponseWriter, _ *http.Request) {
				if tc.contentType != "" {
					w.Header().Set("Content-Type", tc.contentType)
				} else {
					w.Header()["Content-Type"] = nil // no sniffing: no type at all
				}
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			})
			ac := clientCredentialsClient(t, h)
			err := call(testCtx(t, 10*time.Second), ac, h.URL+"/mcp")
			if tc.want == nil {
				// Taken, and then refused by the MCP endpoint, which
				// never issued it.
				var pe *ProtocolError
				if errors.As(err, &pe) {
					t.Errorf("err = %v, want the token taken", err)
				}
				return
			}
			var pe *ProtocolError
			if !errors.Is(err, tc.want) || !errors.As(err, &pe) || pe.Endpoint != "token" || pe.Status != tc.status {
				t.Errorf("err = %v, want a *ProtocolError of the token endpoint, status %d, wrapping %v", err, tc.status, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), marker) {
				t.Errorf("the error carries the body: %v", err)
			}
		})
	}
}

// TestTokenEndpointHugeAnswer: a 100 MB answer, streamed by the server,
// is refused after MaxTokenResponseSize bytes, and the client stops
// reading: the server cannot write much more than that.
func TestTokenEndpointHugeAnswer(t *testing.T) {
	for _, status := range []int{http.StatusOK, http.StatusBadRequest} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			h := newHostileAS(t)
			var written atomic.Int64
			h.handle("/token", func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				chunk := []byte(`{"access_token":"` + strings.Repeat(marker, 64<<10/len(marker)))
				for written.Load() < 100<<20 {
					n, err := w.Write(chunk)
					written.Add(int64(n))
					if err != nil {
						return
					}
				}
			})
			ac := clientCredentialsClient(t, h)
			err := call(testCtx(t, 30*time.Second), ac, h.URL+"/mcp")
			var pe *ProtocolError
			if !errors.Is(err, ErrBadTokenResponse) || !errors.As(err, &pe) {
				t.Errorf("err = %v, want a *ProtocolError wrapping ErrBadTokenResponse", err)
			}
			if err != nil && strings.Contains(err.Error(), marker) {
				t.Errorf("the error carries the body: %.300s", err)
			}
			// The server's handler ends when its writes fail; what it got
			// into the socket is the limit and the kernel's buffers (about
			// 5 MB here), far from the 100 MB it would have sent.
			h.srv.Close()
			if n := written.Load(); n >= 32<<20 {
				t.Errorf("the server wrote %d MB: the client read on past the limit", n>>20)
			}
		})
	}
}

// TestTokenLifetimeUnknown: an expires_in that is negative, zero, not a
// number or absurdly large is an unknown lifetime: the token has no
// expiry, is used until the server refuses it, and is not refreshed (or
// asked for again) on every request. Before the fix a negative one made
// a token that had expired when it was issued: a bare 401 after 3
// requests.
func TestTokenLifetimeUnknown(t *testing.T) {
	for _, expiresIn := range []string{`-3600`, `0`, `"soon"`, `1e30`, `99999999999999999999999`, `null`, `"-5"`, `true`, `{}`} {
		t.Run(expiresIn, func(t *testing.T) {
			h := newHostileAS(t)
			h.handle("/token", func(w http.ResponseWriter, r *http.Request) {
				_ = r.ParseForm()
				h.recordForm(r)
				h.mu.Lock()
				h.live["odd-token"] = true
				h.mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"access_token":"odd-token","token_type":"bearer","refresh_token":"odd-refresh","expires_in":%s}`, expiresIn)
			})
			ac := mustNew(t, h.URL+"/mcp", &Config{User: &Headless{}})
			ctx := testCtx(t, 10*time.Second)
			for range 20 {
				if err := call(ctx, ac, h.URL+"/mcp"); err != nil {
					t.Fatalf("call: %v", err)
				}
			}
			tok, err := ac.Token(ctx)
			if err != nil || tok == nil || !tok.Expiry.IsZero() || tok.TokenType != "Bearer" {
				t.Errorf("Token: %v, %v; want a Bearer token without an expiry", tok, err)
			}
			if n := len(h.tokenForms()); n != 1 {
				t.Errorf("%d token requests for 20 calls, want 1", n)
			}
		})
	}
}

// TestTokenLifetimeKnown: a numeric expires_in, or a numeric string (as
// some servers send), is the token's lifetime.
func TestTokenLifetimeKnown(t *testing.T) {
	now := time.Now()
	for raw, want := range map[string]time.Duration{`3600`: time.Hour, `"60"`: time.Minute, `1.5`: 1500 * time.Millisecond, `" 120 "`: 2 * time.Minute} {
		tok, err := parseTokenResponse("application/json", []byte(`{"access_token":"a","token_type":"Bearer","expires_in":`+raw+`}`), now, false)
		if err != nil || !tok.Expiry.Equal(now.Add(want)) {
			t.Errorf("expires_in %s: %v, %v; want an expiry in %s", raw, tok, err, want)
		}
	}
}
