package stdio_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
)

// streamPair returns a client and a server Conn joined by two io.Pipes.
func streamPair(t testing.TB, opts stdio.StreamOptions) (client, server transport.Conn) {
	t.Helper()
	cr, sw := io.Pipe() // server -> client
	sr, cw := io.Pipe() // client -> server
	client = stdio.NewStreamConn(cr, cw, opts)
	server = stdio.NewStreamConn(sr, sw, opts)
	t.Cleanup(func() {
		_ = client.Close()
		_ = server.Close()
	})
	return client, server
}

// rawPeer returns a Conn reading what the test writes to the returned
// writer, line by line as the test chooses.
func rawPeer(t testing.TB, opts stdio.StreamOptions) (transport.Conn, *io.PipeWriter) {
	t.Helper()
	r, w := io.Pipe()
	c := stdio.NewStreamConn(r, io.Discard, opts)
	t.Cleanup(func() {
		_ = c.Close()
		_ = w.Close()
	})
	return c, w
}

// feed writes s to w from a goroutine (an io.Pipe write blocks until read)
// and returns a channel that reports the result.
func feed(w io.Writer, s string) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := io.WriteString(w, s)
		done <- err
	}()
	return done
}

func TestStreamConnBothDirections(t *testing.T) {
	client, server := streamPair(t, stdio.StreamOptions{})
	ctx := context.Background()
	go func() {
		for {
			m, err := server.Read(ctx)
			if err != nil {
				return
			}
			resp, _ := mcp.NewResponse(m.ID, m.Params, nil)
			if server.Write(ctx, resp) != nil {
				return
			}
		}
	}()
	for i := range 100 {
		params := json.RawMessage(`{"i":` + strings.Repeat("1", i%18+1) + `}`)
		m := mustCall(t, client, mcp.Int64ID(int64(i)), "echo", params)
		if string(m.Result) != string(params) {
			t.Fatalf("result %s, want %s", m.Result, params)
		}
	}
	// Closing the client ends the server's stream: its Read says so.
	_ = client.Close()
	if _, err := client.Read(ctx); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Read after Close: %v", err)
	}
}

