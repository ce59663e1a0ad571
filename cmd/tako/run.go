package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/chzyer/readline"

	"github.com/tako-mcp/tako/dial"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/streamablehttp"
	"github.com/tako-mcp/tako/transport"
)

// Exit statuses, as doc.go promises them.
const (
	exitOK        = 0
	exitToolError = 1 // the tool ran and reported isError
	exitUsage     = 2 // the command line is wrong
	exitFailure   = 3 // the server could not be started or reached, or broke the protocol
	// exitAuth (4, authmsg.go): the server wants a login: run tako login
)

// maxMessage caps the one line tako prints on stderr: enough for a path, an
// error and the end of a stack trace, short enough to stay readable.
const maxMessage = 400

// operation is what a command does once the server is connected: its
// result goes to stdout, progress and the server's log messages to stderr.
type operation func(ctx context.Context, t transport.Transport, stdout, stderr io.Writer) error

// run is tako without the process around it: it parses args, does the work,
// writes to stdout and stderr and returns the exit status. main adds only
// the signal handling, so tests call run directly.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	// The server's stderr and the engine's log lines reach stderr from
	// other goroutines (with --verbose), so writes to it are serialised.
	stderr = &lockedWriter{w: stderr}
	if len(args) > 0 && args[0] == "agent" {
		// agent has flags of its own and repeatable server flags (agent.go).
		return report(stderr, runAgent(ctx, args[1:], stdout, stderr))
	}
	if len(args) > 0 && args[0] == "shell" { // shellrun.go
		return report(stderr, runShell(ctx, args[1:], os.Stdin, stdout, stderr))
	}
	if len(args) > 0 && args[0] == "inspect" { // inspect.go
		return report(stderr, runInspect(ctx, args[1:], stdout, stderr))
	}
	if len(args) > 0 && args[0] == "login" { // login.go
		return report(stderr, runLogin(ctx, args[1:], stdout, stderr))
	}
	if len(args) > 0 && args[0] == "logout" {
		return report(stderr, runLogout(ctx, args[1:], stdout, stderr))
	}
	if len(args) > 0 && args[0] == "help" {
		return report(stderr, writeHelp(stdout, args[1:]))
	}
	inv, err := parseArgs(args)
	if err == nil && inv.opts.help {
		if commands[inv.command] == nil {
			return report(stderr, writeHelp(stdout, nil))
		}
		return report(stderr, writeHelp(stdout, []string{inv.command}))
	}
	if err == nil {
		err = execute(ctx, inv, stdout, stderr)
	}
	return report(stderr, err)
}

// writeHelp is `tako help [CMD|all]`.
func writeHelp(stdout io.Writer, args []string) error {
	text := shortHelp
	switch {
	case len(args) > 1:
		return usagef("help takes one command name: tako help CMD")
	case len(args) == 0:
	case args[0] == "all":
		text = usage()
	default:
		if text = commandHelp(args[0]); text == "" {
			return usagef("no command %q; the commands are %s", args[0], commandNames())
		}
	}
	_, err := io.WriteString(stdout, text)
	return err
}

