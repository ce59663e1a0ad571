package auth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// TestStateMismatchRefused: an authorization response whose state is not
// the one sent (a forged or replayed redirect, CSRF) is refused with
// ErrStateMismatch, and its code is never redeemed. Before this test,
// skipping the state check passed every test, the 90 conformance
// scenarios included.
func TestStateMismatchRefused(t *testing.T) {
	h := newHostileAS(t)
	h.handle("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		http.Redirect(w, r, q.Get("redirect_uri")+"?code=forged&state=not-the-state&iss="+url.QueryEscape(h.URL), http.StatusFound)
	})
	ac := mustNew(t, h.URL+"/mcp", &Config{User: &Headless{}})
	if err := call(testCtx(t, 10*time.Second), ac, h.URL+"/mcp"); !errors.Is(err, ErrStateMismatch) {
		t.Errorf("err = %v, want ErrStateMismatch", err)
	}
	if n := h.count("/token"); n != 0 {
		t.Errorf("%d token requests: the forged code was redeemed", n)
	}
}

// TestPKCEUnsupportedRefused: an authorization server that does not
// advertise PKCE with S256 (none at all, or plain only) is refused with
// ErrPKCEUnsupported before the user step starts: its codes could be
// redeemed by whoever intercepts them. Before this test, skipping the
// refusal passed every test.
func TestPKCEUnsupportedRefused(t *testing.T) {
	for _, methods := range [][]string{nil, {"plain"}, {"s256"}} {
		h := newHostileAS(t)
		h.metadata(func(md *ServerMetadata) { md.CodeChallengeMethodsSupported = methods })
		user := &countingStep{h: &Headless{}}
		ac := mustNew(t, h.URL+"/mcp", &Config{User: user})
		if err := call(testCtx(t, 10*time.Second), ac, h.URL+"/mcp"); !errors.Is(err, ErrPKCEUnsupported) {
			t.Errorf("methods %q: err = %v, want ErrPKCEUnsupported", methods, err)
		}
		if user.started() != 0 || h.count("/authorize") != 0 || h.count("/register") != 0 {
			t.Errorf("methods %q: %d user steps, %d authorization requests, %d registrations, want none",
				methods, user.started(), h.count("/authorize"), h.count("/register"))
		}
	}
}

// TestRedeemCodeChecks: the authorization response is checked before
// anything in it is believed, error answers included: the issuer the
// server advertised (RFC 9207, ErrMissingIssuer when absent,
// ErrIssuerMismatch when another), then the state, then the error, then
// the code. None of these reaches the token endpoint.
func TestRedeemCodeChecks(t *testing.T) {
	h := newHostileAS(t)
	ac := mustNew(t, h.URL+"/mcp", nil)
	md := h.md
	md.AuthorizationResponseIssParameterSupported = true
	tgt := &target{md: &md, issuer: md.Issuer, resource: h.URL + "/mcp"}
	rec := &Record{Client: ClientInfo{ClientID: "c1", AuthMethod: methodNone}}
	for _, tc := range []struct {
		name string
		q    url.Values
		want error
	}{
		{"no iss", url.Values{"state": {"st"}, "code": {"c"}}, ErrMissingIssuer},
		{"no iss on an error", url.Values{"state": {"st"}, "error": {"access_denied"}}, ErrMissingIssuer},
		{"another iss", url.Values{"state": {"st"}, "code": {"c"}, "iss": {"https://attacker.example"}}, ErrIssuerMismatch},
		{"another iss on an error", url.Values{"state": {"st"}, "error": {"access_denied"}, "iss": {"https://attacker.example"}}, ErrIssuerMismatch},
		{"another state", url.Values{"state": {"other"}, "code": {"c"}, "iss": {md.Issuer}}, ErrStateMismatch},
		{"no state", url.Values{"code": {"c"}, "iss": {md.Issuer}}, ErrStateMismatch},
	} {
		_, err := ac.redeemCode(context.Background(), tgt, rec, tc.q, "st", "http://127.0.0.1:1/callback", "verifier")
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	var pe *ProtocolError
	_, err := ac.redeemCode(context.Background(), tgt, rec, url.Values{"state": {"st"}, "iss": {md.Issuer}, "error": {"access_denied"}}, "st", "", "")
	if !errors.As(err, &pe) || pe.Endpoint != "authorization" || pe.Code != "access_denied" {
		t.Errorf("an error answer: %v", err)
	}
	_, err = ac.redeemCode(context.Background(), tgt, rec, url.Values{"state": {"st"}, "iss": {md.Issuer}}, "st", "", "")
	if !errors.As(err, &pe) || pe.Endpoint != "authorization" {
		t.Errorf("no code: %v", err)
	}
	// Without the server's RFC 9207 promise, an absent iss is accepted.
	md.AuthorizationResponseIssParameterSupported = false
	if _, err := ac.redeemCode(context.Background(), tgt, rec, url.Values{"state": {"st"}, "code": {"c"}}, "st", "http://127.0.0.1:1/callback", "v"); err != nil {
		t.Errorf("no iss from a server that does not promise it: %v", err)
	}
	if n := h.count("/token"); n != 1 {
		t.Errorf("%d token requests, want the one accepted answer's", n)
	}
}
