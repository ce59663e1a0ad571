package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// The shell: one or more connected servers, a current one that the
// commands act on (use NAME changes it), and the lists that completion
// offers. The line editing around it is in shellrun.go; this part reads a
// line and writes its answer, so that tests drive it without a terminal.

// shellServer is one connected server of the shell.
type shellServer struct {
	name string
	t    transport.Transport

	// The lists completion offers, fetched when first needed and again
	// after the server says one changed.
	mu        sync.Mutex
	tools     []mcp.Tool
	prompts   []mcp.Prompt
	resources []mcp.Resource
	fresh     map[string]bool // by list method
	// names are each list's names as last told (or first listed): a
	// list_changed is reported only when they differ (servers send
	// several at start, as they register what the client's capabilities
	// allow). A listing for completion between a change and its relist
	// does not move them, so the relist still tells the change.
	names map[string][]string
}

// shell runs the commands of tako shell.
type shell struct {
	servers []*shellServer
	cur     *shellServer
	// out receives results, errors and the servers' notifications; it is
	// safe for concurrent use (notifications come from the sessions'
	// goroutines).
	out io.Writer
	// timeout bounds each command; zero means none.
	timeout time.Duration
	unsubs  []func()
	verbose bool // -v: errors whole
	// relists are the listings list changes started; close waits for them.
	// relistMu orders their start with close: a notification still being
	// delivered when close unsubscribes starts none (closing).
	relists  sync.WaitGroup
	relistMu sync.Mutex
	closing  bool
	// failed is the exit status of the first line that failed (0: none);
	// lines piped into the shell then make it exit with it.
	failed, lines, failures int
}

// shellCommands are the shell's own commands, with a line of help each; the
// operations of the command table (tools, call, ...) come first.
var shellCommands = []struct{ name, usage, help string }{
	{"tools", "tools", "list the current server's tools"},
	{"call", "call NAME [K=V ...|JSON]", "call a tool; TAB completes names and argument keys"},
	{"resources", "resources", "list the resources"},
	{"templates", "templates", "list the resource templates"},
	{"read", "read URI", "read a resource"},
	{"prompts", "prompts", "list the prompts"},
	{"prompt", "prompt NAME [K=V ...]", "get a prompt's messages"},
	{"complete", "complete --prompt NAME ARG=PARTIAL", "complete an argument (or --resource URI)"},
	{"ping", "ping", "check that the server answers"},
	{"info", "info", "name, revision, capabilities, instructions"},
	{"servers", "servers", "list the shell's servers; * marks the current one"},
	{"use", "use NAME", "make NAME the current server"},
	{"help", "help [CMD]", "this list, or a command's help"},
	{"quit", "quit, exit, Ctrl-D", "end the shell and its servers"},
}

// newShell makes the shell for servers, which it now owns, the first one
// current, and subscribes to their notifications.
func newShell(servers []*shellServer, out io.Writer, timeout time.Duration) *shell {
	sh := &shell{servers: servers, cur: servers[0], out: out, timeout: timeout}
	for _, s := range servers {
		s.fresh, s.names = map[string]bool{}, map[string][]string{}
		sh.unsubs = append(sh.unsubs, s.t.Subscribe(func(n mcp.Notification) { sh.notify(s, n) }))
		// The lists as they are, so that a change is told only when it
		// changes something.
		sh.background(func() { s.lists(context.Background()) })
	}
	return sh
}

// background runs f on a goroutine of its own that close waits for, unless
// the shell is closing.
func (sh *shell) background(f func()) {
	sh.relistMu.Lock()
	defer sh.relistMu.Unlock()
	if sh.closing {
		return
	}
	sh.relists.Add(1)
	go func() {
		defer sh.relists.Done()
		f()
	}()
}

// close ends the subscriptions and closes every server, at once.
func (sh *shell) close() {
	for _, u := range sh.unsubs {
		u()
	}
	sh.relistMu.Lock()
	sh.closing = true
	sh.relistMu.Unlock()
	sh.relists.Wait()
	var wg sync.WaitGroup
	for _, s := range sh.servers {
		wg.Add(1)
		go func() { defer wg.Done(); s.t.Close() }()
	}
	wg.Wait()
}

// prompt is the prompt line: the current server's name.
func (sh *shell) prompt() string { return sh.cur.name + "> " }

