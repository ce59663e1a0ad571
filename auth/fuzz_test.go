package auth

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// bodyRT answers every request with one body: the fuzzer's document, at
// whatever URL discovery asks for, with no network.
type bodyRT []byte

func (b bodyRT) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(b)), Request: req}, nil
}

func fuzzFetcher(body []byte) *fetcher {
	return newFetcher(&http.Client{Transport: bodyRT(body)}, 64<<10).budgeted(maxDiscoveryFetches)
}

// FuzzResourceMetadata: any protected resource metadata document is
// decoded and checked (RFC 9728 §3.3) without a panic; a document taken
// is for a resource that covers the server, and one refused says why
// with a sentinel.
func FuzzResourceMetadata(f *testing.F) {
	for _, s := range []string{
		`{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://as.example.com"]}`,
		`{"resource":"https://mcp.example.com","authorization_servers":["https://as.example.com/tenant"],"scopes_supported":["a","b"]}`,
		`{"resource":"https://mcp.example.com/mc"}`,
		`{"resource":"https://MCP.example.com:443/mcp/"}`,
		`{"resource":"https://evil.example.com/mcp"}`,
		`{"resource":"https://mcp.example.com/mcp#frag"}`,
		`{"resource":""}`, `{}`, `[]`, `null`, `{"resource":1}`, `<html>`,
		`{"resource":"https://mcp.example.com/mcp","authorization_servers":"https://as.example.com"}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	server, _ := url.Parse("https://mcp.example.com/mcp")
	f.Fuzz(func(t *testing.T, doc []byte, fromChallenge bool) {
		challenge := ""
		if fromChallenge {
			challenge = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
		}
		prm, err := fuzzFetcher(doc).discoverResource(context.Background(), server, challenge)
		if err != nil {
			if !errors.Is(err, ErrNoMetadata) && !errors.Is(err, ErrResourceMismatch) && !errors.Is(err, ErrDocumentTooLarge) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			return
		}
		if prm == nil {
			t.Fatal("a document was served and none was found")
		}
		r, perr := url.Parse(prm.Resource)
		if perr != nil || !sameOrigin(r, server) || !strings.HasPrefix(server.Path+"/", strings.TrimSuffix(r.Path, "/")+"/") {
			t.Fatalf("resource %q taken for %s", prm.Resource, server)
		}
	})
}

// FuzzServerMetadata: any authorization server metadata document is
// decoded and checked (RFC 8414 §3.3, the endpoints' schemes) without a
// panic; a document taken names the issuer asked for, has a token
// endpoint, and sends nothing in clear.
func FuzzServerMetadata(f *testing.F) {
	for _, s := range []string{
		`{"issuer":"https://as.example.com","token_endpoint":"https://as.example.com/token","authorization_endpoint":"https://as.example.com/authorize","code_challenge_methods_supported":["S256"]}`,
		`{"issuer":"https://as.example.com/tenant","token_endpoint":"https://as.example.com/tenant/token"}`,
		`{"issuer":"https://as.example.com","token_endpoint":"http://as.example.com/token"}`,
		`{"issuer":"https://as.example.com","token_endpoint":"http://127.0.0.1:8080/token"}`,
		`{"issuer":"https://as.example.com","token_endpoint":"javascript:alert(1)"}`,
		`{"issuer":"https://as.example.com","registration_endpoint":"https://as.example.com/register"}`,
		`{"issuer":"https://as.example.com/","token_endpoint":"https://as.example.com/token"}`,
		`{"issuer":"https://attacker.example.com","token_endpoint":"https://as.example.com/token"}`,
		`{"issuer":"https://as.example.com","token_endpoint":"https://as.example.com/token","revocation_endpoint":"ftp://as.example.com/r"}`,
		`{"issuer":"https://as.example.com","token_endpoint":"https://as.example.com/token","grant_types_supported":"x"}`,
		`{}`, `null`, `[1]`, `{"issuer":null}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, doc []byte, withPath bool) {
		issuer := "https://as.example.com"
		if withPath {
			issuer += "/tenant"
		}
		md, err := fuzzFetcher(doc).discoverServer(context.Background(), issuer, nil)
		if err != nil {
			if !errors.Is(err, ErrNoMetadata) && !errors.Is(err, ErrIssuerMismatch) && !errors.Is(err, ErrInsecureEndpoint) && !errors.Is(err, ErrDocumentTooLarge) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			return
		}
		if md.Issuer != issuer || md.TokenEndpoint == "" {
			t.Fatalf("taken: issuer %q, token endpoint %q", md.Issuer, md.TokenEndpoint)
		}
		for _, e := range []string{md.AuthorizationEndpoint, md.TokenEndpoint, md.RegistrationEndpoint, md.RevocationEndpoint} {
			if e != "" && checkEndpoint(e, "endpoint") != nil {
				t.Fatalf("endpoint %q taken", e)
			}
		}
	})
}

