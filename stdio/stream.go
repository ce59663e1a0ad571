package stdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/tako-mcp/tako/internal/blocks"
	"github.com/tako-mcp/tako/internal/inbox"
	"github.com/tako-mcp/tako/internal/writelock"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// DefaultMaxMessageSize is the message cap used when MaxMessageSize is zero.
// It is far above what MCP servers send in practice (a 16 MiB tool result
// passes) and low enough that a runaway line cannot take the client down.
const DefaultMaxMessageSize = transport.DefaultMaxMessageSize

const (
	// readBufferSize is the bufio buffer for incoming lines. A line that
	// fits is decoded from one copy; a longer one is gathered in pooled
	// blocks and copied once into a slice of its size. Small, because a
	// Conn that cannot wait for its stream to be readable (readers.go)
	// holds it for its whole life, idle or not: at 64 KiB, a host's
	// thousand idle stdio sessions held 64 MiB of read buffers. A
	// sync.Pool that took it back while the Conn waited was tried and
	// dropped: a goroutine that resumes on another P finds another P's
	// pool empty, so a busy sequential session allocated a new buffer
	// every few calls (3 KB a call in bench/'s side suite, from 0.6).
	readBufferSize = 4 << 10
	// keepWriteBuffer is the largest write buffer kept for reuse between
	// messages; a bigger one (a huge tool argument) is dropped after use so
	// that a Conn does not pin it for its whole life.
	keepWriteBuffer = 1 << 20
	// previewSize bounds how much of a skipped line goes into a log record.
	previewSize = 120
)

// StreamOptions configure NewStreamConn. The zero value works.
type StreamOptions struct {
	// MaxMessageSize caps the size of one incoming line in bytes, newline
	// excluded. A longer line is discarded as it streams past, without being
	// buffered whole, and Read reports it as a *transport.MessageError
	// wrapping a *TooLargeError. Zero (or less) means DefaultMaxMessageSize.
	MaxMessageSize int

	// Logger receives a Warn record for each line that is skipped (not
	// JSON, or JSON but not JSON-RPC). Nil discards them.
	Logger *slog.Logger
}

// NewStreamConn returns a transport.Conn that speaks the stdio framing
// (newline-delimited JSON-RPC, checklist §3) over r and w: it reads messages
// from r and writes them to w. The framing is symmetric, so the same Conn
// serves a client talking to a server over a socket or an in-process pipe,
// and a server serving its own stdin and stdout:
//
//	conn := stdio.NewStreamConn(os.Stdin, os.Stdout, stdio.StreamOptions{})
//
// It starts one goroutine, which reads r until r ends or the Conn is closed.
// Close closes r and w if they are io.Closers, which is what ends a read
// blocked in r; a blocked read on an r that closing does not interrupt (a
// terminal, a blocking file descriptor) ends only when r returns.
//
// Write honours its context while waiting for its turn; the write itself is
// interrupted by the context only when w has a SetWriteDeadline method
// (*os.File on a pipe, net.Conn). Writing to a broken standard output kills
// a Go program with SIGPIPE unless it handles that signal: that is how a
// server whose client went away ends.
func NewStreamConn(r io.Reader, w io.Writer, opts StreamOptions) transport.Conn {
	f := newFramer(r, w, opts.MaxMessageSize, opts.Logger)
	f.closeStream = func() {
		if c, ok := r.(io.Closer); ok {
			_ = c.Close()
		}
		if c, ok := w.(io.Closer); ok && !sameStream(r, w) {
			_ = c.Close()
		}
	}
	go f.readLoop()
	return &streamConn{f}
}

// sameStream reports whether r and w are one object (a net.Conn passed as
// both), which must be closed once. Values of a type that cannot be compared
// are taken to be different rather than made to panic.
func sameStream(r io.Reader, w io.Writer) bool {
	t := reflect.TypeOf(r)
	return t == reflect.TypeOf(w) && t.Comparable() && any(r) == any(w)
}

// streamConn is the Conn NewStreamConn returns: the framer, closed by
// closing the streams.
type streamConn struct{ *framer }

func (c *streamConn) Close() error {
	c.beginClose()
	return nil
}

