package main

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
	"strings"
	"testing"
	"time"
)

// grpcPKI writes a CA, a server certificate for mcp.test and 127.0.0.1 and
// a client certificate into dir, and returns the file names.
type grpcPKI struct{ ca, serverCert, serverKey, clientCert, clientKey string }

func newGRPCPKI(t *testing.T) grpcPKI {
	t.Helper()
	dir := t.TempDir()
	write := func(name, typ string, der []byte) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	serial := func() *big.Int {
		n, err := rand.Int(rand.Reader, big.NewInt(1<<62))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	caKey := key()
	caTmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: "tako cli test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	var p grpcPKI
	p.ca = write("ca.crt", "CERTIFICATE", caDER)
	issue := func(name string, server bool) (string, string) {
		k := key()
		tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
		if server {
			tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
			tmpl.DNSNames = []string{"mcp.test"}
			tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		} else {
			tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return write(name+".crt", "CERTIFICATE", der), write(name+".key", "EC PRIVATE KEY", kder)
	}
	p.serverCert, p.serverKey = issue("server", true)
	p.clientCert, p.clientKey = issue("client", false)
	return p
}

// TestBridgeGRPC is the README's example: serve a stdio server over gRPC
// with mutual TLS, then list and call its tools with --grpc.
func TestBridgeGRPC(t *testing.T) {
	p := newGRPCPKI(t)
	url := bridge(t, "--listen-grpc", "127.0.0.1:0", "--tls-cert", p.serverCert, "--tls-key", p.serverKey, "--client-ca", p.ca, "--stdio", demoCommand(t))
	addr, ok := strings.CutPrefix(url, "grpc://")
	if !ok {
		t.Fatalf("bridge printed %q, want grpc://HOST:PORT", url)
	}
	r := tako(t, "tools", "--grpc", addr, "--cert", p.clientCert, "--key", p.clientKey, "--ca", p.ca, "--server-name", "mcp.test")
	if r.code != 0 || !strings.Contains(r.stdout, "\necho ") {
		t.Fatalf("tools --grpc: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = tako(t, "call", "echo", `{"message":"hello over grpc"}`, "--grpc", addr, "--cert", p.clientCert, "--key", p.clientKey, "--ca", p.ca)
	if r.code != 0 || r.stdout != "hello over grpc\n" {
		t.Fatalf("call --grpc: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// Without a client certificate the bridge refuses, and says why.
	r = tako(t, "tools", "--grpc", addr, "--ca", p.ca)
	r.wantFailure(t, 3, "certificate required")
}

func TestBridgeGRPCPlaintextByName(t *testing.T) {
	url := bridge(t, "--listen-grpc", "127.0.0.1:0", "--plaintext", "--stdio", demoCommand(t))
	addr := strings.TrimPrefix(url, "grpc://")
	r := tako(t, "call", "echo", `{"message":"in the clear"}`, "--grpc", addr, "--plaintext")
	if r.code != 0 || r.stdout != "in the clear\n" {
		t.Fatalf("call --grpc --plaintext: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
