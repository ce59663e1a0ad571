package localguard_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/tako-mcp/tako/internal/localguard"
)

// TestAllowOriginsMatchExactly pins that an entry of AllowOrigins is an
// origin compared whole, never a prefix: with "http://localhost:5173"
// listed, a page on another port that starts with the same digits
// (http://localhost:51730) or on a lookalike name an attacker owns and can
// rebind (http://localhost:5173.evil.example) is refused, both through a
// real server and through Check. A prefix match would let any such page
// drive the local server (the DNS rebinding and cross-origin attacks of
// the package doc).
func TestAllowOriginsMatchExactly(t *testing.T) {
	g := &localguard.Guard{AllowOrigins: []string{"http://localhost:5173"}}
	addr, served := serve(t, g)
	for _, o := range []string{
		"http://localhost:51730",
		"http://localhost:5173.evil.example",
		"http://localhost:5173.evil.example:5173",
		"http://localhost:5173/x",
	} {
		if status, body := send(t, addr, addr, "/", origin(o)); status != http.StatusForbidden {
			t.Errorf("Origin %q: HTTP %d %q, want 403", o, status, body)
		}
		req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", o)
		if err := g.Check(req); !errors.Is(err, localguard.ErrOrigin) {
			t.Errorf("Check with Origin %q: %v, want ErrOrigin", o, err)
		}
	}
	// The listed origin itself still passes.
	if status, body := send(t, addr, addr, "/", origin("http://localhost:5173")); status != http.StatusOK {
		t.Errorf("the listed origin: HTTP %d %q, want 200", status, body)
	}
	if n := served(); n != 1 {
		t.Errorf("served %d requests, want only the listed origin's", n)
	}
}
