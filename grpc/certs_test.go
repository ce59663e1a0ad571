package mcpgrpc_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testCA is a certificate authority made at test time.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

// leaf is a certificate and key in PEM, and the files that hold them.
type leaf struct {
	certPEM, keyPEM   []byte
	certFile, keyFile string
}

func newCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          newSerial(t),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue signs a leaf certificate. server makes it a server certificate for
// dnsName and 127.0.0.1; otherwise a client certificate. notAfter in the
// past makes an expired one.
func (ca *testCA) issue(t *testing.T, cn string, server bool, dnsName string, notAfter time.Time) *leaf {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: newSerial(t),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-48 * time.Hour),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.DNSNames = []string{dnsName}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	} else {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	l := &leaf{
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}),
	}
	dir := t.TempDir()
	l.certFile, l.keyFile = filepath.Join(dir, cn+".crt"), filepath.Join(dir, cn+".key")
	if err := os.WriteFile(l.certFile, l.certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.keyFile, l.keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return l
}

func (ca *testCA) file(t *testing.T) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(f, ca.pem, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// pki is the set of certificates the tests use.
type pki struct {
	ca, otherCA             *testCA
	server                  *leaf
	client, stranger, stale *leaf
}

func newPKI(t *testing.T) *pki {
	p := &pki{ca: newCA(t, "tako test CA"), otherCA: newCA(t, "someone else's CA")}
	day := time.Now().Add(24 * time.Hour)
	p.server = p.ca.issue(t, "server", true, "mcp.test", day)
	p.client = p.ca.issue(t, "client", false, "", day)
	p.stranger = p.otherCA.issue(t, "stranger", false, "", day)
	p.stale = p.ca.issue(t, "stale", false, "", time.Now().Add(-time.Hour))
	return p
}

func newSerial(t *testing.T) *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
