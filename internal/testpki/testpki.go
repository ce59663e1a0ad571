// Package testpki makes certificates at test time, for the tests of this
// module: a certificate authority (NewCA), certificates it signs for servers
// and for clients (CA.Issue), and a ready set of both (New), each in PEM,
// in files of the test's own temporary directory, and, for a CA, as a
// CertPool.
//
// It is a package of its own, not a _test.go file, so that the tests of
// every package (grpc, dial, the tako command) share one way of making
// certificates instead of keeping a copy each; being internal, nothing
// outside this module can import it. It is for tests only: keys are made
// afresh on every call and live as long as the test's directory.
//
// Keys are ECDSA P-256, serial numbers random, and every certificate is
// already valid when it is made (NotBefore an hour back, or before NotAfter
// when that is earlier), so that a test about expiry needs only NotAfter.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
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

// A CA is a certificate authority made at test time.
type CA struct {
	Cert *x509.Certificate
	PEM  []byte         // Cert, PEM-encoded
	File string         // a file holding PEM, for options that take a path
	Pool *x509.CertPool // a pool that trusts Cert and nothing else

	key *ecdsa.PrivateKey
}

// NewCA makes a CA whose subject's common name is name, valid from two days
// ago (so that it was valid while a certificate a test made expired) to a
// day from now, and writes it to ca.crt in a directory of t's.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          newSerial(t),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-48 * time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("testpki: CA %q: %v", name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("testpki: CA %q: %v", name, err)
	}
	ca := &CA{Cert: cert, PEM: encode("CERTIFICATE", der), key: key, Pool: x509.NewCertPool()}
	ca.Pool.AddCert(cert)
	ca.File = writeFile(t, t.TempDir(), "ca.crt", ca.PEM)
	return ca
}

// Options say what a certificate CA.Issue makes is for. nil means a client
// certificate valid for a day.
type Options struct {
	// Server makes a certificate a TLS server presents (extended key usage
	// server auth) for Hosts; otherwise it is one a client presents
	// (client auth).
	Server bool
	// Hosts are the DNS names and IP addresses ("127.0.0.1", "::1") the
	// certificate is for, as a client checks them against the name it
	// dialled.
	Hosts []string
	// NotAfter is when the certificate expires; zero is a day from now.
	// A time in the past makes an expired certificate.
	NotAfter time.Time
}

// A Leaf is a certificate a CA signed and its private key, PEM-encoded and
// in files.
type Leaf struct {
	Cert              *x509.Certificate
	CertPEM, KeyPEM   []byte
	CertFile, KeyFile string // NAME.crt and NAME.key, in a directory of the test's
}

// Issue makes a key and a certificate for it, with the common name name,
// signed by ca, and writes both into a new directory of t's.
func (ca *CA) Issue(t testing.TB, name string, o *Options) *Leaf {
	t.Helper()
	if o == nil {
		o = &Options{}
	}
	notAfter := o.NotAfter
	if notAfter.IsZero() {
		notAfter = time.Now().Add(24 * time.Hour)
	}
	notBefore := time.Now().Add(-time.Hour)
	if !notBefore.Before(notAfter) {
		notBefore = notAfter.Add(-time.Hour)
	}
	tmpl := &x509.Certificate{
		SerialNumber: newSerial(t),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if o.Server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	for _, h := range o.Hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	key := newKey(t)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatalf("testpki: certificate %q: %v", name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("testpki: certificate %q: %v", name, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatalf("testpki: key of %q: %v", name, err)
	}
	l := &Leaf{Cert: cert, CertPEM: encode("CERTIFICATE", der), KeyPEM: encode("EC PRIVATE KEY", keyDER)}
	dir := t.TempDir()
	l.CertFile = writeFile(t, dir, name+".crt", l.CertPEM)
	l.KeyFile = writeFile(t, dir, name+".key", l.KeyPEM)
	return l
}

// TLS returns l as a tls.Certificate, for a server or a client configured
// in the test itself (an httptest server's TLS config).
func (l *Leaf) TLS(t testing.TB) tls.Certificate {
	t.Helper()
	c, err := tls.X509KeyPair(l.CertPEM, l.KeyPEM)
	if err != nil {
		t.Fatalf("testpki: %v", err)
	}
	return c
}

// A PKI is a CA and the two certificates most tests want from it.
type PKI struct {
	CA *CA
	// Server is a server certificate for mcp.test, localhost and
	// 127.0.0.1: a test dials 127.0.0.1, or names mcp.test as the server
	// name to check that the name, not the address, is verified.
	Server *Leaf
	// Client is a client certificate, for mutual TLS.
	Client *Leaf
}

// New makes a CA and, signed by it, a server certificate and a client
// certificate, each valid for a day. Two calls make two unrelated CAs: a
// test that needs "another CA's client" calls it twice.
func New(t testing.TB) *PKI {
	t.Helper()
	ca := NewCA(t, "tako test CA")
	return &PKI{
		CA:     ca,
		Server: ca.Issue(t, "server", &Options{Server: true, Hosts: []string{"mcp.test", "localhost", "127.0.0.1"}}),
		Client: ca.Issue(t, "client", nil),
	}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("testpki: key: %v", err)
	}
	return k
}

func newSerial(t testing.TB) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		t.Fatalf("testpki: serial number: %v", err)
	}
	return n
}

func encode(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func writeFile(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	f := filepath.Join(dir, name)
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatalf("testpki: %v", err)
	}
	return f
}