// TooLargeError is the Err of the *transport.MessageError that Read returns
// for a line longer than MaxMessageSize. It unwraps to
// transport.ErrMessageTooLarge.
//
// The Conn cannot decode such a line, so it scans it byte by byte as it
// streams past for its top-level "id" (which may come after a huge "result")
// and "method" members. For a response the MessageError carries the id, so
// that the engine fails exactly that call. For a request from the peer
// (Request is set) the MessageError's ID is left zero, since the id is the
// peer's and could collide with one of ours; a server that wants to answer
// the oversized request finds its id here.
type TooLargeError struct {
	Size    int64  // bytes in the line, newline excluded
	Limit   int    // the cap it exceeded
	ID      mcp.ID // its top-level "id", if it had a valid one
	Request bool   // it had a top-level "method" member
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("stdio: message of %d bytes exceeds the %d-byte limit (MaxMessageSize)", e.Size, e.Limit)
}

// Unwrap returns transport.ErrMessageTooLarge.
func (e *TooLargeError) Unwrap() error { return transport.ErrMessageTooLarge }

// inbound is one result of reading: a message, or a *transport.MessageError.
type inbound struct {
	msg *mcp.Message
	err error
}

// deadlineWriter is implemented by writers whose blocked Write can be
// interrupted: *os.File (pipes are pollable) and net.Conn.
type deadlineWriter interface {
	SetWriteDeadline(t time.Time) error
}

// aLongTimeAgo is a deadline in the past, which makes a blocked write
// return at once (net/http uses the same trick).
var aLongTimeAgo = time.Unix(1, 0)

// framer implements the stdio framing over a reader and a writer. It is the
// body of both the process Conn and NewStreamConn's Conn; the owner supplies
// the hooks that say what the end of the stream and a write failure mean.
//
// Reading: one goroutine (readLoop) splits r into lines, decodes them and
// gives each message to the inbox (internal/inbox), which hands it to Read
// without a queue, so at most one decoded message waits and memory stays
// bounded by MaxMessageSize; with Push it goes to the engine directly. When
// r ends, the goroutine gives the inbox the final error.
//
// Writing: writes are serialized by a one-slot semaphore (a channel rather
// than a mutex, so that waiting for one's turn honours the context). Each
// message is encoded into a reused buffer and written with one Write call.
type framer struct {
	// br buffers src. The reading goroutine takes it on its first read
	// (readers.go); when wait is set it also gives it back whenever all it
	// read has been handled, and waits for src to be readable before it
	// takes one again, so that an idle Conn holds no read buffer.
	br   *bufio.Reader
	src  io.Reader
	wait func() error
	long blocks.List // a line longer than br's buffer, being read (copied once, into a slice of its size, when it ends)
	max  int
	log  *slog.Logger

	// in holds what readLoop reads for Read, or hands it to the engine
	// once it has asked (Push).
	in       inbox.Inbox
	readDone chan struct{}

	w     io.Writer
	wdl   deadlineWriter // w's deadline setter, or nil
	wlock writelock.Lock
	wbuf  []byte // guarded by wlock
	// wpend is how many bytes at the start of wbuf are the unsent tail of a
	// message whose write a context interrupted. They go out before the
	// next message, so the peer never sees half a line followed by another
	// message. Guarded by wlock.
	wpend int

	// wdMu guards the write deadline against a context's AfterFunc that
	// fires late, after its write has finished: wgen changes with every
	// write, and a stale AfterFunc sees that and does nothing.
	wdMu    sync.Mutex
	wgen    uint64
	wdDirty bool

	closing   chan struct{} // closed by beginClose
	closeOnce sync.Once

	skips skipCount // lines skipped as not JSON-RPC (skipped.go)

	// Hooks. endErr turns the reason r ended into the final Read error;
	// closedErr is the error for calls after Close; lostErr turns a failed
	// write into the error Write returns; closeStream releases the streams.
	// The optional preWrite refuses a write before it starts (the process
	// has exited), and the optional tryWrite makes one non-blocking attempt
	// to write b, reporting how much went out and whether that was all.
	endErr      func(readErr error) error
	closedErr   func() error
	lostErr     func(ctx context.Context, writeErr error) error
	closeStream func()
	preWrite    func() error
	tryWrite    func(b []byte) (n int, done bool)
}

