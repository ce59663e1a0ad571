// Package stdio is tako's stdio transport: it runs an MCP server as a child
// process and speaks newline-delimited JSON-RPC over its stdin and stdout
// (checklist §3).
//
// [Start] runs the command (never through a shell) and returns a [*Conn],
// a [transport.Conn]. [transport.Connect] runs the handshake over it and
// returns a [transport.Session], whose methods are the MCP operations:
// [transport.Session.ListTools], [transport.Session.CallTool] and the rest.
//
//	conn, err := stdio.Start(ctx, &stdio.Options{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"}})
//	if err != nil { ... }
//	s, err := transport.Connect(ctx, conn, nil)
//	if err != nil { ... }
//	defer s.Close()
//	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"message":"hi"}`)})
//
// [transport.Session.Close] ends the server the way the specification asks:
// its stdin closed, then SIGTERM, then SIGKILL to its whole process group,
// each step bounded ([Options.StdinGrace], [Options.TermGrace]). A server
// that exits on its own ends the session with an [*ExitError] (its exit
// status and the tail of its stderr, also at [Conn.Stderr]); lines on its
// stdout that are not JSON-RPC are skipped, and a failed handshake says what
// they were ([*SkippedLinesError]).
//
// The same framing over any pair of byte streams is [NewStreamConn], for
// sockets, in-process pipes and servers.
package stdio

// Design note.
//
// Process. Start runs the command directly (os/exec, never a shell) in a
// process group of its own (Setpgid), so that signals reach the whole tree a
// launcher such as npx or uvx starts, and nothing reaches the client's own
// group. The three standard streams are os.Pipe files we own: cmd.Wait then
// depends on no copying goroutine, our ends of stdout and stderr are
// pollable, so a read can be given a deadline, and stdin is pollable, so a
// blocked write can be interrupted by its context or by Close.
//
// Goroutines. A Conn runs two: the framer's reader turns stdout into
// messages; the stderr drain keeps a bounded tail of stderr (for ExitError
// and Stderr) and logs each line at Debug. The waiter, which reaps the
// process and reports its exit, runs once the process has exited: on Linux
// one goroutine watches every server's pidfd for that (exit_linux.go);
// elsewhere the waiter is a third goroutine, blocked in cmd.Wait for the
// server's life. None of them outlives Close. They wait in the runtime's
// poller, on no OS thread of their own (a goroutine blocked in waitid
// would hold one). Nor does an idle Conn hold a read buffer on Linux: the
// reader waits for stdout to be readable before it takes one, and gives it
// back once what it read is handled (readers.go).
//
// Death. When the server exits (or is killed), the waiter SIGKILLs the rest
// of its group at once, so a grandchild holding stdout open cannot keep the
// pipe alive, and gives both pipes a short read deadline, renewed while data
// still flows, for a descendant that escaped the group. The reader then
// delivers the lines the server wrote before it died and ends with an
// *ExitError (exit code or signal, and the tail of stderr) that wraps
// transport.ErrConnectionLost; a Read pending at that moment returns within
// milliseconds. A Write after the death returns the same error.
//
// Shutdown. Close follows the specification (2025-11-25 basic/lifecycle,
// "Shutdown", stdio; checklist §3.6):
//
//	"For the stdio transport, the client SHOULD initiate shutdown by:
//	 1. First, closing the input stream to the child process (the server)
//	 2. Waiting for the server to exit, or sending SIGTERM if the server does
//	    not exit within a reasonable time
//	 3. Sending SIGKILL if the server does not exit within a reasonable time
//	    after SIGTERM"
//
// Each wait is bounded (Options.StdinGrace, Options.TermGrace, then a fixed
// killWait), the signals go to the whole process group, and pending Read and
// Write calls fail with ErrClosed at the start of Close rather than after
// the grace periods. Close is idempotent and safe to call concurrently with
// everything else; a second caller waits for the first to finish.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

const (
	defaultGrace       = 2 * time.Second
	defaultStderrLimit = 64 << 10
	// killWait bounds the wait for the process after SIGKILL. Only a
	// process stuck in the kernel (uninterruptible sleep) outlasts it.
	killWait = 2 * time.Second
	// drainIdle is how long the pipes may stay silent after the server
	// exited before the readers give up on them: once the process group is
	// dead only a descendant that left the group can hold them open.
	drainIdle = 50 * time.Millisecond
	// stderrWait bounds how long the waiter waits for the stderr drain to
	// finish before it reports the exit.
	stderrWait = 200 * time.Millisecond
	// closedStdoutWait bounds how long a stdout that ended waits for the
	// process to exit, so that the error can say how it exited. A server
	// that closes stdout and lives on gets a plain ErrConnectionLost.
	closedStdoutWait = 500 * time.Millisecond
)

