package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// dpop holds a DPoP (RFC 9449) key and the nonces servers handed out: one
// per origin and role, the authorization server's (§8) apart from the
// resource server's (§9), since an MCP server that is its own
// authorization server may keep a nonce for each, and one would
// overwrite the other: a round trip more at every switch.
type dpop struct {
	key crypto.Signer
	alg jose.SignatureAlgorithm

	mu     sync.Mutex
	nonces map[string]string

	jwkOnce sync.Once
	jwkText string
}

// Format and LogValue print a dpop without its key: jwkText is the
// private key, and an unexported field is printed raw.
func (d *dpop) Format(f fmt.State, _ rune) { fmt.Fprintf(f, "auth.dpop{%s}", d.alg) }

func (d *dpop) LogValue() slog.Value { return slog.StringValue(fmt.Sprint(d)) }

func newDPoP(key crypto.Signer) (*dpop, error) {
	if key == nil {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		key = k
	}
	alg, err := signingAlg(key, "")
	if err != nil {
		return nil, err
	}
	return &dpop{key: key, alg: alg, nonces: map[string]string{}}, nil
}

// supported reports whether the authorization server takes proofs signed
// with d's algorithm.
func (d *dpop) supported(md *ServerMetadata) bool {
	return slices.Contains(md.DPoPSigningAlgValuesSupported, string(d.alg))
}

type dpopClaims struct {
	jwt.Claims
	HTM   string `json:"htm"`
	HTU   string `json:"htu"`
	ATH   string `json:"ath,omitempty"`
	Nonce string `json:"nonce,omitempty"`
}

// proof signs a fresh proof for a request with method to u; accessToken,
// when set, is bound through ath (requests to the resource server).
func (d *dpop) proof(method string, u *url.URL, accessToken string) (string, error) {
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: d.alg, Key: d.key},
		(&jose.SignerOptions{EmbedJWK: true}).WithType("dpop+jwt"))
	if err != nil {
		return "", fmt.Errorf("auth: DPoP proof: %w", err)
	}
	htu := *u
	htu.RawQuery, htu.Fragment, htu.RawFragment, htu.User = "", "", "", nil
	c := dpopClaims{
		Claims: jwt.Claims{ID: randomString(16), IssuedAt: jwt.NewNumericDate(time.Now())},
		HTM:    method,
		HTU:    htu.String(),
		Nonce:  d.nonce(u, accessToken != ""),
	}
	if accessToken != "" {
		c.ATH = s256(accessToken)
	}
	s, err := jwt.Signed(sig).Claims(c).Serialize()
	if err != nil {
		return "", fmt.Errorf("auth: DPoP proof: %w", err)
	}
	return s, nil
}

// nonceKey is where the nonce of u's origin is kept, for the resource
// server or the authorization server.
func nonceKey(u *url.URL, resource bool) string {
	role := "as "
	if resource {
		role = "rs "
	}
	return role + u.Scheme + "://" + hostPort(u)
}

func (d *dpop) nonce(u *url.URL, resource bool) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.nonces[nonceKey(u, resource)]
}

// learnNonce keeps the DPoP-Nonce a response of the resource server, or
// of the authorization server, carries; it reports whether there was a
// new one.
func (d *dpop) learnNonce(u *url.URL, h http.Header, resource bool) bool {
	n := strings.TrimSpace(h.Get("Dpop-Nonce"))
	if n == "" {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	k := nonceKey(u, resource)
	if d.nonces[k] == n {
		return false
	}
	d.nonces[k] = n
	return true
}

// jwk is the private key as a JSON Web Key, for the store: a token bound
// to it is useless without it. It is computed once.
func (d *dpop) jwk() string {
	d.jwkOnce.Do(func() {
		b, err := jose.JSONWebKey{Key: d.key, Algorithm: string(d.alg), Use: "sig"}.MarshalJSON()
		if err == nil {
			d.jwkText = string(b)
		}
	})
	return d.jwkText
}

// dpopFromJWK is the dpop of a key the store kept.
func dpopFromJWK(s string) (*dpop, error) {
	var k jose.JSONWebKey
	if err := k.UnmarshalJSON([]byte(s)); err != nil {
		return nil, fmt.Errorf("auth: the stored DPoP key: %w", err)
	}
	signer, ok := k.Key.(crypto.Signer)
	if !ok || k.IsPublic() {
		return nil, fmt.Errorf("auth: the stored DPoP key is not a private key")
	}
	return newDPoP(signer)
}