func newFramer(r io.Reader, w io.Writer, maxSize int, logger *slog.Logger) *framer {
	if maxSize <= 0 {
		maxSize = DefaultMaxMessageSize
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	f := &framer{
		src:      r,
		max:      maxSize,
		log:      logger,
		readDone: make(chan struct{}),
		w:        w,
		wlock:    writelock.New(),
		closing:  make(chan struct{}),
	}
	f.in.Init()
	f.wdl, _ = w.(deadlineWriter)
	f.endErr = f.streamEndErr
	f.closedErr = streamClosedErr
	f.lostErr = streamLostErr
	return f
}

func streamClosedErr() error { return fmt.Errorf("stdio: %w", transport.ErrClosed) }

func (f *framer) streamEndErr(readErr error) error {
	if f.isClosing() {
		return f.closedErr()
	}
	if errors.Is(readErr, io.EOF) {
		return fmt.Errorf("stdio: stream ended: %w (%w)", transport.ErrConnectionLost, io.EOF)
	}
	return fmt.Errorf("stdio: read: %w: %w", transport.ErrConnectionLost, readErr)
}

func streamLostErr(_ context.Context, writeErr error) error {
	return fmt.Errorf("stdio: write: %w: %w", transport.ErrConnectionLost, writeErr)
}

// beginClose makes every pending and future Read and Write fail, and
// releases the streams. It is idempotent.
func (f *framer) beginClose() {
	f.closeOnce.Do(func() {
		close(f.closing)
		f.in.Stop(f.closedErr())
		if f.closeStream != nil {
			f.closeStream()
		}
	})
}

func (f *framer) isClosing() bool {
	select {
	case <-f.closing:
		return true
	default:
		return false
	}
}

// Read returns the next message. A *transport.MessageError reports one line
// that could not be delivered; any other error is final.
func (f *framer) Read(ctx context.Context) (*mcp.Message, error) { return f.in.Read(ctx) }

// deliver hands one result to Read, or to the engine once it has asked
// for them (Push). It reports false if the Conn was closed first.
func (f *framer) deliver(it inbound) bool { return f.in.Give(it.msg, it.err) }

// Push implements transport.Pusher: from now on the reading goroutine
// hands each message to deliver itself, which saves the hand-off through
// Read.
func (f *framer) Push(deliver func(*mcp.Message, error)) { f.in.Push(deliver) }

// readLoop is the reading goroutine.
func (f *framer) readLoop() {
	defer close(f.readDone)
	f.in.End(f.endErr(f.readLines()))
}

// errDelivery ends readLines when the Conn was closed while a message
// waited for Read.
var errDelivery = errors.New("closed while delivering")

// readLines reads lines until r fails or the Conn is closed, and returns
// why it stopped.
func (f *framer) readLines() error {
	for {
		if f.br == nil {
			if f.wait != nil {
				if err := f.wait(); err != nil {
					return err
				}
			}
			f.br = takeReader(f.src)
		}
		chunk, err := f.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			if f.long.Len()+len(chunk) > f.max {
				if err := f.discard(chunk); err != nil {
					return err
				}
				continue
			}
			f.long.Write(chunk)
			continue
		}
		line, owned := chunk, false
		if f.long.Len() > 0 {
			line, owned = f.long.Join(chunk), true
		}
		if err != nil && !bytes.HasSuffix(chunk, []byte{'\n'}) && len(bytes.TrimSpace(line)) > 0 && len(line) <= f.max {
			// The stream ended without a newline. A whole message is
			// delivered; anything else is a connection cut inside a line,
			// not a malformed message, so no call is failed on its
			// account: the end of the stream fails them all as lost.
			msg, derr := mcp.DecodeMessage(line)
			if derr != nil {
				f.log.Warn("stdio: the stream ended inside a line", "bytes", len(line))
				if !json.Valid(line) {
					// A banner without its newline, from a server that
					// then exits, is a skipped line too.
					f.skips.add(line)
				}
				return err
			}
			if !f.deliver(inbound{msg: msg}) {
				return errDelivery
			}
			return err
		}
		line = bytes.TrimSuffix(line, []byte{'\n'})
		if len(line) > f.max {
			var sc mcp.IDScanner
			sc.Feed(line)
			if !f.deliver(f.tooLarge(&sc, int64(len(line)))) {
				return errDelivery
			}
		} else if len(line) > 0 && !f.handleLine(line, owned) {
			return errDelivery
		}
		if err != nil {
			return err
		}
		if f.wait != nil && f.br.Buffered() == 0 {
			// Every line read is handled (and copied out of br): until
			// the next arrives, br is a spare. (f.long is empty here.)
			giveReader(f.br)
			f.br = nil
		}
	}
}

