//go:build unix

package stdio_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/stdio"
)

// TestWriteAfterCutLargeWriteDoesNotPanic pins the keeping of the write
// buffer while it holds the unsent tail of a message cut short by its
// context. A buffer over 1 MiB is normally dropped after its write, so that
// a Conn does not pin it; dropping it while its tail was still owed left
// the count of pending bytes pointing into nothing, and the next Write
// panicked (slice bounds out of range) instead of finishing the cut line.
// What the Conn promises is that the peer still reads whole messages: the
// rest of the big line, then the next message.
func TestWriteAfterCutLargeWriteDoesNotPanic(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	in, inW := io.Pipe() // nothing comes in
	c := stdio.NewStreamConn(in, pw, stdio.StreamOptions{})
	t.Cleanup(func() {
		_ = c.Close() // closes pw: a reader of pr still blocked ends
		_ = inW.Close()
		_ = pr.Close()
	})

	var text strings.Builder
	for text.Len() < 4<<20 {
		text.WriteString("Ligne n°1: «citée» \"entre guillemets\" — 東京 🐙\n\tback\\slash\n")
	}
	bigParams, err := json.Marshal(map[string]any{"name": "write_file", "arguments": map[string]string{"content": text.String()}})
	if err != nil {
		t.Fatal(err)
	}
	big := request(t, mcp.Int64ID(1), "tools/call", json.RawMessage(bigParams))
	small := request(t, mcp.Int64ID(2), "ping", nil)
	want := append(big.AppendJSON(nil), '\n')
	want = append(small.AppendJSON(want), '\n')

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The peer reads the start of the line, then nothing: the write
	// blocks on the full pipe, and is cut once some of it went out.
	cutCtx, cut := context.WithCancel(ctx)
	defer cut()
	head := make([]byte, 4096)
	headRead := make(chan error, 1)
	go func() {
		_, err := io.ReadFull(pr, head)
		headRead <- err
		cut()
	}()
	if err := c.Write(cutCtx, big); !errors.Is(err, context.Canceled) {
		t.Fatalf("Write of %d bytes to a stalled pipe: %v, want it cut by its context", len(want), err)
	}
	select {
	case err := <-headRead:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("the peer read nothing")
	}

	// Now the peer reads everything.
	rest := make([]byte, len(want)-len(head))
	restRead := make(chan error, 1)
	go func() {
		_, err := io.ReadFull(pr, rest)
		restRead <- err
	}()
	if err := writeRecovering(ctx, c, small); err != nil {
		t.Fatalf("Write after a cut write: %v", err)
	}
	select {
	case err := <-restRead:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("the peer did not get the rest of the big line and the next message")
	}
	if got := append(head, rest...); !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && got[i] == want[i] {
			i++
		}
		t.Fatalf("the peer read %d bytes that differ from the two lines at byte %d", len(got), i)
	}
}

// writeRecovering is Write that turns a panic into an error.
func writeRecovering(ctx context.Context, c interface {
	Write(context.Context, *mcp.Message) error
}, m *mcp.Message) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return c.Write(ctx, m)
}

// TestCloseSendsSIGTERMBeforeSIGKILL pins the SIGTERM step of Close: a
// server that does not exit when its stdin closes is sent SIGTERM, and
// given TermGrace to exit, before SIGKILL. Without it Close went from
// stdin straight to SIGKILL (after waiting TermGrace for nothing), and a
// server that cleans up on SIGTERM (removes a lock file, flushes a
// database) never could; the specification asks for SIGTERM first. The
// server here writes a marker file when SIGTERM arrives.
func TestCloseSendsSIGTERMBeforeSIGKILL(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "got-sigterm")
	c := startServer(t, "termmarker", stdio.Options{
		Env:        []string{markerEnv + "=" + marker},
		StdinGrace: 100 * time.Millisecond,
		TermGrace:  5 * time.Second,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The server catches SIGTERM before it says it is ready.
	if m, err := c.Read(ctx); err != nil || m.Method != "notifications/message" {
		t.Fatalf("Read: %+v, %v; want the server's ready note", m, err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	b, err := os.ReadFile(marker)
	if err != nil {
		t.Fatalf("the server left no marker, so it got no SIGTERM before it was killed: %v", err)
	}
	if string(b) != "SIGTERM\n" {
		t.Errorf("marker holds %q", b)
	}
}
