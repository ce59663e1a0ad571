package testpki_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/tako-mcp/tako/internal/testpki"
)

// New's certificates verify as what they are for, against the CA's pool and
// no other, and its files hold what the fields do.
func TestNewVerifies(t *testing.T) {
	p := testpki.New(t)
	for _, host := range []string{"mcp.test", "localhost", "127.0.0.1"} {
		if _, err := p.Server.Cert.Verify(x509.VerifyOptions{DNSName: host, Roots: p.CA.Pool}); err != nil {
			t.Errorf("the server certificate for %s: %v", host, err)
		}
	}
	if _, err := p.Server.Cert.Verify(x509.VerifyOptions{DNSName: "other.test", Roots: p.CA.Pool}); err == nil {
		t.Error("the server certificate verifies for other.test")
	}
	client := x509.VerifyOptions{Roots: p.CA.Pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if _, err := p.Client.Cert.Verify(client); err != nil {
		t.Errorf("the client certificate: %v", err)
	}
	if _, err := p.Client.Cert.Verify(x509.VerifyOptions{Roots: p.CA.Pool}); err == nil {
		t.Error("the client certificate verifies as a server's")
	}
	if _, err := p.Client.Cert.Verify(x509.VerifyOptions{Roots: testpki.New(t).CA.Pool, KeyUsages: client.KeyUsages}); err == nil {
		t.Error("the client certificate verifies against another New's CA")
	}
	for f, want := range map[string][]byte{p.CA.File: p.CA.PEM, p.Server.CertFile: p.Server.CertPEM, p.Server.KeyFile: p.Server.KeyPEM, p.Client.CertFile: p.Client.CertPEM, p.Client.KeyFile: p.Client.KeyPEM} {
		if got, err := os.ReadFile(f); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %v, or not what the field holds", f, err)
		}
	}
}

// A NotAfter in the past makes a certificate that is refused as expired,
// and nothing else.
func TestIssueExpired(t *testing.T) {
	ca := testpki.NewCA(t, "CA")
	stale := ca.Issue(t, "stale", &testpki.Options{NotAfter: time.Now().Add(-time.Hour)})
	_, err := stale.Cert.Verify(x509.VerifyOptions{Roots: ca.Pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	var invalid x509.CertificateInvalidError
	if !errors.As(err, &invalid) || invalid.Reason != x509.Expired {
		t.Fatalf("an expired certificate: %v, want x509.Expired", err)
	}
	if _, err := stale.Cert.Verify(x509.VerifyOptions{Roots: ca.Pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, CurrentTime: stale.Cert.NotAfter.Add(-time.Minute)}); err != nil {
		t.Errorf("the same certificate before it expired: %v", err)
	}
}

// The leaves work in a real mutual TLS handshake: the server presents its
// certificate for 127.0.0.1, the client its own, and each end verifies the
// other against the CA.
func TestMutualTLSHandshake(t *testing.T) {
	p := testpki.New(t)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{p.Server.TLS(t)},
		ClientCAs:    p.CA.Pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	served := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			served <- err
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(30 * time.Second))
		served <- c.(*tls.Conn).Handshake()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d := tls.Dialer{Config: &tls.Config{RootCAs: p.CA.Pool, Certificates: []tls.Certificate{p.Client.TLS(t)}}}
	c, err := d.DialContext(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := <-served; err != nil {
		t.Fatalf("the server's end of the handshake: %v", err)
	}
	if peer := c.(*tls.Conn).ConnectionState().PeerCertificates; len(peer) == 0 || !peer[0].Equal(p.Server.Cert) {
		t.Error("the client was not shown the server certificate")
	}
}