// notify prints a server's notification on its own line (above the line
// being edited: out is the line editor's writer) and marks a changed list
// for completion to fetch again.
func (sh *shell) notify(s *shellServer, n mcp.Notification) {
	var line string
	switch n.Method {
	case mcp.NotificationMessage:
		var p mcp.LoggingMessageParams
		if err := json.Unmarshal(n.Params, &p); err != nil {
			return
		}
		line = logText(&p)
	case mcp.NotificationToolsListChanged, mcp.NotificationPromptsListChanged, mcp.NotificationResourcesListChanged:
		// Listed again off the session's goroutine, and told only if the
		// names differ.
		what := strings.TrimSuffix(strings.TrimPrefix(n.Method, "notifications/"), "/list_changed")
		s.mu.Lock()
		delete(s.fresh, what)
		s.mu.Unlock()
		sh.background(func() {
			if diff := s.relist(what); diff != "" {
				fmt.Fprintf(sh.out, "%s: the %s changed: %s\n", s.name, what, diff)
			}
		})
		return
	case mcp.NotificationResourceUpdated:
		var p struct {
			URI string `json:"uri"`
		}
		json.Unmarshal(n.Params, &p)
		line = "resource updated: " + cleanLine(p.URI)
	default:
		line = "notification " + cleanLine(n.Method)
	}
	fmt.Fprintf(sh.out, "%s: %s\n", s.name, line)
}

// errQuit is what exec returns for quit, exit and Ctrl-D.
var errQuit = errors.New("quit")

// exec runs one line. Its answer and any error go to out; it returns
// errQuit when the shell should end, and nil otherwise: a failing command
// never ends the shell.
func (sh *shell) exec(ctx context.Context, line string) error {
	if strings.TrimSpace(line) != "" {
		sh.lines++
	}
	words, err := splitShellLine(line)
	if err != nil {
		sh.fail(usagef("%v", err))
		return nil
	}
	if len(words) == 0 {
		return nil
	}
	switch words[0] {
	case "quit", "exit":
		return errQuit
	case "help", "?":
		sh.help(words[1:])
		return nil
	case "use":
		if len(words) != 2 {
			sh.fail(usagef("use takes a server name: use NAME (servers lists them)"))
			return nil
		}
		for _, s := range sh.servers {
			if s.name == words[1] {
				sh.cur = s
				return nil
			}
		}
		sh.fail(usagef("no server %q; the servers are %s", words[1], strings.Join(sh.serverNames(), ", ")))
		return nil
	case "servers":
		for _, s := range sh.servers {
			mark := " "
			if s == sh.cur {
				mark = "*"
			}
			fmt.Fprintf(sh.out, "%s %s  %s\n", mark, s.name, serverLabel(s.t.ServerInfo()))
		}
		return nil
	}
	inv, err := parseArgs(words)
	if err != nil {
		sh.fail(err)
		return nil
	}
	c := commands[inv.command]
	switch {
	case c == nil:
		sh.fail(usagef("unknown command %q (help lists them)", inv.command))
		return nil
	case inv.command == "watch":
		sh.fail(usagef("the shell prints the servers' notifications as they come; tako watch is for outside it"))
		return nil
	case !c.server || inv.command == "servers" || inv.command == "bridge":
		sh.fail(usagef("%s is not a shell command; run tako %s outside the shell", inv.command, inv.command))
		return nil
	case inv.opts.server.kind != "" || inv.opts.config != "" || inv.opts.name != "":
		sh.fail(usagef("the servers are given when the shell starts; use NAME picks one of them"))
		return nil
	}
	op, err := c.op(inv)
	if err != nil {
		sh.fail(err)
		return nil
	}
	opCtx, cancel := ctx, context.CancelFunc(func() {})
	if sh.timeout > 0 {
		opCtx, cancel = context.WithTimeout(ctx, sh.timeout)
	}
	defer cancel()
	err = op(opCtx, sh.cur.t, sh.out, sh.out)
	var (
		te *toolError
		ue *usageError
	)
	switch {
	case err == nil:
	case errors.As(err, &te):
		fmt.Fprintf(sh.out, "(the tool reported an error)\n")
		sh.record(exitToolError)
	case errors.As(err, &ue):
		sh.fail(err)
	default:
		sh.fail(explain(ctx, opCtx, sh.timeout, c.stage(inv), err))
	}
	select {
	case <-sessionDone(sh.cur.t):
		fmt.Fprintf(sh.out, "%s: the connection is closed; use another server or quit\n", sh.cur.name)
	default:
	}
	return nil
}

