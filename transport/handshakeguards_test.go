package transport_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// TestInitializeAnsweredWithModernVersionRefused pins the refusal of an
// initialize answered with the 2026-07-28 revision. That revision has no
// initialize, no session and no notifications/initialized: a server that
// names it there has mixed the two eras, and taken as a legacy session it
// would get 2026 requests shaped for a wire it never set up (or legacy
// ones it does not expect). The engine refuses it as an unsupported
// version and sends nothing more, not notifications/initialized.
func TestInitializeAnsweredWithModernVersionRefused(t *testing.T) {
	f, conn := startFake(t, legacy(mcp.Version20260728, echoTool))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := transport.Connect(ctx, conn, nil)
	if err == nil {
		s.Close()
		t.Fatalf("Connect took an initialize answered with %s as a legacy session", mcp.Version20260728)
	}
	if !errors.Is(err, transport.ErrUnsupportedVersion) {
		t.Fatalf("Connect: %v, want an error wrapping ErrUnsupportedVersion", err)
	}
	if n := len(f.messages(mcp.NotificationInitialized)); n != 0 {
		t.Fatalf("notifications/initialized sent %d times after the refused answer", n)
	}
}
