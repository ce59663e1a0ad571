package bench

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
	"time"
)

// Certs are the PEM files of a mutual TLS setup made at run time: a CA,
// a server certificate for 127.0.0.1 and a client certificate, both signed
// by it. Nothing is kept between runs.
type Certs struct {
	Dir                   string
	CA                    string
	ServerCert, ServerKey string
	ClientCert, ClientKey string
}

// MakeCerts writes a fresh CA, server and client certificate into a new
// temporary directory; Remove deletes it.
func MakeCerts() (*Certs, error) {
	dir, err := os.MkdirTemp("", "tako-bench-certs-")
	if err != nil {
		return nil, err
	}
	c := &Certs{
		Dir:        dir,
		CA:         filepath.Join(dir, "ca.pem"),
		ServerCert: filepath.Join(dir, "server.pem"),
		ServerKey:  filepath.Join(dir, "server-key.pem"),
		ClientCert: filepath.Join(dir, "client.pem"),
		ClientKey:  filepath.Join(dir, "client-key.pem"),
	}
	if err := c.write(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return c, nil
}

// Remove deletes the files.
func (c *Certs) Remove() error { return os.RemoveAll(c.Dir) }

func (c *Certs) write() error {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "bench CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	if err := writePEM(c.CA, "CERTIFICATE", caDER); err != nil {
		return err
	}
	leaf := func(serial int64, name string, usage x509.ExtKeyUsage, certFile, keyFile string) error {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: name},
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(24 * time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
			IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return err
		}
		kder, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return err
		}
		if err := writePEM(certFile, "CERTIFICATE", der); err != nil {
			return err
		}
		return writePEM(keyFile, "PRIVATE KEY", kder)
	}
	if err := leaf(2, "bench server", x509.ExtKeyUsageServerAuth, c.ServerCert, c.ServerKey); err != nil {
		return err
	}
	return leaf(3, "bench client", x509.ExtKeyUsageClientAuth, c.ClientCert, c.ClientKey)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
