package auth

// The token endpoint, written here rather than left to golang.org/x/oauth2:
// its parser takes whatever a server sends (any token_type is used as
// Bearer, a negative expires_in becomes an expiry in the past, an HTML page
// becomes an untyped error that keeps the raw body), and what a client must
// refuse from a hostile or broken server is exactly that. One function sends
// every grant's request (code, refresh, client credentials, JWT bearer,
// token exchange), so each is bounded and typed the same way.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// MaxTokenResponseSize bounds a token endpoint's answer. A token response
// is a few kilobytes; past this the answer is refused (ErrBadTokenResponse)
// without reading further.
const MaxTokenResponseSize = 1 << 20

// maxLifetime is the longest expires_in taken as given; a longer one (or a
// negative, zero or non-numeric one) is treated as unknown: the token is
// used until the server refuses it, and then renewed.
const maxLifetime = 10 * 365 * 24 * time.Hour

// tokenParams is one token request: the grant's parameters, and the
// client that authenticates.
type tokenParams struct {
	md     *ServerMetadata
	issuer string // the client assertion's audience when md has no issuer
	client ClientInfo
	form   url.Values
	// exchange marks a token exchange (RFC 8693), whose issued token has
	// the token_type N_A: it is not an access token for a resource.
	exchange bool
}

// Format and LogValue print tokenParams without the form (a code, a
// verifier, a refresh token) or the client's secret: fmt prints the
// Secrets in unexported fields raw.
func (p tokenParams) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "auth.tokenParams{%s, %s}", redactURL(p.md.TokenEndpoint), p.form.Get("grant_type"))
}

func (p tokenParams) LogValue() slog.Value { return slog.StringValue(fmt.Sprint(p)) }

// requestToken sends a token request and parses the answer strictly.
func (c *Client) requestToken(ctx context.Context, p tokenParams) (*Token, error) {
	if err := checkEndpoint(p.md.TokenEndpoint, "token endpoint"); err != nil {
		return nil, err
	}
	form := cloneValues(p.form)
	hdr, err := c.clientAuth(p.client, p.md, p.issuer, form)
	if err != nil {
		return nil, err
	}
	body := form.Encode()
	d := c.dp.Load()
	dpop := d != nil && d.supported(p.md)
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.md.TokenEndpoint, strings.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadTokenResponse, err)
		}
		for k, v := range hdr {
			req.Header[k] = v
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Accept", "application/json")
		if dpop {
			proof, err := d.proof(http.MethodPost, req.URL, "")
			if err != nil {
				return nil, err
			}
			req.Header.Set("DPoP", proof)
		}
		resp, err := c.f.client.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, context.Cause(ctx)
			}
			return nil, fmt.Errorf("auth: token request to %s: %w", redactURL(p.md.TokenEndpoint), err)
		}
		tok, retry, err := c.readTokenResponse(resp, req.URL, dpop && attempt == 0, p.exchange)
		if retry {
			continue // a DPoP nonce learnt (RFC 9449 §8)
		}
		return tok, err
	}
}

// readTokenResponse reads and closes resp. retry is set when the server
// asked for a DPoP nonce it has now given and the request may be sent
// once more.
func (c *Client) readTokenResponse(resp *http.Response, u *url.URL, mayRetry, exchange bool) (tok *Token, retry bool, err error) {
	defer resp.Body.Close()
	d := c.dp.Load()
	learnt := d != nil && d.learnNonce(u, resp.Header, false)
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxTokenResponseSize+1))
	if err != nil {
		return nil, false, fmt.Errorf("auth: token response: %w", err)
	}
	if len(b) > MaxTokenResponseSize {
		return nil, false, &ProtocolError{Endpoint: "token", Status: resp.StatusCode,
			Description: fmt.Sprintf("the answer is larger than %d bytes", MaxTokenResponseSize), err: ErrBadTokenResponse}
	}
	if resp.StatusCode != http.StatusOK {
		pe := errorResponse("token", resp, b)
		if mayRetry && learnt && pe.Code == "use_dpop_nonce" {
			return nil, true, nil
		}
		if pe.Code == "" {
			// Not an OAuth error answer either (an HTML error page, a
			// proxy's text): as much not a token response as one at 200.
			pe.err = ErrBadTokenResponse
		}
		return nil, false, pe
	}
	tok, err = parseTokenResponse(resp.Header.Get("Content-Type"), b, time.Now(), exchange)
	if err != nil {
		return nil, false, err
	}
	return tok, false, nil
}

// clientAuth authenticates the client of a token or revocation request
// (RFC 6749 §2.3): in the returned header, or in form.
func (c *Client) clientAuth(ci ClientInfo, md *ServerMetadata, issuer string, form url.Values) (http.Header, error) {
	hdr := http.Header{}
	switch ci.AuthMethod {
	case methodBasic:
		// RFC 6749 §2.3.1: the id and secret are form-encoded before
		// they are joined and base64-encoded.
		cred := url.QueryEscape(ci.ClientID) + ":" + url.QueryEscape(ci.ClientSecret.Reveal())
		hdr.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(cred)))
	case methodPost:
		form.Set("client_id", ci.ClientID)
		form.Set("client_secret", ci.ClientSecret.Reveal())
	case methodJWT:
		extra, err := c.clientAuthParams(ci, md, issuer)
		if err != nil {
			return nil, err
		}
		form.Set("client_id", ci.ClientID)
		for k, v := range extra {
			form[k] = v
		}
	default: // none: a public client names itself
		if ci.ClientID != "" {
			form.Set("client_id", ci.ClientID)
		}
	}
	return hdr, nil
}