// discard skips the rest of a line that exceeds the cap, feeding it to an
// id scanner as it goes, then reports it. What was read of it so far is in
// f.long and chunk.
func (f *framer) discard(chunk []byte) error {
	var sc mcp.IDScanner
	size := int64(f.long.Len() + len(chunk))
	f.long.Drain(sc.Feed)
	sc.Feed(chunk)
	for {
		chunk, err := f.br.ReadSlice('\n')
		if err == nil {
			chunk = chunk[:len(chunk)-1]
		}
		sc.Feed(chunk)
		size += int64(len(chunk))
		if err == bufio.ErrBufferFull {
			continue
		}
		if !f.deliver(f.tooLarge(&sc, size)) {
			return errDelivery
		}
		return err
	}
}

func (f *framer) tooLarge(sc *mcp.IDScanner, size int64) inbound {
	id, request := sc.Result()
	te := &TooLargeError{Size: size, Limit: f.max, ID: id, Request: request}
	me := &transport.MessageError{Err: te}
	if !request {
		me.ID = id
	}
	f.log.Warn("stdio: skipped a message over the size limit", "bytes", size, "limit", f.max, "id", id.String())
	return inbound{err: me}
}

// handleLine decodes one line and delivers what it holds. owned says the
// line's memory is its own; otherwise it lives in the bufio buffer and is
// copied, since a decoded message may alias its input. It reports false if
// the Conn was closed while delivering.
func (f *framer) handleLine(line []byte, owned bool) bool {
	start := 0
	for start < len(line) && isSpace(line[start]) {
		start++
	}
	if start == len(line) {
		return true // an empty line carries nothing
	}
	if !owned {
		line = append([]byte(nil), line...)
	}
	if line[start] == '[' {
		return f.handleBatch(line)
	}
	msg, err := mcp.DecodeMessage(line)
	if err == nil {
		return f.deliver(inbound{msg: msg})
	}
	if it, ok := f.badMessage(line, err); ok {
		return f.deliver(it)
	}
	return true
}

// handleBatch splits a 2025-03-26 batch into its messages and delivers them
// in order. A bad element is treated like a bad line; the rest still go
// through.
func (f *framer) handleBatch(line []byte) bool {
	var parts []json.RawMessage
	if err := json.Unmarshal(line, &parts); err != nil || len(parts) == 0 {
		if err == nil {
			err = fmt.Errorf("%w: empty batch", mcp.ErrNotJSONRPC)
		}
		f.badMessage(line, err)
		return true
	}
	for _, p := range parts {
		msg, err := mcp.DecodeMessage(p)
		if err != nil {
			it, ok := f.badMessage(p, err)
			if !ok {
				continue
			}
			if !f.deliver(it) {
				return false
			}
			continue
		}
		if !f.deliver(inbound{msg: msg}) {
			return false
		}
	}
	return true
}

// badMessage decides what to do with a line DecodeMessage refused. A line
// that is a response gone wrong (an id, a "jsonrpc", "result" or "error"
// member, no "method": a wrong jsonrpc version, a bad escape, nesting past
// the decoder's limit, a malformed error object) becomes a MessageError
// for that id wrapping transport.ErrProtocol, so the call fails now instead
// of at its deadline. Anything else (not JSON at all: a server printing to
// stdout; JSON that is not JSON-RPC: a log record) is logged and skipped,
// as the checklist asks (§3.3).
func (f *framer) badMessage(line []byte, err error) (inbound, bool) {
	if id, ok := mcp.ResponseID(line); ok {
		f.log.Warn("stdio: malformed response", "id", id.String(), "error", err)
		return inbound{err: &transport.MessageError{ID: id, Err: fmt.Errorf("%w: %w", transport.ErrProtocol, err)}}, true
	}
	f.skips.add(line)
	if !json.Valid(line) {
		f.log.Warn("stdio: skipped a line that is not JSON", "bytes", len(line), "line", preview(line))
		return inbound{}, false
	}
	f.log.Warn("stdio: skipped a JSON line that is not a JSON-RPC message", "bytes", len(line), "error", err, "line", preview(line))
	return inbound{}, false
}

