package websocket_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	gorilla "github.com/gorilla/websocket"

	"github.com/tako-mcp/tako/internal/testpki"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/websocket"
)

// TestWriteCancelledAnyTimeIsCut pins the cut of a Write whose context is
// cancelled while its message goes out, wherever the cancellation lands.
// It was made by setting the socket's write deadline in the past; but
// gorilla sets that deadline again before every frame it writes, so a
// cancellation that came before the first frame of a large message, or
// between two, was undone, and the Write blocked until the context's
// deadline, or for ever without one, on a peer that had stopped reading.
// The cut now holds whatever gorilla sets (cutconn.go). And once a Write is
// cut, the Conn is dead at once: a frame cut short leaves the stream
// unusable, so a Read pending on it ends with ErrConnectionLost (with the
// keepalive off, nothing else would end it), and so does every later
// Write, without touching the broken stream.
//
// The peer completes the handshake and never reads, so a message of
// several MiB fills the socket buffers. The context is cancelled, never
// given a deadline, after each delay below: at once (while the message is
// still being encoded), and later, when the Write has blocked. Over ws and
// wss, where the cut goes through the TLS layer.
func TestWriteCancelledAnyTimeIsCut(t *testing.T) {
	// A tool result as a server relays it: lines, quotes, non-ASCII.
	line := "Zeile „Q3\" — Umsatz ↑ 12 %, Kosten ↓; 見積もり \"OK\"\n"
	params, err := json.Marshal(map[string]any{"level": "info", "data": strings.Repeat(line, (8<<20)/len(line))})
	if err != nil {
		t.Fatal(err)
	}
	big := &mcp.Message{Method: "notifications/message", Params: params}
	small := &mcp.Message{Method: "notifications/message", Params: json.RawMessage(`{"level":"info","data":"après"}`)}
	for _, scheme := range []string{"ws", "wss"} {
		for _, after := range []time.Duration{0, time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond} {
			t.Run(scheme+"/"+after.String(), func(t *testing.T) {
				stop := make(chan struct{})
				url, opts := silentPeer(t, scheme, stop)
				defer close(stop)
				opts.Keepalive = websocket.Keepalive{PingInterval: -1, CloseTimeout: 100 * time.Millisecond}
				conn := dial(t, url, opts)

				// Generous: with the fix everything below ends at once.
				watchdog := time.NewTimer(15 * time.Second)
				defer watchdog.Stop()
				reading := make(chan error, 1)
				go func() {
					_, err := conn.Read(context.Background())
					reading <- err
				}()
				// Should a Write complete before its cut, the next one
				// fills the socket buffers.
				for {
					ctx, cancel := context.WithCancel(context.Background())
					cut := time.AfterFunc(after, cancel)
					wrote := make(chan error, 1)
					go func() { wrote <- conn.Write(ctx, big) }()
					var err error
					select {
					case err = <-wrote:
					case <-watchdog.C:
						cancel()
						t.Fatalf("a Write cancelled after %v was still blocked 15 s later: the cut was undone", after)
					}
					cut.Stop()
					cancel()
					if err == nil {
						continue
					}
					if !errors.Is(err, context.Canceled) {
						t.Fatalf("Write cut by its context: %v, want context.Canceled", err)
					}
					// A Write cancelled while it waited for its turn
					// wrote nothing, and the Conn lives on: then a small
					// Write goes out, and the test tries again.
					if err := conn.Write(limit(t), small); err == nil {
						continue
					} else if !errors.Is(err, transport.ErrConnectionLost) {
						t.Fatalf("Write after a cut write: %v, want an error wrapping ErrConnectionLost", err)
					}
					break
				}
				select {
				case err := <-reading:
					// Dead at the cut, and saying why: not at the next
					// write that happened to fail on the broken stream.
					if !errors.Is(err, transport.ErrConnectionLost) || !strings.Contains(err.Error(), "interrupted by its context") {
						t.Fatalf("pending Read after a cut write: %v, want an error wrapping ErrConnectionLost that names the interrupted write", err)
					}
				case <-watchdog.C:
					t.Fatal("a Read pending when a write was cut short never ended: the connection was not declared dead")
				}
			})
		}
	}
}

// silentPeer serves a WebSocket peer that completes the handshake and then
// reads nothing until stop is closed; for wss, with a certificate made for
// the test, which the returned options trust.
func silentPeer(t *testing.T, scheme string, stop <-chan struct{}) (string, *websocket.Options) {
	t.Helper()
	if scheme == "ws" {
		return rawServer(t, func(*gorilla.Conn) { <-stop }), &websocket.Options{}
	}
	pki := testpki.New(t)
	var wg sync.WaitGroup
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wg.Add(1)
		defer wg.Done()
		up := gorilla.Upgrader{Subprotocols: []string{"mcp"}}
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		<-stop
	}))
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{pki.Server.TLS(t)}}
	ts.StartTLS()
	t.Cleanup(func() {
		ts.Close()
		wg.Wait()
	})
	return "wss" + strings.TrimPrefix(ts.URL, "https"), &websocket.Options{TLSClientConfig: &tls.Config{RootCAs: pki.CA.Pool}}
}
