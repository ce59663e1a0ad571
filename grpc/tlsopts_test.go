package mcpgrpc_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	mcpgrpc "github.com/tako-mcp/tako/grpc"
	"github.com/tako-mcp/tako/internal/syncbuf"
	"github.com/tako-mcp/tako/internal/testpki"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/transport"
)

// A server certificate rotated on disk is served on the next connection,
// without a restart.
func TestServerCertificateReloaded(t *testing.T) {
	p := newPKI(t)
	backend := referenceBackend(t, mcptest.NewReference(mcptest.Options{}), transport.Handlers{})
	caFile := p.CA.File
	stls, err := mcpgrpc.ServerTLSConfig(mcpgrpc.TLSOptions{CertFile: p.Server.CertFile, KeyFile: p.Server.KeyFile, CAFile: caFile})
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := startBridge(t, backend, &mcpgrpc.ServerOptions{TLS: stls})
	client := mcpgrpc.TLSOptions{CertFile: p.Client.CertFile, KeyFile: p.Client.KeyFile, CAPEM: p.CA.PEM}

	client.ServerName = "mcp.test"
	c, err := dialTLS(t, addr, client)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()

	rotated := p.CA.Issue(t, "rotated-server-certificate", &testpki.Options{Server: true, Hosts: []string{"rotated.test", "127.0.0.1"}, NotAfter: time.Now().Add(time.Hour)})
	for _, f := range [][2]string{{rotated.CertFile, p.Server.CertFile}, {rotated.KeyFile, p.Server.KeyFile}} {
		b, err := os.ReadFile(f[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f[1], b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	client.ServerName = "rotated.test"
	c, err = dialTLS(t, addr, client)
	if err != nil {
		t.Fatalf("after rotation: %v", err)
	}
	c.Close()
}

func TestTLSOptionsChecked(t *testing.T) {
	p := newPKI(t)
	bad := []struct {
		name   string
		server bool
		o      mcpgrpc.TLSOptions
	}{
		{"client without CA", false, mcpgrpc.TLSOptions{}},
		{"cert without key", false, mcpgrpc.TLSOptions{CAPEM: p.CA.PEM, CertFile: p.Client.CertFile}},
		{"files and PEM", false, mcpgrpc.TLSOptions{CAPEM: p.CA.PEM, CertFile: p.Client.CertFile, KeyFile: p.Client.KeyFile, CertPEM: p.Client.CertPEM, KeyPEM: p.Client.KeyPEM}},
		{"CA PEM without certificates", false, mcpgrpc.TLSOptions{CAPEM: []byte("not pem")}},
		{"server without certificate", true, mcpgrpc.TLSOptions{CAPEM: p.CA.PEM}},
		{"key that does not match", true, mcpgrpc.TLSOptions{CertPEM: p.Server.CertPEM, KeyPEM: p.Client.KeyPEM}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.server {
				_, err = mcpgrpc.ServerTLSConfig(tc.o)
			} else {
				_, err = mcpgrpc.ClientTLSConfig(tc.o)
			}
			if !errors.Is(err, mcpgrpc.ErrTLSConfig) {
				t.Fatalf("err = %v, want ErrTLSConfig", err)
			}
		})
	}
	cfg, err := mcpgrpc.ClientTLSConfig(mcpgrpc.TLSOptions{CAPEM: p.CA.PEM})
	if err != nil || cfg.MinVersion != 0x0304 {
		t.Errorf("default MinVersion = %#x, %v; want TLS 1.3", cfg.MinVersion, err)
	}
}

// Plain text is never a default: both ends refuse to start without TLS
// unless InsecurePlaintext is named.
func TestPlaintextOnlyByName(t *testing.T) {
	if _, err := mcpgrpc.Dial(context.Background(), "127.0.0.1:1", nil); !errors.Is(err, mcpgrpc.ErrTLSConfig) {
		t.Errorf("Dial without TLS: %v", err)
	}
	backend := referenceBackend(t, mcptest.NewReference(mcptest.Options{}), transport.Handlers{})
	if _, err := mcpgrpc.NewServer(backend, nil); !errors.Is(err, mcpgrpc.ErrTLSConfig) {
		t.Errorf("NewServer without TLS: %v", err)
	}
}

// The client reads its certificate files again when they change: one
// *tls.Config serves before and after a rotation.
func TestClientCertificateReloaded(t *testing.T) {
	p := newPKI(t)
	addr := mtlsBridge(t, p)
	fresh := p.CA.Issue(t, "rotating-client", &testpki.Options{NotAfter: time.Now().Add(time.Hour)})
	ctls, err := mcpgrpc.ClientTLSConfig(mcpgrpc.TLSOptions{CertFile: fresh.CertFile, KeyFile: fresh.KeyFile, CAPEM: p.CA.PEM, ServerName: "mcp.test"})
	if err != nil {
		t.Fatal(err)
	}
	dial := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c, err := mcpgrpc.Dial(ctx, addr, &mcpgrpc.Options{TLS: ctls})
		if err == nil {
			c.Close()
		}
		return err
	}
	if err := dial(); err != nil {
		t.Fatal(err)
	}
	// Rotate to the expired certificate: the same config now presents it.
	for _, f := range [][2]string{{p.stale.CertFile, fresh.CertFile}, {p.stale.KeyFile, fresh.KeyFile}} {
		b, err := os.ReadFile(f[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f[1], b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := dial(); err == nil || !strings.Contains(err.Error(), "expired certificate") {
		t.Fatalf("after rotating to an expired certificate: %v", err)
	}
}

// Issue 20, point 2, for users of ServerTLSConfig: a client CA file that is
// emptied, half written or removed made the reload yield no pool, and the
// server stopped asking for client certificates. Each such reload keeps
// the last good CA and logs it once; a complete new CA is then taken.
func TestServerKeepsClientCAWhenFileEmptied(t *testing.T) {
	p := newPKI(t)
	next := testpki.NewCA(t, "the next client CA")
	nextClient := next.Issue(t, "next-client", &testpki.Options{NotAfter: time.Now().Add(time.Hour)})
	caFile := p.CA.File
	logs := &syncbuf.Buffer{}
	stls, err := mcpgrpc.ServerTLSConfig(mcpgrpc.TLSOptions{CertFile: p.Server.CertFile, KeyFile: p.Server.KeyFile, CAFile: caFile,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	backend := referenceBackend(t, mcptest.NewReference(mcptest.Options{}), transport.Handlers{})
	addr, _ := startBridge(t, backend, &mcpgrpc.ServerOptions{TLS: stls})
	dial := func(l *testpki.Leaf) error {
		o := mcpgrpc.TLSOptions{CAPEM: p.CA.PEM, ServerName: "mcp.test"}
		if l != nil {
			o.CertFile, o.KeyFile = l.CertFile, l.KeyFile
		}
		c, err := dialTLS(t, addr, o)
		if err == nil {
			c.Close()
		}
		return err
	}
	keeps := func(when string) {
		t.Helper()
		if err := dial(nil); err == nil || !strings.Contains(err.Error(), "certificate required") {
			t.Errorf("%s: a client without a certificate: %v, want it refused", when, err)
		}
		if err := dial(p.Client); err != nil {
			t.Errorf("%s: the first CA's client: %v", when, err)
		}
	}
	keeps("at the start")
	steps := []struct {
		name   string
		change func() error
	}{
		{"emptied", func() error { return os.Truncate(caFile, 0) }},
		{"half written", func() error { return os.WriteFile(caFile, next.PEM[:len(next.PEM)/2], 0o600) }},
		{"removed", func() error { return os.Remove(caFile) }},
	}
	for _, step := range steps {
		before := strings.Count(logs.String(), "\n")
		if err := step.change(); err != nil {
			t.Fatal(err)
		}
		keeps("CA file " + step.name)
		keeps("CA file " + step.name + ", again")
		lines := strings.Split(strings.TrimSpace(logs.String()), "\n")[before:]
		if len(lines) != 1 || !strings.Contains(lines[0], "level=WARN") || !strings.Contains(lines[0], "keeping the one loaded before") || !strings.Contains(lines[0], caFile) {
			t.Errorf("CA file %s: logged %q, want one warning that names the file", step.name, lines)
		}
	}
	if err := os.WriteFile(caFile, next.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := dial(nextClient); err != nil {
		t.Errorf("the new CA's client: %v", err)
	}
	if err := dial(p.Client); err == nil || !strings.Contains(err.Error(), "unknown certificate authority") {
		t.Errorf("the first CA's client after the new CA was written: %v, want it refused", err)
	}
	if err := dial(nil); err == nil {
		t.Error("a client without a certificate was let in after the new CA was written")
	}
}