// Options configure Start. Only Command is required.
type Options struct {
	// Command is the program to run, found in PATH if it has no slash. It
	// is run directly with Args, never through a shell.
	Command string
	Args    []string

	// Env holds KEY=VALUE entries added to the inherited environment; an
	// entry overrides an inherited variable of the same name. PATH in Env
	// affects the child only, not the search for Command.
	Env []string

	// Dir is the child's working directory; empty means ours.
	Dir string

	// MaxMessageSize caps one incoming line in bytes; zero means
	// DefaultMaxMessageSize (64 MiB). See StreamOptions.MaxMessageSize.
	MaxMessageSize int

	// StderrLimit is how many bytes of the end of stderr are kept, for
	// Stderr and ExitError. Zero means 64 KiB; negative keeps nothing.
	StderrLimit int

	// Logger receives the server's stderr, line by line at Debug, and the
	// lines skipped on stdout at Warn. Nil discards them.
	Logger *slog.Logger

	// StdinGrace is how long Close waits for the server to exit after its
	// stdin is closed before sending SIGTERM; TermGrace is how long it then
	// waits before sending SIGKILL. Zero means 2 seconds; a negative value
	// skips that wait.
	StdinGrace, TermGrace time.Duration
}

// Conn is a connection to an MCP server running as a child process. It
// implements [transport.Conn]; see that interface for the concurrency
// rules. Create one with [Start], and hand it to [transport.Connect].
type Conn struct {
	f   *framer
	cmd *exec.Cmd
	pid int

	stdinW  *os.File
	stdoutR *os.File
	stderrR *os.File

	stdinGrace, termGrace time.Duration
	log                   *slog.Logger
	tail                  tailBuffer

	exitedFlag atomic.Bool   // set as soon as Wait returns
	exited     chan struct{} // closed once exitErr is set
	exitErr    *ExitError
	stderrDone chan struct{}

	// diedFirst records that the server had exited before Close began, so
	// that calls after Close still say how it died.
	diedFirst atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// Start runs the server and returns a [Conn] to it. ctx bounds only the
// start: the process lives until Close or its own exit. If Start fails,
// nothing is left running; a command that cannot be found gives an error
// wrapping [os/exec.ErrNotFound]. opts must name a Command; its other fields
// have working zero values.
func Start(ctx context.Context, opts *Options) (*Conn, error) {
	if opts == nil || opts.Command == "" {
		return nil, errors.New("stdio: Options.Command is empty")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("stdio: start %s: %w", opts.Command, err)
	}
	cmd := exec.Command(opts.Command, opts.Args...)
	if len(opts.Env) > 0 {
		// exec keeps the last of duplicate keys, so ours win.
		cmd.Env = append(os.Environ(), opts.Env...)
	}
	cmd.Dir = opts.Dir
	cmd.SysProcAttr = sysProcAttr()

	var files []*os.File // every pipe end, for cleanup on failure
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	fail := func(err error) (*Conn, error) {
		for _, f := range files {
			_ = f.Close()
		}
		return nil, fmt.Errorf("stdio: start %s: %w", opts.Command, err)
	}
	stdinR, stdinW, err := pipe()
	if err != nil {
		return fail(err)
	}
	stdoutR, stdoutW, err := pipe()
	if err != nil {
		return fail(err)
	}
	stderrR, stderrW, err := pipe()
	if err != nil {
		return fail(err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	// The child has its copies; ours of its ends must go, or stdout would
	// never reach EOF.
	_ = stdinR.Close()
	_ = stdoutW.Close()
	_ = stderrW.Close()

	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &Conn{
		cmd:        cmd,
		pid:        cmd.Process.Pid,
		stdinW:     stdinW,
		stdoutR:    stdoutR,
		stderrR:    stderrR,
		stdinGrace: grace(opts.StdinGrace),
		termGrace:  grace(opts.TermGrace),
		log:        logger,
		exited:     make(chan struct{}),
		stderrDone: make(chan struct{}),
	}
	c.tail.limit = opts.StderrLimit
	if c.tail.limit == 0 {
		c.tail.limit = defaultStderrLimit
	}
	stdout := &drainReader{f: stdoutR, exited: &c.exitedFlag, ready: readyWaiter(stdoutR)}
	f := newFramer(stdout, stdinW, opts.MaxMessageSize, logger)
	if stdout.ready != nil {
		f.wait = stdout.waitReadable
	}
	f.endErr = c.endErr
	f.closedErr = c.closedErr
	f.lostErr = c.lostErr
	f.preWrite = c.preWrite
	f.tryWrite = newTryWrite(stdinW)
	c.f = f

	go f.readLoop()
	go c.drainStderr()
	watchExit(c.pid, c.wait)
	return c, nil
}

func grace(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return defaultGrace
	case d < 0:
		return 0
	}
	return d
}

// Read returns the next message from the server. It blocks until one
// arrives, ctx is done, or the connection ends. When the server has exited,
// Read first returns the messages it wrote before dying, then an *ExitError.
func (c *Conn) Read(ctx context.Context) (*mcp.Message, error) { return c.f.Read(ctx) }

// Push implements transport.Pusher: the Session gets each message from the
// goroutine that reads the server's stdout, with no hand-off through Read.
func (c *Conn) Push(deliver func(*mcp.Message, error)) { c.f.Push(deliver) }

// Write sends msg to the server as one line. Concurrent writes are
// serialized. It returns ctx's error if ctx ends first (a message cut short
// by that is completed before the next one, so the framing stays intact),
// and the *ExitError if the server has exited.
func (c *Conn) Write(ctx context.Context, msg *mcp.Message) error { return c.f.Write(ctx, msg) }

// Stderr returns the last Options.StderrLimit bytes the server has written
// to stderr so far.
func (c *Conn) Stderr() string { return c.tail.String() }

// Skipped implements transport.SkipReporter: a *SkippedLinesError if the
// server wrote lines to stdout that are not JSON-RPC, else nil.
func (c *Conn) Skipped() error { return c.f.Skipped() }

// Pid returns the server's process id, which is also its process group id.
func (c *Conn) Pid() int { return c.pid }

// Close shuts the server down: it closes its stdin, waits up to StdinGrace
// for it to exit, sends SIGTERM to its process group, waits up to
// TermGrace, then sends SIGKILL. It returns once the process has exited and
// every goroutine of the Conn has ended, or with an error if the process
// would not die even after SIGKILL. Pending and later calls fail with an
// error wrapping transport.ErrClosed, or with the *ExitError if the server
// had already exited.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() { c.closeErr = c.shutdown() })
	return c.closeErr
}

// Abort ends the server at once: SIGKILL to its process group, skipping
// the graceful steps of Close, and a wait for the process to be gone that
// only a process stuck in the kernel can make last (killWait). It is for a
// caller whose deadline has passed (transport.Session.CloseContext uses
// it): a Close already under way then finds the process gone and returns
// within its last bound. It may be called at any time, more than once.
func (c *Conn) Abort() {
	if c.hasExited() {
		return
	}
	c.log.Debug("stdio: aborting the server", "pid", c.pid)
	kill(c.cmd.Process, c.pid)
	c.waitExit(killWait)
}

func (c *Conn) shutdown() error {
	if c.hasExited() {
		c.diedFirst.Store(true)
	}
	c.f.beginClose()

	// Closing our end of stdin is the first step of the sequence; it also
	// ends a Write blocked on a full pipe.
	_ = c.stdinW.Close()
	var err error
	if !c.waitExit(c.stdinGrace) {
		c.log.Debug("stdio: server did not exit after stdin was closed; sending SIGTERM", "pid", c.pid)
		terminate(c.cmd.Process, c.pid)
		if !c.waitExit(c.termGrace) {
			c.log.Debug("stdio: server did not exit after SIGTERM; sending SIGKILL", "pid", c.pid)
			kill(c.cmd.Process, c.pid)
			if !c.waitExit(killWait) {
				err = fmt.Errorf("stdio: server (pid %d) still running %v after SIGKILL", c.pid, killWait)
			}
		}
	}
	// Closing our read ends ends the reader and the drain even if a
	// descendant outside the group still holds the pipes.
	_ = c.stdoutR.Close()
	_ = c.stderrR.Close()
	timer := time.NewTimer(killWait)
	defer timer.Stop()
	for _, done := range []chan struct{}{c.f.readDone, c.stderrDone} {
		select {
		case <-done:
		case <-timer.C:
			if err == nil {
				err = errors.New("stdio: reader goroutines did not stop")
			}
			return err
		}
	}
	return err
}

func (c *Conn) hasExited() bool {
	select {
	case <-c.exited:
		return true
	default:
		return false
	}
}

// waitExit waits up to d for the process to exit.
func (c *Conn) waitExit(d time.Duration) bool {
	if c.hasExited() {
		return true
	}
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.exited:
		return true
	case <-t.C:
		return false
	}
}