// Skipped implements transport.SkipReporter: a *SkippedLinesError if a
// line read so far was skipped as not JSON-RPC, else nil.
func (f *framer) Skipped() error { return f.skips.err() }

// preview returns the start of a skipped line for a log record, as valid
// UTF-8 and never longer than previewSize bytes.
func preview(b []byte) string {
	more := ""
	if len(b) > previewSize {
		b, more = b[:previewSize], "…"
	}
	return string(bytes.ToValidUTF8(b, []byte("\uFFFD"))) + more
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// Write sends msg as one line. Writes are serialized; each is one Write
// call on the underlying stream.
func (f *framer) Write(ctx context.Context, msg *mcp.Message) error {
	if msg == nil {
		return errors.New("stdio: Write of a nil message")
	}
	return f.write(ctx, msg)
}

func (f *framer) write(ctx context.Context, msg *mcp.Message) error {
	if err := f.wlock.Acquire(ctx, f.closing, nil); err != nil {
		if err == writelock.ErrClosing {
			return f.closedErr()
		}
		return err
	}
	defer f.wlock.Release()
	if f.isClosing() {
		return f.closedErr()
	}
	if f.preWrite != nil {
		if err := f.preWrite(); err != nil {
			return err
		}
	}
	start := f.wpend
	buf := f.wbuf[:start]
	// Room for the whole line up front: a big message is then copied once,
	// not regrown as each piece is appended.
	need := len(msg.Method) + len(msg.Params) + len(msg.Result) + 128
	if msg.Error != nil {
		need += len(msg.Error.Message) + len(msg.Error.Data)
	}
	buf = slices.Grow(buf, need)
	buf = msg.AppendJSON(buf)
	buf = append(buf, '\n')
	n, err := f.writeCtx(ctx, buf)
	f.wpend = 0
	if err != nil {
		// Keep the unsent tail of a message that was partly written, so the
		// next write completes the line; drop a message not yet started.
		if isCtxErr(ctx, err) {
			end := len(buf)
			if n <= start {
				end = start
			}
			if n < end {
				f.wpend = copy(buf, buf[n:end])
			}
			err = ctx.Err()
		} else if f.isClosing() {
			err = f.closedErr()
		} else {
			err = f.lostErr(ctx, err)
		}
	}
	if cap(buf) <= keepWriteBuffer || f.wpend > 0 {
		f.wbuf = buf
	} else {
		f.wbuf = nil
	}
	return err
}

// isCtxErr reports whether a write failed because ctx interrupted it.
func isCtxErr(ctx context.Context, err error) bool {
	return ctx.Err() != nil && (errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}

// writeCtx writes b, interrupted by ctx if w can take a deadline.
func (f *framer) writeCtx(ctx context.Context, b []byte) (int, error) {
	if f.wdl == nil || ctx.Done() == nil {
		return f.w.Write(b)
	}
	if f.tryWrite != nil {
		// Fast path: one non-blocking attempt, which succeeds whenever the
		// pipe has room, and costs no context registration.
		n, done := f.tryWrite(b)
		if done {
			return n, nil
		}
		m, err := f.writeInterruptible(ctx, b[n:])
		return n + m, err
	}
	return f.writeInterruptible(ctx, b)
}

// writeInterruptible writes b with a context watcher that sets a past write
// deadline when ctx ends.
func (f *framer) writeInterruptible(ctx context.Context, b []byte) (int, error) {
	f.wdMu.Lock()
	f.wgen++
	gen := f.wgen
	f.wdMu.Unlock()
	stop := context.AfterFunc(ctx, func() {
		f.wdMu.Lock()
		defer f.wdMu.Unlock()
		if f.wgen == gen {
			_ = f.wdl.SetWriteDeadline(aLongTimeAgo)
			f.wdDirty = true
		}
	})
	n, err := f.w.Write(b)
	stop()
	f.wdMu.Lock()
	f.wgen++
	if f.wdDirty {
		_ = f.wdl.SetWriteDeadline(time.Time{})
		f.wdDirty = false
	}
	f.wdMu.Unlock()
	return n, err
}
