package interop

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInspectWebSocketAndGRPC: where tako inspect goes beyond the MCP
// Inspector. The reference server behind tako's WebSocket bridge and
// behind `tako bridge --listen-grpc` with mutual TLS (a CA and
// certificates made here), both in one page, side by side: each connects,
// lists its tools, runs echo from the form and shows the result; the
// WebSocket server's history has the call's JSON-RPC messages, the gRPC
// server's (which has no messages) the operation.
func TestInspectWebSocketAndGRPC(t *testing.T) {
	ctx := strictTestContext(t, 2*time.Minute)
	node, args := everything(t)
	wsURL, _ := stdioBridge(t, node, args)
	pki := newTestPKI(t)
	grpcAddr := grpcBridge(t, "--listen-grpc", "127.0.0.1:0", "--tls-cert", pki.serverCert, "--tls-key", pki.serverKey, "--client-ca", pki.ca,
		"--stdio", everythingStdio(t))
	in := startInspector(t, ctx, nil, "--ws", wsURL, "--grpc", grpcAddr, "--ca", pki.ca, "--cert", pki.clientCert, "--key", pki.clientKey)
	p := openPage(t, newBrowser(t), in.URL)
	names := serverNames(t, in, ctx)
	for _, tc := range []struct{ name, kind, dir string }{
		{names["ws"], "WebSocket", "out"},
		{names["grpc"], "gRPC", "op"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			p.t = t
			pn := panel(tc.name)
			p.waitConnected(tc.name+" to connect", tc.name)
			if got := p.text(pn + " .target"); !strings.HasPrefix(got, tc.kind) {
				t.Errorf("the panel says %q, want the %s transport", got, tc.kind)
			}
			p.openTab(tc.name, "tools")
			p.click(pn + ` [data-tool="echo"]`)
			p.typeIn(pn+` [data-path="message"]`, "over "+tc.kind)
			p.click(pn + ` button.run`)
			p.waitFor("the echo result", fmt.Sprintf(`(document.querySelector(%q) || {}).innerText?.includes('Echo: over %s')`, pn+` .result[data-state="done"]`, tc.kind))
			p.screenshot(tc.kind + " tools")
			p.openTab(tc.name, "history")
			p.waitFor("the call in the history", fmt.Sprintf(`[...document.querySelectorAll(%q)].some((r) => r.dataset.method === 'tools/call' && r.classList.contains(%q))`, pn+` tr.h`, tc.dir))
			p.screenshot(tc.kind + " history")
		})
	}
}

// serverNames are the inspector's servers' names by kind.
func serverNames(t *testing.T, in *inspector, ctx context.Context) map[string]string {
	t.Helper()
	var st struct {
		Servers []struct{ Name, Kind string }
	}
	in.api(t, ctx, "GET", "/api/state", nil, &st)
	names := map[string]string{}
	for _, s := range st.Servers {
		names[s.Kind] = s.Name
	}
	return names
}

// grpcBridge runs `tako bridge` with args and returns the host:port of
// the grpc:// URL it prints; it is interrupted when the test ends.
func grpcBridge(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(takoCLI(t), append([]string{"bridge"}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr := &tailBuffer{max: 32 << 10}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	select {
	case l := <-lines:
		addr, ok := strings.CutPrefix(strings.TrimSpace(l), "grpc://")
		if !ok {
			t.Fatalf("tako bridge printed %q", l)
		}
		return addr
	case <-exited:
		t.Fatalf("tako bridge exited: %s", stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("tako bridge printed no URL within 30 s: %s", stderr)
	}
	return ""
}

// testPKI is a CA made at test time, a server certificate it signed for
// 127.0.0.1 and a client certificate, in files.
type testPKI struct{ ca, serverCert, serverKey, clientCert, clientKey string }

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	dir := t.TempDir()
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	serial := func() *big.Int { n, _ := rand.Int(rand.Reader, big.NewInt(1<<62)); return n }
	caKey := key()
	caTmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: "tako inspect test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	p := testPKI{ca: write("ca.crt", "CERTIFICATE", caDER)}
	issue := func(name string, server bool) (string, string) {
		k := key()
		tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
		if server {
			tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
			tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		} else {
			tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, _ := x509.MarshalECPrivateKey(k)
		return write(name+".crt", "CERTIFICATE", der), write(name+".key", "EC PRIVATE KEY", kder)
	}
	p.serverCert, p.serverKey = issue("server", true)
	p.clientCert, p.clientKey = issue("client", false)
	return p
}