// tokenResponse is RFC 6749 §5.1's answer. expires_in is kept raw: servers
// send numbers, numeric strings and junk.
type tokenResponse struct {
	AccessToken     *string         `json:"access_token"`
	TokenType       *string         `json:"token_type"`
	ExpiresIn       json.RawMessage `json:"expires_in"`
	RefreshToken    *string         `json:"refresh_token"`
	Scope           *string         `json:"scope"`
	IssuedTokenType string          `json:"issued_token_type"`
}

// Format and LogValue print a tokenResponse without its tokens.
func (r tokenResponse) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "auth.tokenResponse{access token %v, refresh token %v}", r.AccessToken != nil, r.RefreshToken != nil)
}

func (r tokenResponse) LogValue() slog.Value { return slog.StringValue(fmt.Sprint(r)) }

// parseTokenResponse parses a successful token response (RFC 6749 §5.1)
// received at now: a JSON object with a non-empty access_token and a
// token_type tako can present (Bearer or DPoP; N_A for a token exchange).
// Anything else is a *ProtocolError wrapping ErrBadTokenResponse or
// ErrUnsupportedTokenType, which never holds the body.
func parseTokenResponse(contentType string, b []byte, now time.Time, exchange bool) (*Token, error) {
	bad := func(format string, args ...any) error {
		return &ProtocolError{Endpoint: "token", Status: http.StatusOK, Description: fmt.Sprintf(format, args...), err: ErrBadTokenResponse}
	}
	if mt, _, _ := mime.ParseMediaType(contentType); mt != "" && mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return nil, bad("the answer is %s, not JSON", describeMediaType(mt))
	}
	var r tokenResponse
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&r); err != nil {
		return nil, bad("the answer is not a JSON object")
	}
	if dec.More() {
		return nil, bad("the answer has data after its JSON object")
	}
	if r.AccessToken == nil || *r.AccessToken == "" {
		return nil, bad("the answer has no access_token")
	}
	if r.TokenType == nil || *r.TokenType == "" {
		return nil, bad("the answer has no token_type")
	}
	tt := *r.TokenType
	switch {
	case strings.EqualFold(tt, "Bearer"):
		tt = "Bearer"
	case strings.EqualFold(tt, "DPoP"):
		tt = "DPoP"
	case exchange && strings.EqualFold(tt, "N_A"):
		tt = "N_A"
	default:
		return nil, &ProtocolError{Endpoint: "token", Status: http.StatusOK,
			Description: fmt.Sprintf("token_type %q is not Bearer or DPoP", truncateText(tt, 40)), err: ErrUnsupportedTokenType}
	}
	t := &Token{AccessToken: Secret(*r.AccessToken), TokenType: tt, Obtained: now}
	if r.RefreshToken != nil {
		t.RefreshToken = Secret(*r.RefreshToken)
	}
	if r.Scope != nil {
		t.Scope = strings.Join(strings.Fields(*r.Scope), " ")
	}
	if d, ok := lifetime(r.ExpiresIn); ok {
		t.Expiry = now.Add(d)
	}
	return t, nil
}

// lifetime reads expires_in: a positive number of seconds (or a numeric
// string, as some servers send), at most maxLifetime. Anything else is no
// lifetime at all.
func lifetime(raw json.RawMessage) (time.Duration, bool) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return 0, false
	}
	if unq, err := strconv.Unquote(s); err == nil {
		s = strings.TrimSpace(unq)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 || f > maxLifetime.Seconds() || f != f {
		return 0, false
	}
	return time.Duration(f * float64(time.Second)), true
}

// errorResponse is a non-200 answer of an OAuth endpoint as a
// *ProtocolError: the error code and description of a JSON error body
// (RFC 6749 §5.2, RFC 7591 §3.2.2), or what kind of page it was. The body
// itself is never kept.
func errorResponse(endpoint string, resp *http.Response, b []byte) *ProtocolError {
	pe := &ProtocolError{Endpoint: endpoint, Status: resp.StatusCode}
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if json.Unmarshal(b, &e) == nil && e.Error != "" {
		pe.Code = truncateText(e.Error, 80)
		pe.Description = e.Description
		return pe
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "" && mt != "application/json" {
		pe.Description = "the answer is " + describeMediaType(mt)
	}
	return pe
}

// describeMediaType names a media type for a person: "an HTML page" rather
// than "text/html".
func describeMediaType(mt string) string {
	switch mt {
	case "text/html", "application/xhtml+xml":
		return "an HTML page (text/html)"
	case "text/plain":
		return "plain text"
	}
	return truncateText(mt, 60)
}

// truncateText cuts s to n bytes on a rune boundary and drops control
// characters: a server's text in an error message is shown to a person.
func truncateText(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return -1
		}
		return r
	}, s)
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// errNoRefresh marks a refresh that could not be tried (no refresh token,
// or one the server refused before).
var errNoRefresh = errors.New("auth: no usable refresh token")