// FuzzParseTokenResponse: any answer of a token endpoint is a token tako
// can present or a typed error that does not carry the body; a lifetime
// is positive and at most maxLifetime, or unknown.
func FuzzParseTokenResponse(f *testing.F) {
	for _, s := range []string{
		`{"access_token":"a","token_type":"Bearer","expires_in":3600,"refresh_token":"r","scope":"x y"}`,
		`{"access_token":"a","token_type":"dpop","expires_in":"60"}`,
		`{"access_token":"a","token_type":"N_A","issued_token_type":"urn:ietf:params:oauth:token-type:id-jag"}`,
		`{"access_token":"a","token_type":"mac"}`,
		`{"access_token":"a"}`, `{"token_type":"Bearer"}`, `{"access_token":"","token_type":"Bearer"}`,
		`{"access_token":"a","token_type":"Bearer","expires_in":-1}`,
		`{"access_token":"a","token_type":"Bearer","expires_in":1e400}`,
		`{"access_token":"a","token_type":"Bearer","expires_in":"NaN"}`,
		`{"access_token":"a","token_type":"Bearer","expires_in":315360001}`,
		`{"access_token":"a","token_type":"Bearer"} {"x":1}`,
		`{"access_token":"a","token_type":"Bearer","scope":"  a\t\tb "}`,
		`<html><body>error</body></html>`, `[]`, `null`, ``,
	} {
		f.Add("application/json", []byte(s), false)
		f.Add("", []byte(s), true)
	}
	f.Add("text/html; charset=utf-8", []byte(`<html>`), false)
	f.Add("application/problem+json", []byte(`{"access_token":"a","token_type":"Bearer"}`), false)
	f.Add("application/json; charset=\"", []byte(`{"access_token":"a","token_type":"Bearer"}`), false)
	now := time.Unix(1_800_000_000, 0)
	f.Fuzz(func(t *testing.T, contentType string, body []byte, exchange bool) {
		tok, err := parseTokenResponse(contentType, body, now, exchange)
		if err != nil {
			var pe *ProtocolError
			if !errors.As(err, &pe) || (!errors.Is(err, ErrBadTokenResponse) && !errors.Is(err, ErrUnsupportedTokenType)) {
				t.Fatalf("error %v is not a typed token error", err)
			}
			if len(body) > 200 && strings.Contains(err.Error(), string(body)) {
				t.Fatalf("the error carries the body: %v", err)
			}
			return
		}
		if tok.AccessToken == "" {
			t.Fatal("a token without an access token")
		}
		switch tok.TokenType {
		case "Bearer", "DPoP":
		case "N_A":
			if !exchange {
				t.Fatal("N_A outside a token exchange")
			}
		default:
			t.Fatalf("token type %q", tok.TokenType)
		}
		if !tok.Expiry.IsZero() {
			if life := tok.Expiry.Sub(now); life <= 0 || life > maxLifetime {
				t.Fatalf("lifetime %s", life)
			}
		}
		if tok.Scope != strings.Join(strings.Fields(tok.Scope), " ") {
			t.Fatalf("scope %q not normalised", tok.Scope)
		}
	})
}
