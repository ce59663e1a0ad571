package auth

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math/big"
	"net/url"
	"strings"
	"testing"
	"time"
)

// The secrets the sweep fills the package's values with.
const (
	sAccess   = "SECRET-access-token"
	sRefresh  = "SECRET-refresh-token"
	sClient   = "SECRET-client-secret"
	sStatic   = "SECRET-static-secret"
	sIDP      = "SECRET-idp-secret"
	sCode     = "SECRET-authorization-code"
	sVerifier = "SECRET-pkce-verifier"
	sRefused  = "SECRET-refused-access-token"
)

// forms is every way a secret s may show in printed text: as it is, in
// hex (%x, %X of a struct that holds it as a string), and in base64url.
func forms(s string) []string {
	return []string{s, hex.EncodeToString([]byte(s)), strings.ToUpper(hex.EncodeToString([]byte(s))),
		base64.RawURLEncoding.EncodeToString([]byte(s))}
}

// secretValues is every type of the package that holds a token, a
// secret, a code, a key or a verifier, each filled with known secrets, and
// the text that must never show (the key's private scalar in decimal,
// hex and base64url, as %v of a big.Int, %x and a JWK show it).
func secretValues(t *testing.T) (values map[string]any, secrets []string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := key.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	d := new(big.Int).SetBytes(raw)
	secrets = []string{d.String(), d.Text(16), fmt.Sprintf("%X", d), base64.RawURLEncoding.EncodeToString(raw)}
	for _, s := range []string{sAccess, sRefresh, sClient, sStatic, sIDP, sCode, sVerifier, sRefused} {
		secrets = append(secrets, forms(s)...)
	}

	dp, err := newDPoP(key)
	if err != nil {
		t.Fatal(err)
	}
	_ = dp.jwk() // the private JWK text, kept in the dpop once computed
	tok := Token{AccessToken: sAccess, TokenType: "Bearer", RefreshToken: sRefresh, Expiry: time.Now().Add(time.Hour), Obtained: time.Now()}
	ci := ClientInfo{ClientID: "c1", ClientSecret: sClient, AuthMethod: methodBasic}
	rec := Record{Resource: "https://mcp.example.com/mcp", Issuer: "https://as.example.com", Client: ci, Token: &tok, DPoPKey: Secret(dp.jwk())}
	sc := StaticClient{ID: "static", Secret: sStatic, PrivateKey: key}
	em := EnterpriseManaged{IDPTokenEndpoint: "https://idp.example.com/token", IDPClientID: "idp", IDPClientSecret: sIDP}
	cfg := Config{Client: &sc, DPoP: true, DPoPKey: key, Grant: em, Store: &MemoryStore{}}
	ms := &MemoryStore{}
	_ = ms.Save(context.Background(), &rec)
	fs := &FileStore{Dir: t.TempDir()}
	_ = fs.Save(context.Background(), &rec)

	c, err := New("https://mcp.example.com/mcp", &cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.rec, c.loaded = cloneRecord(&rec), true
	c.failed, c.failedToken = fmt.Errorf("auth: refused"), sRefused
	c.deadRefresh, c.deadErr = digest(sRefresh), &ProtocolError{Endpoint: "token", Status: 400, Code: "invalid_grant"}
	a := &attempt{done: make(chan struct{}), err: c.failed, cancel: func(error) {}, waiters: 1, ends: time.Now()}
	c.pending = a

	tp := tokenParams{md: &ServerMetadata{TokenEndpoint: "https://as.example.com/token"}, client: ci, form: url.Values{
		"code": {sCode}, "code_verifier": {sVerifier}, "refresh_token": {sRefresh}, "client_secret": {sClient}}}
	at, rt := sAccess, sRefresh
	tr := tokenResponse{AccessToken: &at, RefreshToken: &rt}

	values = map[string]any{
		"Secret":                         Secret(sAccess),
		"Token":                          tok,
		"*Token":                         &tok,
		"ClientInfo":                     ci,
		"*ClientInfo":                    &ci,
		"Record":                         rec,
		"*Record":                        &rec,
		"StaticClient":                   sc,
		"*StaticClient":                  &sc,
		"EnterpriseManaged":              em,
		"Config":                         cfg,
		"*Config":                        &cfg,
		"Config with client credentials": Config{Grant: ClientCredentials{}, Client: &sc},
		"*MemoryStore":                   ms,
		"*FileStore":                     fs,
		"*Client":                        c,
		"*LoginPendingError":             &LoginPendingError{c: c, a: a},
		"*LoginNeededError":              &LoginNeededError{Resource: rec.Resource, Scopes: []string{"mcp:read"}},
		"*ProtocolError":                 &ProtocolError{Endpoint: "token", Status: 400, Code: "invalid_grant", Description: "expired"},
		"*dpop":                          dp,
		"*attempt":                       a,
		"tokenParams":                    tp,
		"tokenResponse":                  tr,
	}
	return values, secrets
}

// TestSecretsNeverPrinted sweeps the package's types that hold a secret:
// none shows it under any fmt verb, or through log/slog's text and JSON
// handlers (LogValue, or the JSON a handler would otherwise marshal).
// Before the fix %v of *MemoryStore printed a client secret, %v of
// *Client the refused access token; the slog JSON of a StaticClient, a
// ClientInfo or a Token value still showed theirs.
func TestSecretsNeverPrinted(t *testing.T) {
	values, secrets := secretValues(t)
	check := func(what, out string) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("%s shows a secret (%.20s...): %.400s", what, s, out)
				return
			}
		}
	}
	for name, v := range values {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
			check(name+" under "+verb, fmt.Sprintf(verb, v))
		}
		check(name+" in a slice under %+v", fmt.Sprintf("%+v", []any{v}))
		for _, hname := range []string{"text", "JSON"} {
			var buf bytes.Buffer
			h := slog.Handler(slog.NewTextHandler(&buf, nil))
			if hname == "JSON" {
				h = slog.NewJSONHandler(&buf, nil)
			}
			slog.New(h).Info("sweep", "value", v, slog.Group("g", "nested", v))
			check(name+" through slog's "+hname+" handler", buf.String())
		}
	}
}

// TestSecretLogValue: a Secret logs as "[redacted]", on its own and in a
// group, with either handler; an empty one as "".
func TestSecretLogValue(t *testing.T) {
	for _, h := range []func(*bytes.Buffer) slog.Handler{
		func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
		func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
	} {
		var buf bytes.Buffer
		slog.New(h(&buf)).Info("m", "s", Secret(sAccess), slog.Group("g", "s", Secret(sRefresh)), "empty", Secret(""))
		out := buf.String()
		if strings.Contains(out, sAccess) || strings.Contains(out, sRefresh) || strings.Count(out, redacted) != 2 {
			t.Errorf("logged %q", out)
		}
	}
	if v := Secret(sAccess).LogValue(); v.String() != redacted {
		t.Errorf("LogValue() = %q", v.String())
	}
}
