package mcpgrpc_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"log"
	"math/big"
	"net"
	"strings"
	"time"

	mcpgrpc "github.com/tako-mcp/tako/grpc"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
)

// The main use: dial a gRPC MCP server with mutual TLS, list its tools and
// call one. The Client is a transport.Transport: there is no handshake to
// run. The server here is the package's own server end on loopback, in
// front of mcptest's reference server (the demo server's tools), and the
// certificates are made on the spot; a program reads its certificates from
// files (TLSOptions.CertFile, KeyFile, CAFile, reloaded when they change)
// and dials its server's address.
func Example() {
	ctx := context.Background()
	serverCerts, clientCerts := examplePKI()

	// The server end.
	conn, wait := mcptest.NewReference(mcptest.Options{}).Pipe(ctx)
	defer wait()
	backend, err := transport.Connect(ctx, conn, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer backend.Close()
	serverTLS, err := mcpgrpc.ServerTLSConfig(serverCerts)
	if err != nil {
		log.Fatal(err)
	}
	srv, err := mcpgrpc.NewServer(backend, &mcpgrpc.ServerOptions{TLS: serverTLS})
	if err != nil {
		log.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go srv.Serve(lis)
	defer srv.Close()

	// The client.
	clientTLS, err := mcpgrpc.ClientTLSConfig(clientCerts)
	if err != nil {
		log.Fatal(err)
	}
	c, err := mcpgrpc.Dial(ctx, lis.Addr().String(), &mcpgrpc.Options{TLS: clientTLS})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	tools, err := c.ListTools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	fmt.Println("tools:", strings.Join(names, " "))

	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: json.RawMessage(`{"a":2,"b":3}`)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("2 + 3 =", res.Text())
	// Output:
	// tools: echo add progress sample elicit roots big notify sleep fail
	// 2 + 3 = 5
}

// examplePKI makes a CA and, signed by it, a certificate for a server on
// 127.0.0.1 and one for a client, and returns each end's TLSOptions: its
// own certificate and key, and the CA of the other end (here the same CA).
func examplePKI() (server, client mcpgrpc.TLSOptions) {
	caKey, caPEM, ca := exampleCert(nil, nil, &x509.Certificate{
		Subject:               pkix.Name{CommonName: "example CA"},
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	})
	serverPEM, serverKey := exampleLeaf(caKey, ca, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "example server"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	clientPEM, clientKey := exampleLeaf(caKey, ca, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "example client"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	server = mcpgrpc.TLSOptions{CertPEM: serverPEM, KeyPEM: serverKey, CAPEM: caPEM}
	client = mcpgrpc.TLSOptions{CertPEM: clientPEM, KeyPEM: clientKey, CAPEM: caPEM}
	return server, client
}

// exampleLeaf makes a certificate from template, signed by ca, and returns
// it and its key in PEM.
func exampleLeaf(caKey *ecdsa.PrivateKey, ca, template *x509.Certificate) (certPEM, keyPEM []byte) {
	key, certPEM, _ := exampleCert(caKey, ca, template)
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		log.Fatal(err)
	}
	return certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
}

// exampleCert makes a key and a certificate from template, valid for an hour,
// signed by caKey and ca (self-signed when they are nil).
func exampleCert(caKey *ecdsa.PrivateKey, ca, template *x509.Certificate) (*ecdsa.PrivateKey, []byte, *x509.Certificate) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		log.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	if err != nil {
		log.Fatal(err)
	}
	template.SerialNumber = serial
	template.NotBefore = time.Now().Add(-time.Minute)
	template.NotAfter = time.Now().Add(time.Hour)
	if ca == nil {
		ca, caKey = template, key
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca, &key.PublicKey, caKey)
	if err != nil {
		log.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		log.Fatal(err)
	}
	return key, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), cert
}