// wait is the waiter: it runs once the server has exited, or where that
// cannot be watched for without a thread, at once, blocking in cmd.Wait
// until it has (watchExit, exit_linux.go).
func (c *Conn) wait() {
	_ = c.cmd.Wait() // the status is in ProcessState
	c.exitedFlag.Store(true)
	// The server is gone: whatever is left of its group goes too, so that
	// no grandchild keeps running or keeps the pipes open. (The group id
	// cannot be reused while any member is alive, so this signals no
	// stranger unless the group is already empty.)
	killGroup(c.pid)
	deadline := time.Now().Add(drainIdle)
	_ = c.stdoutR.SetReadDeadline(deadline)
	_ = c.stderrR.SetReadDeadline(deadline)
	// Let the drain catch the server's last words before reporting them.
	t := time.NewTimer(stderrWait)
	select {
	case <-c.stderrDone:
	case <-t.C:
	}
	t.Stop()
	c.exitErr = newExitError(c.cmd.ProcessState, c.tail.String())
	close(c.exited)
}

// endErr is the framer's final Read error: stdout has ended.
func (c *Conn) endErr(readErr error) error {
	if c.f.isClosing() {
		return c.closedErr()
	}
	// Normally stdout ends because the server exited; wait (briefly) for
	// the waiter to say how.
	t := time.NewTimer(closedStdoutWait)
	defer t.Stop()
	select {
	case <-c.exited:
		return c.exitErr
	case <-c.f.closing:
		return c.closedErr()
	case <-t.C:
		return fmt.Errorf("stdio: server (pid %d) closed its stdout (%v): %w", c.pid, readErr, transport.ErrConnectionLost)
	}
}