// execute checks the whole command line, then connects, runs the command
// and closes the session, all within the timeout.
func execute(ctx context.Context, inv *invocation, stdout, stderr io.Writer) error {
	c := commands[inv.command]
	switch {
	case inv.command == "":
		return usagef("no command given (see tako help)")
	case c == nil || c.op == nil:
		return usagef("unknown command %q (see tako help)", inv.command)
	case inv.command == "bridge":
		return runBridge(ctx, inv, stdout, stderr)
	case inv.command == "servers":
		return runServers(ctx, inv, stdout)
	}
	op, err := c.op(inv)
	if err != nil {
		return err
	}

	var logger *slog.Logger
	if inv.opts.verbose {
		logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if inv.command == "call" && readline.IsTerminal(int(os.Stdin.Fd())) {
		// A person is there: the server may ask them (elicit.go). A
		// call from a script declares no elicitation, so the server
		// does not ask.
		p := &elicitPrompter{out: stderr, readLine: (&stdinLines{r: os.Stdin, out: stderr}).readLine}
		inv.opts.session = &transport.Options{Handlers: p.handlers()}
	}
	dial, err := chooseServer(&inv.opts, logger)
	if err != nil {
		return err
	}

	opCtx, cancel := withTimeout(ctx, inv.opts.timeout)
	defer func() { cancel() }()

	s, err := dial(opCtx)
	if again := awaitLogin(ctx, opCtx, err, stderr); again {
		cancel()
		opCtx, cancel = withTimeout(ctx, inv.opts.timeout)
		s, err = dial(opCtx)
	}
	if err != nil {
		return explain(ctx, opCtx, inv.opts.timeout, "connect", err)
	}
	if logger != nil {
		info := s.ServerInfo()
		logger.Debug("connected", "server", info.Implementation.Name, "version", info.Implementation.Version,
			"protocol", info.ProtocolVersion)
	}
	unsubscribe := showLogs(inv, s, stderr)
	err = op(opCtx, s, stdout, stderr)
	if awaitLogin(ctx, opCtx, err, stderr) {
		// Refused at the door (403 insufficient_scope) and logged in
		// with more scope meanwhile: the request is sent again.
		cancel()
		opCtx, cancel = withTimeout(ctx, inv.opts.timeout)
		err = op(opCtx, s, stdout, stderr)
	}
	unsubscribe()
	// Close is bounded by the transport itself; its error matters only
	// when everything else went well, and even then the answer is out.
	// Under --timeout (or an interrupt) the close keeps the same
	// deadline: a server that ignores its stdin closing and SIGTERM is
	// killed when it passes, not after the graces (DESIGN.md rule 3).
	if cerr := closeWithin(ctx, opCtx, inv.opts.timeout > 0, s); cerr != nil && logger != nil {
		logger.Debug("close", "err", cerr)
	}
	var te *toolError
	if err == nil || errors.As(err, &te) {
		return err
	}
	var ue *usageError
	if errors.As(err, &ue) {
		return err // a bad argument found against what the server said (call's k=v)
	}
	return explain(ctx, opCtx, inv.opts.timeout, c.stage(inv), err)
}

// withTimeout is ctx bounded by --timeout (0: not bounded).
func withTimeout(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout > 0 {
		return context.WithTimeout(ctx, timeout)
	}
	return context.WithCancel(ctx)
}

// awaitLogin waits for the login in the browser that err says is still
// under way, when --timeout ended the command while the person was at it:
// the timeout is the server's, not the person's. It reports whether the
// login succeeded, so that the step is done again with a fresh timeout.
// Ctrl-C ends the wait and the login.
func awaitLogin(ctx, opCtx context.Context, err error, stderr io.Writer) bool {
	var w transport.AuthWaiter
	if err == nil || ctx.Err() != nil || opCtx.Err() == nil || !errors.As(err, &w) {
		return false
	}
	fmt.Fprintln(stderr, "tako: waiting for the login in the browser to finish (Ctrl-C stops)")
	return w.WaitAuth(ctx) == nil
}

// explain turns an error from the session into the message a person reads:
// what tako was doing, then why it failed, in words rather than in wrapped
// Go errors where a better phrase exists. The original error stays in the
// chain for errors.Is and errors.As.
func explain(ctx, opCtx context.Context, timeout time.Duration, stage string, err error) error {
	var (
		se *stageError
		de *dial.Error
	)
	if errors.As(err, &se) {
		stage, err = se.stage, se.err
	}
	if errors.As(err, &de) {
		// The step dial names, in the words the messages below use; a
		// failed handshake is the caller's stage ("connect").
		switch de.Op {
		case "start":
			stage = "start " + de.Target
		case "connect", "auth", "check":
			stage = "reach " + shownURL(de.Target)
		}
		err = de.Err
	}
	var (
		exitErr   *stdio.ExitError
		rpcErr    *mcp.Error
		statusErr *streamablehttp.StatusError
		typeErr   *streamablehttp.ContentTypeError
		skipped   *stdio.SkippedLinesError
		why       string
	)
	if msg, ok := authFailure(err); ok {
		return &failure{msg: msg, err: err}
	}
	errors.As(err, &skipped)
	if name, ok := strings.CutPrefix(stage, "start "); ok {
		if w, ok := startFailure(name, err); ok {
			return &failure{msg: "cannot start " + w, err: err}
		}
	}
	switch {
	case ctx.Err() != nil:
		why = "interrupted"
	case errors.Is(opCtx.Err(), context.DeadlineExceeded):
		why = fmt.Sprintf("timed out after %v (see --timeout)", timeout)
	case errors.As(err, &exitErr):
		why = describeExit(exitErr, skipped)
		skipped = nil
	case errors.As(err, &typeErr):
		// Before StatusError: a 405 to the POST and then a page for the
		// 2024-11-05 GET is best told by the page.
		why = contentTypeFailure(typeErr)
	case errors.As(err, &statusErr):
		why = httpFailure(statusErr)
	case errors.As(err, &rpcErr):
		why = fmt.Sprintf("the server answered error %d: %s", rpcErr.Code, rpcErr.Message)
	default:
		why = err.Error()
		skipped = nil // the error says it already
	}
	if skipped != nil && ctx.Err() == nil {
		why += "; " + skipped.Summary()
	}
	return &failure{msg: stage + ": " + why, err: err}
}

// describeExit says how the server process ended, with the last lines it
// wrote on stderr: that is where a server says why it could not start.
// skipped, when not nil, is what it wrote on stdout that was not JSON-RPC.
func describeExit(e *stdio.ExitError, skipped *stdio.SkippedLinesError) string {
	msg := fmt.Sprintf("the server exited with status %d", e.ExitCode)
	if e.Signal != "" {
		msg = "the server was killed by " + e.Signal
	}
	var lines []string
	for _, l := range strings.Split(e.Stderr, "\n") {
		if l = cleanLine(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		if skipped != nil {
			return msg + " and wrote nothing on stderr; " + skipped.Summary()
		}
		return msg + " and wrote nothing on stderr (-v shows what it wrote on stdout)"
	}
	tail := tellingStderr(lines)
	if r := []rune(tail); len(r) > 200 {
		tail = string(r[:199]) + "…"
	}
	if skipped != nil {
		return msg + ": " + tail + "; " + skipped.Summary()
	}
	return msg + ": " + tail
}

// report prints err as one line on stderr and returns the exit status it
// calls for.
func report(stderr io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	code := exitFailure
	var (
		ue *usageError
		te *toolError
	)
	switch {
	case errors.As(err, &ue):
		code = exitUsage
	case errors.As(err, &te):
		code = exitToolError
	case isAuthNeeded(err):
		code = exitAuth
	}
	fmt.Fprintf(stderr, "tako: %s\n", truncate(cleanLine(err.Error()), maxMessage))
	return code
}

// failure is an error explained for a person (see explain).
type failure struct {
	msg string
	err error
}

func (f *failure) Error() string { return f.msg }
func (f *failure) Unwrap() error { return f.err }

// stageError names the step that failed when it is not the one the caller
// would assume (starting the process rather than the handshake).
type stageError struct {
	stage string
	err   error
}

func (e *stageError) Error() string { return e.stage + ": " + e.err.Error() }
func (e *stageError) Unwrap() error { return e.err }

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// closeWithin closes t, bounded by opCtx when the command has a deadline
// or was interrupted and t can close within a context (a Session).
func closeWithin(ctx, opCtx context.Context, deadline bool, t transport.Transport) error {
	c, ok := t.(interface{ CloseContext(context.Context) error })
	if !ok || (!deadline && ctx.Err() == nil) {
		return t.Close()
	}
	return c.CloseContext(opCtx)
}
