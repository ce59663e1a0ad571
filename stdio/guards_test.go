package stdio_test

import (
	"context"
	"errors"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
)

// TestOverCapLineIsNotBufferedWhole pins the check that moves a line to
// the discarding path as soon as what was gathered of it passes
// MaxMessageSize. Without it the whole line is gathered in memory and only
// then rejected: a server that writes a runaway line (a 64 MiB result
// against a 1 MiB cap here) still gets the client to allocate it, twice
// over with the final copy, which is exactly what the cap is for. The line
// must still be reported as a TooLargeError for its id, and the next
// message read.
func TestOverCapLineIsNotBufferedWhole(t *testing.T) {
	const limit = 1 << 20
	const lineSize = 64 << 20
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c := stdio.NewStreamConn(pr, io.Discard, stdio.StreamOptions{MaxMessageSize: limit})
	t.Cleanup(func() {
		_ = c.Close()
		_ = pw.Close()
	})

	head := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"`
	end := `"}]}}`
	// One chunk, written again and again: whole escapes only, so that the
	// line stays JSON however many chunks it has.
	var unit strings.Builder
	for unit.Len() < 64<<10 {
		unit.WriteString(`ligne «é» \"citée\"\n\tcolonne 2 — `)
	}
	chunk := []byte(unit.String())
	n := (lineSize - len(head) - len(end)) / len(chunk)
	size := int64(len(head) + n*len(chunk) + len(end))
	next := `{"jsonrpc":"2.0","id":8,"result":{"after":"the long line"}}` + "\n"

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	wrote := make(chan error, 1)
	go func() {
		_, err := io.WriteString(pw, head)
		for i := 0; i < n && err == nil; i++ {
			_, err = pw.Write(chunk)
		}
		if err == nil {
			_, err = io.WriteString(pw, end+"\n"+next)
		}
		wrote <- err
	}()

	_, err = c.Read(ctx)
	runtime.ReadMemStats(&after)
	var te *stdio.TooLargeError
	if !errors.As(err, &te) || !errors.Is(err, transport.ErrMessageTooLarge) {
		t.Fatalf("Read: %v, want a TooLargeError", err)
	}
	if te.Size != size || te.ID != mcp.Int64ID(7) || te.Limit != limit {
		t.Errorf("TooLargeError %+v, want size %d, id 7, limit %d", te, size, limit)
	}
	grew := after.TotalAlloc - before.TotalAlloc
	t.Logf("reading a %d-byte line over a %d-byte cap allocated %d bytes", size, limit, grew)
	if grew > lineSize/4 {
		t.Errorf("reading a %.0f MiB line over a %d MiB cap allocated %.0f MiB: the line was buffered, not discarded as it streamed past",
			float64(size)/(1<<20), limit>>20, float64(grew)/(1<<20))
	}
	m, err := c.Read(ctx)
	if err != nil || m.ID != mcp.Int64ID(8) {
		t.Fatalf("the message after the long line: %+v, %v", m, err)
	}
	select {
	case err := <-wrote:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("the writer did not finish")
	}
}

// TestUnterminatedLastLineOverCapIsRefused pins the size check on the last
// line of a stream that ends without a newline. That line takes a path of
// its own (a whole message is delivered, anything else is a cut
// connection), and without the check a valid message over MaxMessageSize
// was delivered there, whereas the same message with its newline is
// refused: the cap held or not depending on whether the peer's last line
// was terminated.
func TestUnterminatedLastLineOverCapIsRefused(t *testing.T) {
	const limit = 4096
	c, w := rawPeer(t, stdio.StreamOptions{MaxMessageSize: limit})
	var text strings.Builder
	for text.Len() < 4900 {
		text.WriteString(`résultat \"n°1\"\n`)
	}
	line := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"` + text.String() + `"}]}}`
	if _, err := mcp.DecodeMessage([]byte(line)); err != nil {
		t.Fatalf("the test's line is not a message: %v", err)
	}
	if len(line) <= limit || len(line) > 2*limit {
		t.Fatalf("the test's line has %d bytes, want a little over %d", len(line), limit)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := feed(w, line) // no newline: the stream ends inside the line
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("the line was not read")
	}
	_ = w.Close()

	m, err := c.Read(ctx)
	if err == nil {
		t.Fatalf("Read delivered the %d-byte line (the response to %s) over the %d-byte cap, want a TooLargeError", len(line), m.ID, limit)
	}
	var te *stdio.TooLargeError
	if !errors.As(err, &te) {
		t.Fatalf("Read: %v, want a TooLargeError for the %d-byte line", err, len(line))
	}
	if te.Size != int64(len(line)) || te.ID != mcp.Int64ID(3) {
		t.Errorf("TooLargeError %+v, want size %d and id 3", te, len(line))
	}
	if _, err := c.Read(ctx); !errors.Is(err, transport.ErrConnectionLost) || !errors.Is(err, io.EOF) {
		t.Errorf("Read at the end: %v, want ErrConnectionLost and io.EOF", err)
	}
}

// TestExitErrorDoesNotSplitACharacter pins the loop in ExitError.Error
// that moves the start of a cut stderr tail past continuation bytes. A
// server whose last words are not ASCII (a French or Chinese error
// message) otherwise gets an error string that starts inside a character:
// invalid UTF-8, which a log or a JSON encoder mangles or rejects.
func TestExitErrorDoesNotSplitACharacter(t *testing.T) {
	// 150 two-byte "é" then "!": the 200-byte tail starts at an odd
	// offset, inside an "é".
	stderr := strings.Repeat("é", 150) + "!\n"
	c := startServer(t, "echo", stdio.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Write(ctx, request(t, mcp.Int64ID(1), "die", serverParams{Code: 1, Stderr: stderr})); err != nil {
		t.Fatal(err)
	}
	var ee *stdio.ExitError
	for {
		_, err := c.Read(ctx)
		if err == nil {
			continue // the server's last notification
		}
		if !errors.As(err, &ee) {
			t.Fatalf("Read: %v, want an *ExitError", err)
		}
		break
	}
	if ee.ExitCode != 1 || ee.Stderr != stderr {
		t.Fatalf("ExitError %+v, want status 1 and the stderr written", ee)
	}
	if msg := ee.Error(); !utf8.ValidString(msg) || !strings.HasSuffix(msg, "é!") {
		t.Errorf("Error() = %q: not valid UTF-8, or not the end of stderr", msg)
	}
	// Every alignment of the cut, with two- three- and four-byte
	// characters.
	for _, r := range []string{"é", "€", "𝄞"} {
		for pad := range 4 {
			e := &stdio.ExitError{ExitCode: 1, Stderr: strings.Repeat(r, 300/len(r)) + strings.Repeat("!", pad)}
			if msg := e.Error(); !utf8.ValidString(msg) {
				t.Errorf("stderr of %q and %d ASCII bytes: Error() = %q is not valid UTF-8", r, pad, msg)
			}
		}
	}
}
