package stdio_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/stdio"
)

// TestLastMessagesOfExitedServerReachSlowReader pins drainReader.renew.
// When the server exits, the waiter gives stdout a short read deadline
// (drainIdle, 50 ms) so that a pipe held open by an escaped descendant
// cannot keep the reader forever; each later read renews it. Without the
// renewal that deadline counts from the exit, not from the last read: a
// consumer that takes longer than that to come back for the server's last
// messages, still in the pipe, loses them and gets the exit error instead.
//
// The server answers four echo requests of about 20 KiB each (too much
// for the reader to have taken from the pipe ahead of the consumer: it
// hands over one message at a time) and exits. The test reads one answer,
// waits until the Conn reports the exit, then waits several drain
// deadlines more before it reads on. That bounded wait is not standing in
// for synchronisation: letting the exit's deadline pass is the fault under
// test.
func TestLastMessagesOfExitedServerReachSlowReader(t *testing.T) {
	c := startServer(t, "echo", stdio.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	line := "Zeile „Q3\" — Umsatz ↑ 12 %, \\Kosten\\ ↓; 見積もり \"OK\"\n"
	const answers = 4
	for i := 1; i <= answers; i++ {
		text := strings.Repeat(line, (20<<10)/len(line))
		if err := c.Write(ctx, request(t, mcp.Int64ID(int64(i)), "echo", map[string]any{"n": i, "text": text})); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Write(ctx, request(t, mcp.Int64ID(answers+1), "die", map[string]any{"code": 0, "stderr": "fertig — „bye\"\n"})); err != nil {
		t.Fatal(err)
	}

	check := func(m *mcp.Message, err error, n int) {
		t.Helper()
		if err != nil {
			t.Fatalf("answer %d: %v", n, err)
		}
		var p struct {
			N    int    `json:"n"`
			Text string `json:"text"`
		}
		if m.ID.String() != mcp.Int64ID(int64(n)).String() || json.Unmarshal(m.Result, &p) != nil || p.N != n || !strings.HasPrefix(p.Text, line) {
			t.Fatalf("answer %d: got %s %.80s", n, m.ID, m.Result)
		}
	}
	m, err := c.Read(ctx)
	check(m, err, 1)

	// Wait for the exit to be reported. A Write is refused with the
	// *ExitError once it is (and one to the dead process, before then,
	// waits for it); the notification is ignored by a live server.
	note := &mcp.Message{Method: "notifications/message", Params: json.RawMessage(`{"level":"info","data":"noch da?"}`)}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		var ee *stdio.ExitError
		if err := c.Write(ctx, note); errors.As(err, &ee) {
			break
		} else if err != nil {
			t.Fatalf("waiting for the exit: %v", err)
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatal("the server's exit was never reported")
		}
	}
	// The fault under test: the deadline set at the exit must have passed
	// before the consumer comes back. Far more than drainIdle (50 ms).
	time.Sleep(300 * time.Millisecond)

	for n := 2; n <= answers; n++ {
		m, err := c.Read(ctx)
		check(m, err, n)
	}
	if m, err := c.Read(ctx); err != nil || m.Method != "notifications/message" {
		t.Fatalf("after the answers: %v %v, want the server's last notification", m, err)
	}
	var ee *stdio.ExitError
	if _, err := c.Read(ctx); !errors.As(err, &ee) || ee.ExitCode != 0 {
		t.Fatalf("after the last message: %v, want the *ExitError of status 0", err)
	}
}