func (c *Conn) closedErr() error {
	if c.diedFirst.Load() {
		return c.exitErr
	}
	return fmt.Errorf("stdio: %w", transport.ErrClosed)
}

// preWrite refuses to write to a server that has exited.
func (c *Conn) preWrite() error {
	if c.hasExited() {
		return c.exitErr
	}
	return nil
}

// lostErr turns a failed write (EPIPE: the server closed stdin, almost
// always by dying) into the exit error, waiting briefly for the exit.
func (c *Conn) lostErr(ctx context.Context, werr error) error {
	t := time.NewTimer(closedStdoutWait)
	defer t.Stop()
	select {
	case <-c.exited:
		return c.exitErr
	case <-c.f.closing:
		return c.closedErr()
	case <-ctx.Done():
	case <-t.C:
	}
	return fmt.Errorf("stdio: write to server (pid %d): %w: %w", c.pid, transport.ErrConnectionLost, werr)
}

// stderrReadSize is how much of stderr one read takes.
const stderrReadSize = 1 << 10

// drainStderr is the stderr goroutine: it keeps the tail and logs lines.
func (c *Conn) drainStderr() {
	defer close(c.stderrDone)
	r := &drainReader{f: c.stderrR, exited: &c.exitedFlag}
	logging := c.log.Enabled(context.Background(), slog.LevelDebug)
	// Small: stderr is a trickle, and this buffer lives on the goroutine's
	// stack for the Conn's whole life (32 KiB made it a 64 KiB stack for
	// every idle session).
	var buf [stderrReadSize]byte
	var partial []byte // a line not yet ended, for the logger
	for {
		n, err := r.Read(buf[:])
		if n > 0 {
			c.tail.Write(buf[:n])
			if logging {
				partial = c.logLines(append(partial, buf[:n]...))
			}
		}
		if err != nil {
			if len(partial) > 0 {
				c.logLine(partial)
			}
			return
		}
	}
}

// maxLogLine is where an unending stderr line is cut for the logger.
const maxLogLine = 8 << 10

