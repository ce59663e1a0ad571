package transport_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// TestExpiryOfInitializedDuringRenewalDoesNotDeadlock pins Notify's
// refusal to renew the session for notifications/initialized. A legacy
// session renews itself (initialize, then notifications/initialized)
// holding the renewal lock; when the server forgets the new session too,
// before notifications/initialized reaches it (an HTTP 404 on that POST),
// Notify renewing again took the same lock and the call hung forever,
// whatever its context said. Streamable HTTP only showed it as a test
// timeout. The call must fail with ErrSessionExpired instead.
func TestExpiryOfInitializedDuringRenewalDoesNotDeadlock(t *testing.T) {
	f, conn := startFake(t, legacy(mcp.Version20251125, echoTool))
	expired := fmt.Errorf("HTTP 404: session not found: %w", transport.ErrSessionExpired)
	var initialized, calls int
	fc := &faultConn{Conn: conn}
	fc.onWrite = func(m *mcp.Message) error {
		switch m.Method {
		case mcp.NotificationInitialized:
			initialized++
			if initialized > 1 { // the handshake's goes through; the renewal's does not
				return expired
			}
		case mcp.MethodToolsCall:
			calls++
			if calls == 1 {
				return expired
			}
		}
		return nil
	}
	s := connect(t, fc, &transport.Options{ProtocolVersion: mcp.Version20251125})
	ctx, cancel := context.WithTimeout(context.Background(), fakeWait)
	defer cancel()
	args := quoted(t, "rapport «annuel»\n\"v2\"")
	done := make(chan error, 1)
	go func() {
		_, err := echoCall(ctx, s, args)
		done <- err
	}()
	// The deadlock ignores ctx: bound the wait here, shorter than ctx,
	// so that the failure says what broke.
	timer := time.NewTimer(fakeWait / 2)
	defer timer.Stop()
	var err error
	select {
	case err = <-done:
	case <-timer.C:
		t.Fatalf("the call hung for %v: renewing the session again for a failed notifications/initialized "+
			"deadlocks on the renewal already under way", fakeWait/2)
	}
	if !errors.Is(err, transport.ErrSessionExpired) {
		t.Fatalf("call = %v, want ErrSessionExpired", err)
	}
	if n := len(f.messages(mcp.MethodInitialize)); n != 2 {
		t.Errorf("%d initialize requests, want 2: the handshake and one renewal", n)
	}
}
