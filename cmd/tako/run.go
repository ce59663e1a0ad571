package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chzyer/readline"

	"github.com/tako-mcp/tako/dial"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/streamablehttp"
	"github.com/tako-mcp/tako/transport"
	"github.com/tako-mcp/tako/websocket"
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
	// The commands with parsers of their own get every argument but their
	// name, wherever the name stands: flags may come before it too.
	name, at := commandName(args)
	rest := args
	if at >= 0 {
		rest = append(args[:at:at], args[at+1:]...)
	}
	switch {
	case name == "agent": // agent.go: flags of its own, repeatable servers
		return report(stderr, runAgent(ctx, rest, stdout, stderr))
	case name == "shell": // shellrun.go
		return report(stderr, runShell(ctx, rest, os.Stdin, stdout, stderr))
	case name == "inspect": // inspect.go
		return report(stderr, runInspect(ctx, rest, stdout, stderr))
	case name == "login": // login.go
		return report(stderr, runLogin(ctx, rest, stdout, stderr))
	case name == "logout":
		return report(stderr, runLogout(ctx, rest, stdout, stderr))
	case name == "help":
		return report(stderr, writeHelp(stdout, rest))
	case name == "version", name == "" && slices.Contains(args, "--version"):
		return report(stderr, runVersion(rest, stdout))
	case name == "completion":
		return report(stderr, runCompletion(rest, stdout))
	}
	inv, err := parseArgs(args)
	if err == nil && inv.opts.help {
		if commands[inv.command] == nil {
			return report(stderr, writeHelp(stdout, nil))
		}
		return report(stderr, writeHelp(stdout, []string{inv.command}))
	}
	if err == nil {
		err = keepWhole(execute(ctx, inv, stdout, stderr), inv.opts.verbose || inv.opts.raw())
	}
	return report(stderr, err)
}

// commandName finds the command in args: the first argument that is
// neither a flag nor a flag's value, and its index (-1 when there is
// none). A flag takes a value when any command's parser says so.
func commandName(args []string) (name string, at int) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) {
				return args[i+1], i + 1
			}
			return "", -1
		case len(a) < 2 || a[0] != '-':
			return a, i
		}
		flag, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !hasValue && flagTakesValue(flag) {
			i++
		}
	}
	return "", -1
}

// flagTakesValue reports whether some command's flag of that name takes a
// value.
func flagTakesValue(name string) bool {
	if def := lookupFlag(name); def != nil {
		return def.arg != ""
	}
	for _, flags := range commandFlags {
		if v, ok := flags[name]; ok {
			return v
		}
	}
	return false
}