// sessionDone is closed when t's connection has ended, if t can tell.
func sessionDone(t transport.Transport) <-chan struct{} {
	if d, ok := t.(interface{ Done() <-chan struct{} }); ok {
		return d.Done()
	}
	return nil
}

// fail prints err as one line, whole under -v.
func (sh *shell) fail(err error) {
	msg := cleanLine(err.Error())
	if !sh.verbose {
		msg = truncate(msg, maxMessage)
	}
	fmt.Fprintf(sh.out, "error: %s\n", msg)
	sh.record(exitCode(err))
}

// record counts a line that failed with status code.
func (sh *shell) record(code int) {
	sh.failures++
	if sh.failed == 0 {
		sh.failed = code
	}
}

// result is how a shell whose lines were piped in ends: with the status
// of the first line that failed, as a script would want to know.
func (sh *shell) result() error {
	if sh.failed == 0 {
		return nil
	}
	return &statusError{code: sh.failed, msg: fmt.Sprintf("shell: %d of %d commands failed (the first with status %d)", sh.failures, sh.lines, sh.failed)}
}

func (sh *shell) help(args []string) {
	if len(args) > 0 {
		if text := commandHelp(args[0]); text != "" && commands[args[0]].server {
			io.WriteString(sh.out, text)
			return
		}
		for _, c := range shellCommands {
			if c.name == args[0] {
				fmt.Fprintf(sh.out, "%s: %s\n", c.usage, c.help)
				return
			}
		}
		sh.fail(usagef("no command %q (help lists them)", args[0]))
		return
	}
	for _, c := range shellCommands {
		fmt.Fprintf(sh.out, "  %-36s %s\n", c.usage, c.help)
	}
	fmt.Fprintf(sh.out, "Commands act on the current server (%s); flags such as --format json work.\n", sh.cur.name)
}

func (sh *shell) serverNames() []string {
	names := make([]string, len(sh.servers))
	for i, s := range sh.servers {
		names[i] = s.name
	}
	return names
}

// listTimeout bounds the listing completion does while the user waits.
const listTimeout = 5 * time.Second

// lists returns the server's tools, prompts and resources for completion,
// listing again those that changed. A list the server does not offer, or
// that fails, is empty.
func (s *shellServer) lists(ctx context.Context) ([]mcp.Tool, []mcp.Prompt, []mcp.Resource) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	for _, what := range []string{"tools", "prompts", "resources"} {
		if !s.fresh[what] {
			s.listLocked(ctx, what)
		}
	}
	return slices.Clone(s.tools), slices.Clone(s.prompts), slices.Clone(s.resources)
}

// relist lists what again after the server said it changed, and returns
// the names added and removed ("+ a, - b"), or "" when none changed or
// nothing was known before.
func (s *shellServer) relist(what string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	before, known := s.names[what]
	after, ok := s.listLocked(ctx, what)
	if !ok || !known {
		return ""
	}
	s.names[what] = after
	return nameDiff(before, after)
}

// listLocked lists what (s.mu held), and returns its names and whether it
// could.
func (s *shellServer) listLocked(ctx context.Context, what string) ([]string, bool) {
	caps := s.t.ServerInfo().Capabilities
	var names []string
	switch {
	case what == "tools" && caps.Tools != nil:
		tools, err := s.t.ListTools(ctx)
		if err != nil {
			return nil, false
		}
		s.tools = tools
		for _, t := range tools {
			names = append(names, t.Name)
		}
	case what == "prompts" && caps.Prompts != nil:
		prompts, err := s.t.ListPrompts(ctx)
		if err != nil {
			return nil, false
		}
		s.prompts = prompts
		for _, p := range prompts {
			names = append(names, p.Name)
		}
	case what == "resources" && caps.Resources != nil:
		res, err := s.t.ListResources(ctx)
		if err != nil {
			return nil, false
		}
		s.resources = res
		for _, r := range res {
			names = append(names, r.URI)
		}
	default:
		return nil, false
	}
	s.fresh[what] = true
	if _, known := s.names[what]; !known {
		s.names[what] = names
	}
	return names, true
}

// nameDiff says which names after added and removed: "+ a, - b".
func nameDiff(before, after []string) string {
	var parts []string
	for _, n := range after {
		if !slices.Contains(before, n) {
			parts = append(parts, "+ "+cleanLine(n))
		}
	}
	for _, n := range before {
		if !slices.Contains(after, n) {
			parts = append(parts, "- "+cleanLine(n))
		}
	}
	return strings.Join(parts, ", ")
}
