package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Assertion types and grant types tako sends.
const (
	clientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
	grantJWTBearer      = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	grantTokenExchange  = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeIDToken    = "urn:ietf:params:oauth:token-type:id_token"
	tokenTypeIDJAG      = "urn:ietf:params:oauth:token-type:id-jag"
)

// ParsePrivateKeyPEM parses a PEM private key (PKCS #8, PKCS #1 or SEC 1)
// for private_key_jwt client authentication or DPoP.
func ParsePrivateKeyPEM(pemText []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(pemText)
	if block == nil {
		return nil, errors.New("auth: no PEM block in the private key")
	}
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		if s, ok := k.(crypto.Signer); ok {
			return s, nil
		}
		return nil, errors.New("auth: the PKCS #8 key cannot sign")
	}
	if k, err := x509.ParseECPrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	return nil, errors.New("auth: the private key is not PKCS #8, SEC 1 or PKCS #1")
}

// signingAlg picks the JWS algorithm for key (RFC 7518), honouring want
// when it is given.
func signingAlg(key crypto.Signer, want string) (jose.SignatureAlgorithm, error) {
	if want != "" {
		return jose.SignatureAlgorithm(want), nil
	}
	switch k := key.Public().(type) {
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return jose.ES256, nil
		case elliptic.P384():
			return jose.ES384, nil
		case elliptic.P521():
			return jose.ES512, nil
		}
	case *rsa.PublicKey:
		return jose.RS256, nil
	case ed25519.PublicKey:
		return jose.EdDSA, nil
	}
	return "", fmt.Errorf("auth: unsupported key type %T", key.Public())
}

// clientAssertion signs a private_key_jwt client assertion (RFC 7523 §2.2):
// issuer and subject the client id, audience the authorization server.
func clientAssertion(key crypto.Signer, alg, clientID, audience string) (string, error) {
	a, err := signingAlg(key, alg)
	if err != nil {
		return "", err
	}
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: a, Key: key}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", fmt.Errorf("auth: client assertion: %w", err)
	}
	now := time.Now()
	claims := jwt.Claims{
		Issuer:   clientID,
		Subject:  clientID,
		Audience: jwt.Audience{audience},
		ID:       randomString(16),
		IssuedAt: jwt.NewNumericDate(now),
		Expiry:   jwt.NewNumericDate(now.Add(5 * time.Minute)),
	}
	s, err := jwt.Signed(sig).Claims(claims).Serialize()
	if err != nil {
		return "", fmt.Errorf("auth: client assertion: %w", err)
	}
	return s, nil
}

// randomString is n random bytes, base64url without padding.
func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// s256 is BASE64URL(SHA256(s)), for DPoP's ath.
func s256(s string) string {
	h := sha256.Sum256([]byte(s))
	return base64.RawURLEncoding.EncodeToString(h[:])
}