// writeHelp is `tako help [CMD|all]`.
func writeHelp(stdout io.Writer, args []string) error {
	text := shortHelp
	args = slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == "-h" || a == "--help" || a == "-help" })
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
	case (inv.command == "bridge" || inv.command == "servers") && (len(inv.opts.roots) > 0 || inv.opts.llm.given()):
		return usagef("--root and --provider are for the commands that talk to a server, not %s", inv.command)
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
	var person *elicitPrompter
	if inv.command == "call" && readline.IsTerminal(int(os.Stdin.Fd())) {
		// A person is there: the server may ask them (elicit.go,
		// sampling.go). A call from a script declares no elicitation,
		// and sampling only with --provider, so the server does not ask.
		person = &elicitPrompter{out: stderr, readLine: (&stdinLines{r: os.Stdin, out: stderr}).readLine}
	}
	if inv.opts.session, err = sessionOptions(&inv.opts, person, stderr); err != nil {
		return err
	}
	dial, err := chooseServer(&inv.opts, logger)
	if err != nil {
		return err
	}

	opCtx, cancel := withTimeout(ctx, inv.opts.timeout)
	defer func() { cancel() }()
	// A watch runs until Ctrl-C, unless --timeout says how long: the
	// default bounds only the connecting.
	runCtx := func() context.Context {
		if inv.command == "watch" && !inv.opts.timeoutSet {
			return ctx
		}
		return opCtx
	}

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
	unsubscribe := func() {}
	if inv.command != "watch" { // watch prints them on stdout itself
		unsubscribe = showLogs(inv, s, stderr)
	}
	err = op(runCtx(), s, stdout, stderr)
	if awaitLogin(ctx, opCtx, err, stderr) {
		// Refused at the door (403 insufficient_scope) and logged in
		// with more scope meanwhile: the request is sent again.
		cancel()
		opCtx, cancel = withTimeout(ctx, inv.opts.timeout)
		err = op(runCtx(), s, stdout, stderr)
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

// sessionOptions is what the session declares and answers: the --root
// directories (roots/list), a person's forms (elicitation) when person is
// set, and sampling, answered by the --provider's model or the person.
func sessionOptions(o *options, person *elicitPrompter, stderr io.Writer) (*transport.Options, error) {
	if err := o.llm.check(); err != nil {
		return nil, err
	}
	sess := &transport.Options{}
	if len(o.roots) > 0 {
		sess.Roots = o.roots
	}
	if person != nil {
		sess.Handlers = person.handlers()
	}
	if person != nil || o.llm.given() {
		smp := &sampler{person: person, log: stderr}
		if o.llm.given() {
			p, err := newProvider(&o.llm)
			if err != nil {
				return nil, err
			}
			smp.provider = p
		}
		sess.Handlers.Sampling = smp.sample
	}
	return sess, nil
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
// Go errors where a better phrase exists, and each thing said once. The
// original error stays in the chain for errors.Is and errors.As.
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
	// "reach URL" is the dialer's stage (http.go, ws.go); a person reads
	// the URL once, in the reason when the network failed.
	target, reaching := strings.CutPrefix(stage, "reach ")
	if reaching {
		stage = "connect"
	}
	var (
		exitErr   *stdio.ExitError
		rpcErr    *mcp.Error
		statusErr *streamablehttp.StatusError
		authErr   *streamablehttp.AuthError
		typeErr   *streamablehttp.ContentTypeError
		wsErr     *websocket.HandshakeError
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
	case errors.As(err, &authErr) && !isBearerChallenge(authErr.WWWAuthenticate):
		// A 401 or 403 without an OAuth challenge is the server's own
		// check (its Host or Origin allow-list, a proxy's ACL): no login
		// would change it.
		why = httpFailure(&authErr.StatusError)
	case errors.As(err, &authErr):
		// An OAuth challenge tako could not answer: what went wrong with
		// the authorization, said once.
		why = fmt.Sprintf("the server answered HTTP %d %s", authErr.Code, http.StatusText(authErr.Code))
		if authErr.Cause != nil {
			why += " and tako could not authorize: " + strings.TrimPrefix(unwrapAuth(authErr.Cause).Error(), "auth: ")
		}
	case errors.As(err, &statusErr):
		why = httpFailure(statusErr)
	case errors.As(err, &wsErr):
		why = wsHandshakeFailure(wsErr)
	case errors.As(err, &rpcErr):
		why = rpcFailure(rpcErr)
	default:
		if msg, ok := netFailure(err, target); ok {
			if stage == "connect" {
				return &failure{msg: msg, err: err}
			}
			return &failure{msg: stage + ": " + msg, err: err}
		}
		why = err.Error()
		skipped = nil // the error says it already
	}
	if skipped != nil && ctx.Err() == nil {
		why += "; " + skipped.Summary()
	}
	return &failure{msg: stage + ": " + why, err: err}
}

// mcpErrorPrefix is what the TypeScript SDK puts before the message of
// every error it sends ("MCP error -32602: Tool nope not found"): the
// code, which tako says already.
var mcpErrorPrefix = regexp.MustCompile(`^(?:MCP error|JSON-RPC error|jsonrpc error|Error)\s*-?\d+\s*:\s*`)

// rpcFailure is a JSON-RPC error answer in words: its code, its message
// and, when short, its data.
func rpcFailure(e *mcp.Error) string {
	msg := strings.TrimSpace(mcpErrorPrefix.ReplaceAllString(e.Message, ""))
	why := fmt.Sprintf("the server answered error %d", e.Code)
	if name := rpcCodeNames[e.Code]; name != "" {
		why += " (" + name + ")"
	}
	if msg != "" {
		why += ": " + msg
	}
	if e.Code == mcp.CodeMissingRequiredClientCapability {
		if hint := capabilityHint(e.Data); hint != "" {
			return why + ": " + hint
		}
	}
	if d := compactJSON(e.Data); len(e.Data) > 0 && d != "null" && len(d) <= 200 && !strings.Contains(msg, strings.Trim(d, `"`)) {
		why += " (data: " + d + ")"
	}
	return why
}

// capabilityHint says how to give a server the client capability it
// says it requires (-32021's data.requiredCapabilities).
func capabilityHint(data json.RawMessage) string {
	var d struct {
		Required map[string]json.RawMessage `json:"requiredCapabilities"`
	}
	if json.Unmarshal(data, &d) != nil || len(d.Required) == 0 {
		return ""
	}
	var hints []string
	for _, c := range slices.Sorted(maps.Keys(d.Required)) {
		switch c {
		case "roots":
			hints = append(hints, "it asks for roots: give --root DIR (repeatable)")
		case "sampling":
			hints = append(hints, "it asks for a model's answers (sampling): give --provider and --model, or run the command at a terminal to answer them yourself")
		case "elicitation":
			hints = append(hints, "it asks the user questions (elicitation): run the command at a terminal")
		default:
			hints = append(hints, "it needs the client capability "+cleanLine(c)+", which tako does not declare")
		}
	}
	return strings.Join(hints, "; ")
}

// rpcCodeNames are the JSON-RPC and MCP error codes a person may not know.
var rpcCodeNames = map[int64]string{
	mcp.CodeParseError:     "parse error",
	mcp.CodeInvalidRequest: "invalid request",
	mcp.CodeMethodNotFound: "method not found",
	mcp.CodeInvalidParams:  "invalid params",
	mcp.CodeInternalError:  "internal error",
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
	code := exitCode(err)
	msg := cleanLine(err.Error())
	if !errors.As(err, new(wholeMessage)) {
		msg = truncate(msg, maxMessage)
	}
	fmt.Fprintf(stderr, "tako: %s\n", msg)
	return code
}

// exitCode is the exit status err calls for (doc.go).
func exitCode(err error) int {
	var (
		ue *usageError
		te *toolError
		se *statusError
	)
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &se):
		return se.code
	case errors.As(err, &ue):
		return exitUsage
	case errors.As(err, &te):
		return exitToolError
	case isAuthNeeded(err):
		return exitAuth
	}
	return exitFailure
}

// statusError is a failure with an exit status of its own choosing (the
// shell's, that of the first line that failed).
type statusError struct {
	msg  string
	code int
}

func (e *statusError) Error() string { return e.msg }

// wholeMessage marks an error whose line is printed whole, however long:
// under -v, where a person asked for everything, and under --json, where
// a script reads it and a cut message would lose what it looks for.
type wholeMessage struct{ error }

func (w wholeMessage) Unwrap() error { return w.error }

// keepWhole marks err as wholeMessage when whole is set.
func keepWhole(err error, whole bool) error {
	if err == nil || !whole {
		return err
	}
	return wholeMessage{err}
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