// Either side may be the one that gets an oversized message. A response
// carries its id in the MessageError; a request from the peer does not
// (its id is the peer's), but the TooLargeError has it for a server to
// answer.
func TestStreamTooLarge(t *testing.T) {
	const limit = 4096
	c, w := rawPeer(t, stdio.StreamOptions{MaxMessageSize: limit})
	ctx := context.Background()
	big := strings.Repeat("x", 3*limit)
	lines := []string{
		`{"jsonrpc":"2.0","result":{"id":1,"data":"` + big + `"},"id":"resp"}` + "\n",
		`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"arguments":{"data":"` + big + `"}}}` + "\n",
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + big + `"}}` + "\n",
		`[{"jsonrpc":"2.0","id":3,"result":{"data":"` + big + `"}}]` + "\n",
		`{"jsonrpc":"2.0","id":4,"result":{}}` + "\n",
	}
	done := feed(w, strings.Join(lines, ""))
	want := []struct {
		meID, teID mcp.ID
		request    bool
	}{
		{mcp.StringID("resp"), mcp.StringID("resp"), false},
		{mcp.ID{}, mcp.Int64ID(12), true},
		{mcp.ID{}, mcp.ID{}, true},
		{mcp.ID{}, mcp.ID{}, false},
	}
	for i, wt := range want {
		_, err := c.Read(ctx)
		var me *transport.MessageError
		var te *stdio.TooLargeError
		if !errors.As(err, &me) || !errors.As(err, &te) || !errors.Is(err, transport.ErrMessageTooLarge) {
			t.Fatalf("line %d: Read: %v", i, err)
		}
		if me.ID != wt.meID || te.ID != wt.teID || te.Request != wt.request || te.Size != int64(len(lines[i])-1) {
			t.Errorf("line %d: MessageError.ID %s, TooLargeError %+v; want %s, %s, request %v, size %d",
				i, me.ID, te, wt.meID, wt.teID, wt.request, len(lines[i])-1)
		}
	}
	m, err := c.Read(ctx)
	if err != nil || m.ID != mcp.Int64ID(4) {
		t.Fatalf("next message: %+v, %v", m, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A response that is JSON-RPC but malformed (a wrong jsonrpc version
// included: "an undecodable response with a valid id hangs its call")
// fails its own call instead of being skipped (the call would otherwise
// wait for its timeout); other bad lines are skipped.
func TestStreamMalformedResponse(t *testing.T) {
	c, w := rawPeer(t, stdio.StreamOptions{})
	done := feed(w, `{"jsonrpc":"2.0","id":4,"result":{},"error":"not an object"}`+"\n"+
		`{"jsonrpc":"2.0","id":5}`+"\n"+
		`{"jsonrpc":"1.0","id":6,"result":{}}`+"\n"+
		`{"jsonrpc":"2.0","id":7,"result":{}}`+"\r\n"+
		`{"jsonrpc":"2.0","id":8,"result":{}}`) // no newline before EOF
	ctx := context.Background()
	for _, id := range []int64{4, 5, 6} {
		_, err := c.Read(ctx)
		var me *transport.MessageError
		if !errors.As(err, &me) || me.ID != mcp.Int64ID(id) || !errors.Is(err, transport.ErrProtocol) {
			t.Errorf("Read: %v, want a MessageError for id %d wrapping ErrProtocol", err, id)
		}
	}
	for _, id := range []int64{7, 8} {
		if id == 8 {
			// The last line has no newline: EOF ends it.
			<-done
			_ = w.Close()
		}
		m, err := c.Read(ctx)
		if err != nil || m.ID != mcp.Int64ID(id) {
			t.Errorf("Read: %+v, %v; want the response to %d", m, err, id)
		}
	}
	_, err := c.Read(ctx)
	if !errors.Is(err, transport.ErrConnectionLost) || !errors.Is(err, io.EOF) {
		t.Errorf("Read at EOF: %v, want ErrConnectionLost and io.EOF", err)
	}
}

func TestStreamReadHonoursContext(t *testing.T) {
	c, _ := rawPeer(t, stdio.StreamOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := c.Read(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Read: %v", err)
	}
}

func TestStreamCloseUnblocks(t *testing.T) {
	r, _ := io.Pipe()
	_, w := io.Pipe() // nobody reads: a write blocks
	c := stdio.NewStreamConn(r, w, stdio.StreamOptions{})
	ctx := context.Background()
	readErr := make(chan error, 1)
	writeErr := make(chan error, 1)
	go func() { _, err := c.Read(ctx); readErr <- err }()
	go func() { writeErr <- c.Write(ctx, request(t, mcp.Int64ID(1), "ping", nil)) }()
	_ = c.Close()
	_ = c.Close()
	if err := <-readErr; !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Read: %v", err)
	}
	if err := <-writeErr; !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Write: %v", err)
	}
}

// A write cut short by its context leaves half a line on the wire. The
// rest goes out before the next message, so the peer still reads whole
// messages. Regression test for a framing bug the design ruled out: the
// next message glued onto half of the previous line.
func TestStreamInterruptedWriteKeepsFraming(t *testing.T) {
	a, b := net.Pipe() // synchronous, with write deadlines
	c := stdio.NewStreamConn(a, a, stdio.StreamOptions{})
	defer c.Close()
	defer b.Close()
	big := json.RawMessage(`{"data":"` + strings.Repeat("y", 1<<16) + `"}`)

	// The peer reads a little, then nothing until the write gave up.
	head := make([]byte, 100)
	peerRead := make(chan error, 1)
	go func() { _, err := io.ReadFull(b, head); peerRead <- err }()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := c.Write(ctx, request(t, mcp.Int64ID(1), "first", big)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Write: %v, want DeadlineExceeded", err)
	}
	if err := <-peerRead; err != nil {
		t.Fatal(err)
	}

	br := bufio.NewReaderSize(b, 1<<20)
	lines := make(chan string, 2)
	go func() {
		for range 2 {
			line, err := br.ReadString('\n')
			if err != nil {
				close(lines)
				return
			}
			lines <- line
		}
	}()
	if err := c.Write(context.Background(), request(t, mcp.Int64ID(2), "second", nil)); err != nil {
		t.Fatal(err)
	}
	first := string(head) + <-lines
	for i, line := range []string{first, <-lines} {
		m, err := mcp.DecodeMessage([]byte(line))
		if err != nil {
			t.Fatalf("line %d is not a whole message: %v", i, err)
		}
		if want := mcp.Int64ID(int64(i + 1)); m.ID != want {
			t.Errorf("line %d has id %s, want %s", i, m.ID, want)
		}
	}
}
