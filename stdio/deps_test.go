package stdio_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestStdioProgramLinksNoHTTP: a program that reaches its servers over
// stdio linked net/http and crypto/tls, 2.4 MiB of its RSS, because the
// HTTP transports' auth seam lived in transport, which every program
// links. It lives in transport/httpauth now; this keeps anything else
// from pulling the HTTP stack back into stdio, transport or mcp, and
// crypto/rand, which a session's cache key once took.
func TestStdioProgramLinksNoHTTP(t *testing.T) {
	// go test puts its own toolchain first on the PATH.
	out, err := exec.Command("go", "list", "-deps",
		"github.com/tako-mcp/tako/stdio",
		"github.com/tako-mcp/tako/transport",
		"github.com/tako-mcp/tako/mcp").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		switch pkg {
		case "net/http", "crypto/tls", "crypto/rand", "github.com/tako-mcp/tako/transport/httpauth":
			t.Errorf("a stdio program links %s", pkg)
		}
	}
}
