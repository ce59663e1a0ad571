package transport_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// The fallback to the 2024-11-05 wire is the engine's decision: a Conn
// reports an initialize refused with ErrLegacyWire, and the engine asks it
// to switch (Informed.SwitchWire), once, and initializes again. The real
// wire (a 2024-11-05 HTTP+SSE server) is tested in streamablehttp and
// interop; these pin the engine's side of the seam.

// legacyWireConn is a Conn whose initialize is refused with ErrLegacyWire
// until SwitchWire succeeds (or, with always, for good).
func legacyWireConn(t *testing.T, switchErr error, always bool) (*fakeServer, *informedConn) {
	f, conn := startFake(t, legacy(mcp.Version20241105, echoTool))
	var switched atomic.Bool
	fc := &faultConn{Conn: conn}
	fc.onWrite = func(m *mcp.Message) error {
		if m.Method == mcp.MethodInitialize && (always || !switched.Load()) {
			return fmt.Errorf("%w: HTTP 405", transport.ErrLegacyWire)
		}
		return nil
	}
	ic := &informedConn{Conn: fc, switchWire: func(context.Context) error {
		if switchErr != nil {
			return switchErr
		}
		switched.Store(true)
		return nil
	}}
	return f, ic
}

func connectWithin(conn transport.Conn) (*transport.Session, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return transport.Connect(ctx, conn, &transport.Options{ProtocolVersion: mcp.Version20241105})
}

func TestLegacyWireSwitchIsTheEnginesDecision(t *testing.T) {
	f, ic := legacyWireConn(t, nil, false)
	s, err := connectWithin(ic)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer s.Close()
	if v := s.ServerInfo().ProtocolVersion; v != mcp.Version20241105 {
		t.Errorf("negotiated %q, want %s", v, mcp.Version20241105)
	}
	if n := len(f.messages(mcp.MethodInitialize)); n != 1 {
		t.Errorf("the server got %d initialize requests, want the one sent after the switch", n)
	}
	if ic.switches != 1 {
		t.Errorf("SwitchWire called %d times, want 1", ic.switches)
	}
	if _, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo"}); err != nil {
		t.Errorf("a call after the switch: %v", err)
	}
}

// TestLegacyWireSwitchFailingReportsBoth: when the older wire is not there
// either, Connect says why each failed.
func TestLegacyWireSwitchFailingReportsBoth(t *testing.T) {
	noStream := errors.New("GET: 404 Not Found")
	_, ic := legacyWireConn(t, noStream, false)
	_, err := connectWithin(ic)
	if !errors.Is(err, transport.ErrLegacyWire) || !errors.Is(err, noStream) {
		t.Fatalf("Connect: %v, want both the refusal and the switch's error", err)
	}
	if ic.switches != 1 {
		t.Errorf("SwitchWire called %d times, want 1", ic.switches)
	}
}

// TestLegacyWireSwitchesOnce: a Conn that refuses the initialize on the
// older wire too is not asked to switch again.
func TestLegacyWireSwitchesOnce(t *testing.T) {
	_, ic := legacyWireConn(t, nil, true)
	_, err := connectWithin(ic)
	if !errors.Is(err, transport.ErrLegacyWire) {
		t.Fatalf("Connect: %v, want ErrLegacyWire", err)
	}
	if ic.switches != 1 {
		t.Errorf("SwitchWire called %d times, want 1", ic.switches)
	}
}

// TestLegacyWireWithoutInformed: a Conn that is not Informed cannot be
// asked; its error is Connect's.
func TestLegacyWireWithoutInformed(t *testing.T) {
	_, ic := legacyWireConn(t, nil, false)
	_, err := connectWithin(ic.Conn)
	if !errors.Is(err, transport.ErrLegacyWire) {
		t.Fatalf("Connect: %v, want ErrLegacyWire", err)
	}
}