// logLines logs every complete line of b and returns the rest.
func (c *Conn) logLines(b []byte) []byte {
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if len(b) >= maxLogLine {
				c.logLine(b)
				return b[:0]
			}
			return b
		}
		c.logLine(b[:i])
		b = b[i+1:]
	}
}

func (c *Conn) logLine(line []byte) {
	line = trimCR(line)
	c.log.Debug("stdio: server stderr", "pid", c.pid, "line", string(line))
}

func trimCR(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\r' {
		return b[:len(b)-1]
	}
	return b
}

// drainReader reads a pipe of the server. Once the server has exited, every
// read gets a fresh short deadline: data still in the pipe (the server's
// last messages) is read however slowly Read is called, and a pipe held
// open by a descendant that left the group ends after drainIdle of
// silence.
type drainReader struct {
	f      *os.File
	exited *atomic.Bool
	ready  func() error // readyWaiter(f), or nil
}

func (r *drainReader) Read(p []byte) (int, error) {
	r.renew()
	return r.f.Read(p)
}

// waitReadable waits, as Read would, until there is something to read.
func (r *drainReader) waitReadable() error {
	r.renew()
	return r.ready()
}

func (r *drainReader) renew() {
	if r.exited.Load() {
		_ = r.f.SetReadDeadline(time.Now().Add(drainIdle))
	}
}

// ExitError reports that the server process ended. It wraps
// transport.ErrConnectionLost.
type ExitError struct {
	// ExitCode is the exit status, or -1 if the process was killed by a
	// signal.
	ExitCode int
	// Signal names the signal that killed the process ("SIGKILL"), if one
	// did.
	Signal string
	// Stderr is the tail of what the server wrote to stderr (up to
	// Options.StderrLimit bytes): where a server says why it failed.
	Stderr string
}

// Error returns one line: the exit status and the last words of stderr.
func (e *ExitError) Error() string {
	var b strings.Builder
	b.WriteString("stdio: server ")
	if e.Signal != "" {
		b.WriteString("killed by " + e.Signal)
	} else {
		fmt.Fprintf(&b, "exited with status %d", e.ExitCode)
	}
	if t := shortTail(e.Stderr); t != "" {
		b.WriteString("; stderr: ")
		b.WriteString(t)
	}
	return b.String()
}

// Unwrap returns transport.ErrConnectionLost.
func (e *ExitError) Unwrap() error { return transport.ErrConnectionLost }

// shortTail returns the last few non-empty lines of stderr, joined into one
// line of at most about 200 bytes.
func shortTail(s string) string {
	const maxLines, maxBytes = 3, 200
	var lines []string
	for len(s) > 0 && len(lines) < maxLines {
		i := strings.LastIndexByte(s, '\n')
		line := strings.TrimSpace(s[i+1:])
		s = s[:max(i, 0)]
		if line != "" {
			lines = append(lines, line)
		}
	}
	for i, j := 0, len(lines)-1; i < j; i, j = i+1, j-1 {
		lines[i], lines[j] = lines[j], lines[i]
	}
	t := strings.ToValidUTF8(strings.Join(lines, " | "), "\uFFFD")
	if len(t) > maxBytes {
		cut := len(t) - maxBytes
		for cut < len(t) && t[cut]&0xC0 == 0x80 {
			cut++ // do not split a rune
		}
		t = "…" + t[cut:]
	}
	return t
}

func newExitError(ps *os.ProcessState, stderr string) *ExitError {
	e := &ExitError{ExitCode: -1, Stderr: stderr}
	if ps == nil {
		// Only a misuse of os/exec leaves no status; there is nothing
		// more to say than that the process is gone.
		return e
	}
	e.ExitCode = ps.ExitCode()
	e.Signal = exitSignal(ps)
	return e
}

// tailBuffer keeps the last limit bytes written to it.
type tailBuffer struct {
	mu    sync.Mutex
	limit int
	buf   []byte // holds up to 2*limit bytes; the tail is its last limit
}

func (t *tailBuffer) Write(p []byte) {
	if t.limit <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(p) >= t.limit {
		t.buf = append(t.buf[:0], p[len(p)-t.limit:]...)
		return
	}
	if len(t.buf)+len(p) > 2*t.limit {
		n := copy(t.buf, t.buf[len(t.buf)-(t.limit-len(p)):])
		t.buf = t.buf[:n]
	}
	t.buf = append(t.buf, p...)
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > t.limit {
		b = b[len(b)-t.limit:]
	}
	return string(b)
}
