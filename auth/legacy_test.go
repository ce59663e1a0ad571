package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"testing"
	"time"
)

// legacyAS makes h a 2025-03-26 server: no protected resource metadata,
// a challenge without resource_metadata.
func legacyAS(h *hostileAS) {
	h.handle("/.well-known/oauth-protected-resource/mcp", http.NotFound)
	h.handle("/.well-known/oauth-protected-resource", http.NotFound)
	h.handle("/mcp", h.mcpLegacy)
}

// mcpLegacy challenges a request without a token as a 2025-03-26 server
// does, without resource_metadata.
func (h *hostileAS) mcpLegacy(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcp"`)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	h.mcp(w, r)
}

// TestLegacyServerDiscovery: a 2025-03-26 server without resource
// metadata is authorized through its origin's RFC 8414 metadata, asked
// for with the MCP-Protocol-Version header; without that metadata,
// through the default endpoints; metadata that names an issuer on
// another origin is refused.
func TestLegacyServerDiscovery(t *testing.T) {
	t.Run("metadata", func(t *testing.T) {
		h := newHostileAS(t)
		legacyAS(h)
		var version string
		h.handle("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
			version = r.Header.Get("Mcp-Protocol-Version")
			h.mu.Lock()
			md := h.md
			h.mu.Unlock()
			jsonDoc(md)(w, r)
		})
		ac := mustNew(t, h.URL+"/mcp", &Config{User: &Headless{}})
		if err := call(testCtx(t, 10*time.Second), ac, h.URL+"/mcp"); err != nil {
			t.Fatal(err)
		}
		if version != "2025-03-26" {
			t.Errorf("MCP-Protocol-Version %q", version)
		}
		rec, _ := ac.store.Load(t.Context(), ac.Resource(), "")
		if rec == nil || rec.Issuer != h.URL {
			t.Errorf("stored %v", rec)
		}
	})
	t.Run("defaults", func(t *testing.T) {
		h := newHostileAS(t)
		legacyAS(h)
		h.handle("/.well-known/oauth-authorization-server", http.NotFound)
		ac := mustNew(t, h.URL+"/mcp", &Config{User: &Headless{}})
		if err := call(testCtx(t, 10*time.Second), ac, h.URL+"/mcp"); err != nil {
			t.Fatal(err)
		}
		if h.count("/register") != 1 || h.count("/authorize") != 1 || h.count("/token") != 1 {
			t.Errorf("register %d authorize %d token %d, want the default endpoints once each", h.count("/register"), h.count("/authorize"), h.count("/token"))
		}
		rec, _ := ac.store.Load(t.Context(), ac.Resource(), "")
		if rec == nil || rec.Issuer != h.URL+"/token" {
			t.Errorf("stored %v, want the token endpoint as the issuer", rec)
		}
	})
	t.Run("another origin", func(t *testing.T) {
		h := newHostileAS(t)
		legacyAS(h)
		h.metadata(func(md *ServerMetadata) { md.Issuer = "https://attacker.example" })
		ac := mustNew(t, h.URL+"/mcp", &Config{User: &Headless{}})
		if err := call(testCtx(t, 10*time.Second), ac, h.URL+"/mcp"); !errors.Is(err, ErrIssuerMismatch) {
			t.Errorf("err = %v, want ErrIssuerMismatch", err)
		}
		if h.count("/authorize") != 0 {
			t.Error("the user was sent to authorize")
		}
	})
}

// TestParsePrivateKeyPEM: PKCS #8, SEC 1 and PKCS #1 keys parse; other
// text is an error.
func TestParsePrivateKeyPEM(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rs, _ := rsa.GenerateKey(rand.Reader, 2048)
	p8, _ := x509.MarshalPKCS8PrivateKey(ec)
	sec1, _ := x509.MarshalECPrivateKey(ec)
	for name, block := range map[string]*pem.Block{
		"PKCS #8": {Type: "PRIVATE KEY", Bytes: p8},
		"SEC 1":   {Type: "EC PRIVATE KEY", Bytes: sec1},
		"PKCS #1": {Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rs)},
	} {
		k, err := ParsePrivateKeyPEM(pem.EncodeToMemory(block))
		if err != nil || k == nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if _, err := signingAlg(k, ""); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, bad := range []string{"", "not a key", string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("junk")}))} {
		if _, err := ParsePrivateKeyPEM([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
