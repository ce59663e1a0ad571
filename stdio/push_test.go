package stdio

import (
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// pushRecorder records what a Pusher hands over.
type pushRecorder struct {
	mu    sync.Mutex
	msgs  []string
	final []error
	done  chan struct{}
}

func (p *pushRecorder) deliver(m *mcp.Message, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var me *transport.MessageError
	switch {
	case err == nil:
		p.msgs = append(p.msgs, m.Method)
	case errors.As(err, &me):
		p.msgs = append(p.msgs, "bad")
	default:
		p.final = append(p.final, err)
		close(p.done)
	}
}

// TestPushGivesEverythingInOrderThenTheEndOnce: messages read before Push
// (the reader waiting to hand one to Read) and after it reach deliver in
// order, and the end of the stream comes once, last.
func TestPushGivesEverythingInOrderThenTheEndOnce(t *testing.T) {
	r, w := io.Pipe()
	f := newFramer(r, io.Discard, 0, nil)
	go f.readLoop()
	// The reader reads the first line (the pipe's write returns when it
	// has) and then waits to hand it to Read.
	wrote := make(chan struct{})
	go func() {
		io.WriteString(w, `{"jsonrpc":"2.0","method":"a"}`+"\n")
		close(wrote)
	}()
	<-wrote
	p := &pushRecorder{done: make(chan struct{})}
	f.Push(p.deliver)
	io.WriteString(w, `{"jsonrpc":"2.0","method":"b"}`+"\n"+"junk\n"+`{"jsonrpc":"2.0","method":"c"}`+"\n")
	w.Close()
	<-p.done
	<-f.readDone
	p.mu.Lock()
	defer p.mu.Unlock()
	if got := strings.Join(p.msgs, ","); got != "a,b,c" && got != "a,b,bad,c" {
		t.Errorf("delivered %s, want a,b,c in order", got)
	}
	if len(p.final) != 1 || !errors.Is(p.final[0], transport.ErrConnectionLost) {
		t.Errorf("final errors %v, want one wrapping ErrConnectionLost", p.final)
	}
}

// TestPushAfterTheReaderEnded: a stream that ended before Push still gives
// its end, once, to the Push that comes later.
func TestPushAfterTheReaderEnded(t *testing.T) {
	f := newFramer(strings.NewReader(""), io.Discard, 0, nil)
	go f.readLoop()
	<-f.readDone
	p := &pushRecorder{done: make(chan struct{})}
	f.Push(p.deliver)
	<-p.done
	if len(p.final) != 1 || len(p.msgs) != 0 {
		t.Errorf("got %v and final %v, want only one final error", p.msgs, p.final)
	}
}
