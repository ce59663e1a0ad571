package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcpgrpc "github.com/tako-mcp/tako/grpc"
	"github.com/tako-mcp/tako/internal/syncbuf"
	"github.com/tako-mcp/tako/internal/testpki"
	"github.com/tako-mcp/tako/internal/testserve"
	"github.com/tako-mcp/tako/mcp"
)

// TestBridgeGRPC is the README's example: serve a stdio server over gRPC
// with mutual TLS, then list and call its tools with --grpc.
func TestBridgeGRPC(t *testing.T) {
	p := testpki.New(t)
	url := bridge(t, "--listen-grpc", "127.0.0.1:0", "--tls-cert", p.Server.CertFile, "--tls-key", p.Server.KeyFile, "--client-ca", p.CA.File, "--stdio", demoCommand(t))
	addr, ok := strings.CutPrefix(url, "grpc://")
	if !ok {
		t.Fatalf("bridge printed %q, want grpc://HOST:PORT", url)
	}
	r := tako(t, "tools", "--grpc", addr, "--cert", p.Client.CertFile, "--key", p.Client.KeyFile, "--ca", p.CA.File, "--server-name", "mcp.test")
	if r.code != 0 || !strings.Contains(r.stdout, "\necho(message) ") {
		t.Fatalf("tools --grpc: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = tako(t, "call", "echo", `{"message":"hello over grpc"}`, "--grpc", addr, "--cert", p.Client.CertFile, "--key", p.Client.KeyFile, "--ca", p.CA.File)
	if r.code != 0 || r.stdout != "hello over grpc\n" {
		t.Fatalf("call --grpc: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// Without a client certificate the bridge refuses, and says why.
	r = tako(t, "tools", "--grpc", addr, "--ca", p.CA.File)
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

// Issue 11, point 8: given a server certificate but no --client-ca, the
// gRPC bridge used to accept clients without a certificate, silently.
// Mutual TLS is the default now: without --client-ca (or --no-client-auth,
// by name) the bridge does not start, and says so as a usage error.
func TestGRPCBridgeWithoutClientCARefusesToStart(t *testing.T) {
	p := testpki.New(t)
	addr := testserve.ClosedAddr(t)
	// Bounded, so that a bridge that starts (the bug) ends the test with
	// its exit status 0 instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var stdout, stderr syncbuf.Buffer
	code := run(ctx, []string{"bridge", "--listen-grpc", addr, "--tls-cert", p.Server.CertFile, "--tls-key", p.Server.KeyFile, "--stdio", demoCommand(t)}, &stdout, &stderr)
	r := result{code: code, stdout: stdout.String(), stderr: stderr.String()}
	r.wantFailure(t, 2, "--client-ca", "--no-client-auth")
	if r.stdout != "" {
		t.Errorf("the bridge printed %q: it started", r.stdout)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Errorf("something listens on %s after the refusal", addr)
	}
}

// The TLS flags of --listen-grpc are checked before anything starts; each
// mistake is a usage error (status 2), not a failure to serve (3).
func TestGRPCBridgeTLSFlagsAreUsageErrors(t *testing.T) {
	p := testpki.New(t)
	demo := demoCommand(t)
	tests := []struct {
		name string
		args []string
		says string
	}{
		{"no TLS flag", []string{"--listen-grpc", "127.0.0.1:0"}, "--tls-cert"},
		{"plaintext with a certificate", []string{"--listen-grpc", "127.0.0.1:0", "--plaintext", "--tls-cert", p.Server.CertFile, "--tls-key", p.Server.KeyFile}, "--plaintext goes without"},
		{"plaintext without client auth", []string{"--listen-grpc", "127.0.0.1:0", "--plaintext", "--no-client-auth"}, "--plaintext goes without"},
		{"client CA and no client auth", []string{"--listen-grpc", "127.0.0.1:0", "--tls-cert", p.Server.CertFile, "--tls-key", p.Server.KeyFile, "--client-ca", p.CA.File, "--no-client-auth"}, "contradict"},
		{"client CA on the WebSocket end", []string{"--listen-ws", "127.0.0.1:0", "--tls-cert", p.Server.CertFile, "--tls-key", p.Server.KeyFile, "--client-ca", p.CA.File}, "--listen-ws does not verify client certificates"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := refused(t, append(append([]string{"bridge"}, tc.args...), "--stdio", demo)...)
			r.wantFailure(t, 2, tc.says)
		})
	}
	tako(t, "tools", "--grpc", "127.0.0.1:9", "--no-client-auth").wantFailure(t, 2, "--no-client-auth is a flag of tako bridge")
}

// With --client-ca the bridge verifies every client: no certificate, or
// one from another CA, is refused at the handshake; the CA's client is
// served.
func TestGRPCBridgeRequiresClientCertificate(t *testing.T) {
	p, stranger := testpki.New(t), testpki.New(t)
	url := bridge(t, "--listen-grpc", "127.0.0.1:0", "--tls-cert", p.Server.CertFile, "--tls-key", p.Server.KeyFile, "--client-ca", p.CA.File, "--stdio", demoCommand(t))
	addr := strings.TrimPrefix(url, "grpc://")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dial := func(opts mcpgrpc.TLSOptions) (*mcpgrpc.Client, error) {
		cfg, err := mcpgrpc.ClientTLSConfig(opts)
		if err != nil {
			t.Fatal(err)
		}
		return mcpgrpc.Dial(ctx, addr, &mcpgrpc.Options{TLS: cfg})
	}
	for _, tc := range []struct {
		name string
		opts mcpgrpc.TLSOptions
		says string
	}{
		{"no certificate", mcpgrpc.TLSOptions{CAFile: p.CA.File, ServerName: "mcp.test"}, "certificate required"},
		{"another CA's certificate", mcpgrpc.TLSOptions{CertFile: stranger.Client.CertFile, KeyFile: stranger.Client.KeyFile, CAFile: p.CA.File, ServerName: "mcp.test"}, "unknown certificate authority"},
	} {
		c, err := dial(tc.opts)
		if err == nil {
			c.Close()
			t.Errorf("%s: the bridge accepted the client", tc.name)
			continue
		}
		if !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want it to say %q", tc.name, err, tc.says)
		}
	}
	c, err := dial(mcpgrpc.TLSOptions{CertFile: p.Client.CertFile, KeyFile: p.Client.KeyFile, CAFile: p.CA.File, ServerName: "mcp.test"})
	if err != nil {
		t.Fatalf("the CA's client: %v", err)
	}
	defer c.Close()
	if tools, err := c.ListTools(ctx); err != nil || len(tools) == 0 {
		t.Fatalf("ListTools: %d tools, %v", len(tools), err)
	}
}

// --no-client-auth serves TLS to clients without a certificate, as asked
// by name, and warns on stderr that it does.
func TestGRPCBridgeNoClientAuthWarns(t *testing.T) {
	p := testpki.New(t)
	url, _, stderr := startBridgeStderr(t, "--listen-grpc", "127.0.0.1:0", "--tls-cert", p.Server.CertFile, "--tls-key", p.Server.KeyFile, "--no-client-auth", "--stdio", demoCommand(t))
	addr := strings.TrimPrefix(url, "grpc://")
	if s := stderr(); !strings.Contains(s, "tako: warning: --no-client-auth") || !strings.Contains(s, "without a certificate") {
		t.Errorf("stderr %q has no warning", s)
	}
	r := tako(t, "call", "echo", `{"message":"no client certificate"}`, "--grpc", addr, "--ca", p.CA.File, "--server-name", "mcp.test")
	if r.code != 0 || r.stdout != "no client certificate\n" {
		t.Fatalf("call without a client certificate: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// A 16 MiB tool result, four times grpc-go's default message cap, crosses
// the gRPC bridge with no option raised anywhere: the bridge's server end
// and mcpgrpc.Dial's client both default to transport.DefaultMaxMessageSize.
func TestGRPCBridgeLargeResultWithDefaults(t *testing.T) {
	const size = 16 << 20
	p := testpki.New(t)
	url := bridge(t, "--listen-grpc", "127.0.0.1:0", "--tls-cert", p.Server.CertFile, "--tls-key", p.Server.KeyFile, "--client-ca", p.CA.File, "--stdio", demoCommand(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := mcpgrpc.ClientTLSConfig(mcpgrpc.TLSOptions{CertFile: p.Client.CertFile, KeyFile: p.Client.KeyFile, CAFile: p.CA.File, ServerName: "mcp.test"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := mcpgrpc.Dial(ctx, strings.TrimPrefix(url, "grpc://"), &mcpgrpc.Options{TLS: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "big", Arguments: json.RawMessage(fmt.Sprintf(`{"bytes":%d}`, size))})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Text(); len(text) != size || strings.Trim(text, "x") != "" {
		t.Fatalf("big: %d bytes, want %d bytes of 'x'", len(text), size)
	}
	// And through the CLI.
	r := tako(t, "call", "big", fmt.Sprintf(`{"bytes":%d}`, size), "--grpc", strings.TrimPrefix(url, "grpc://"), "--cert", p.Client.CertFile, "--key", p.Client.KeyFile, "--ca", p.CA.File)
	if r.code != 0 || len(r.stdout) != size+1 {
		t.Fatalf("tako call big --grpc: exit %d, %d bytes on stdout, stderr %q", r.code, len(r.stdout), r.stderr)
	}
}

// Issue 20, point 2: truncating the --client-ca file (`: > ca.pem`, or a
// rewrite caught half-written) made the next handshake reload an empty
// pool without an error, and the bridge then let in clients without a
// certificate. A reload that yields no CA keeps the last good one and says
// so on stderr; a complete new CA is taken.
func TestGRPCBridgeKeepsCAWhenFileEmptied(t *testing.T) {
	p, next := testpki.New(t), testpki.New(t)
	clientCA := filepath.Join(t.TempDir(), "client-ca.pem")
	copyFile(t, p.CA.File, clientCA)
	url, _, stderr := startBridgeStderr(t, "--listen-grpc", "127.0.0.1:0", "--tls-cert", p.Server.CertFile, "--tls-key", p.Server.KeyFile, "--client-ca", clientCA, "--stdio", demoCommand(t))
	addr := strings.TrimPrefix(url, "grpc://")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// call dials with the client certificate cert/key (none when empty)
	// and lists the tools: nil when the bridge let the client in.
	call := func(cert, key string) error {
		cfg, err := mcpgrpc.ClientTLSConfig(mcpgrpc.TLSOptions{CertFile: cert, KeyFile: key, CAFile: p.CA.File, ServerName: "mcp.test"})
		if err != nil {
			t.Fatal(err)
		}
		c, err := mcpgrpc.Dial(ctx, addr, &mcpgrpc.Options{TLS: cfg})
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.ListTools(ctx)
		return err
	}
	expect := func(when, who string, err error, says string) {
		t.Helper()
		switch {
		case says == "" && err != nil:
			t.Errorf("%s: %s was refused: %v", when, who, err)
		case says != "" && err == nil:
			t.Errorf("%s: %s was let in", when, who)
		case says != "" && !strings.Contains(err.Error(), says):
			t.Errorf("%s: %s refused with %v, want it to say %q", when, who, err, says)
		}
	}
	check := func(when string) {
		t.Helper()
		expect(when, "a client without a certificate", call("", ""), "certificate required")
		expect(when, "the first CA's client", call(p.Client.CertFile, p.Client.KeyFile), "")
	}
	check("at the start")

	if err := os.Truncate(clientCA, 0); err != nil { // : > client-ca.pem
		t.Fatal(err)
	}
	check("after the CA file was emptied")

	pemBytes, err := os.ReadFile(next.CA.File)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(clientCA, pemBytes[:len(pemBytes)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	check("with the CA file half written")
	if s := stderr(); !strings.Contains(s, clientCA) || !strings.Contains(s, "keeping") {
		t.Errorf("stderr does not say that the CA was kept: %q", s)
	}

	if err := os.WriteFile(clientCA, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("stderr: %s", stderr())
	when := "after the new CA was written out"
	expect(when, "the new CA's client", call(next.Client.CertFile, next.Client.KeyFile), "")
	expect(when, "the first CA's client", call(p.Client.CertFile, p.Client.KeyFile), "unknown certificate authority")
	expect(when, "a client without a certificate", call("", ""), "certificate required")
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
