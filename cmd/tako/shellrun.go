package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/chzyer/readline"

	"github.com/tako-mcp/tako/mcp"
)

// shellInvocation is a parsed `tako shell` command line.
type shellInvocation struct {
	serverSet
	noHistory bool
	roots     []mcp.Root    // --root DIR, given to every server
	llm       providerFlags // the model that answers sampling requests
}

// parseShellArgs parses the arguments after "shell".
func parseShellArgs(args []string) (*shellInvocation, error) {
	s := &shellInvocation{}
	bools := map[string]func(bool){"no-history": func(v bool) { s.noHistory = v }}
	own := map[string]func(string) error{"root": func(v string) error {
		r, err := parseRoot(v)
		s.roots = append(s.roots, r)
		return err
	}}
	for name, set := range providerFlagSetters {
		own[name] = func(v string) error { return set(&s.llm, v) }
	}
	positional, err := s.parse("shell", args, own, bools)
	if err != nil {
		return nil, err
	}
	if err := s.llm.check(); err != nil {
		return nil, err
	}
	if len(positional) > 0 && !s.help {
		return nil, usagef("tako shell takes no arguments but its servers, got %q; type commands at its prompt", positional[0])
	}
	return s, nil
}

// historyEnv names the history file, or turns history off when set to ""
// or "off" (the tests do).
const historyEnv = "TAKO_SHELL_HISTORY"

// historyPath is where the shell keeps its history: $TAKO_SHELL_HISTORY,
// else tako/shell_history under $XDG_STATE_HOME (state, in the XDG sense),
// else under the user's configuration directory. "" means no history.
func historyPath() string {
	if p, ok := os.LookupEnv(historyEnv); ok {
		if p == "off" {
			return ""
		}
		return p
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "tako", "shell_history")
	}
	if d, err := os.UserConfigDir(); err == nil {
		return filepath.Join(d, "tako", "shell_history")
	}
	return ""
}

// prepareHistory creates the history file, readable by its owner alone
// (arguments typed at the prompt may be secrets), and returns its path, or
// "" when it cannot be had: the shell then runs without history.
func prepareHistory(path string, stderr io.Writer) string {
	if path == "" {
		return ""
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		fmt.Fprintf(stderr, "tako: no history: %v\n", err)
		return ""
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintf(stderr, "tako: no history: %v\n", err)
		return ""
	}
	f.Close()
	return path
}

// runShell is `tako shell`: it connects every server, then reads commands
// from stdin with line editing, history and completion until quit, exit or
// end of input, and closes the servers. A command that fails prints one
// line and the shell goes on; Ctrl-C stops the command that runs, or
// clears the line being edited.
func runShell(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	inv, err := parseShellArgs(args)
	if err != nil {
		return err
	}
	if inv.help {
		_, err := io.WriteString(stdout, commandHelp("shell"))
		return err
	}
	names, err := inv.resolve("shell")
	if err != nil {
		return err
	}
	var logger *slog.Logger
	if inv.verbose {
		logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	// The servers may ask the person at the shell (elicit.go); the
	// prompts go through the line editor, which exists only once the
	// servers are connected.
	var rlRef atomic.Pointer[readline.Instance]
	var running atomic.Bool // a command runs: the editor is free
	var outRef atomic.Pointer[lockedWriter]
	prompter := &elicitPrompter{
		out: writerFunc(func(b []byte) (int, error) {
			if w := outRef.Load(); w != nil {
				return w.Write(b)
			}
			return stderr.Write(b)
		}),
		readLine: func(ctx context.Context, prompt string) (string, error) {
			// The editor is the shell's while no command runs: a request
			// that comes then (no server asks outside a call, but one
			// could) is cancelled rather than fought over.
			rl := rlRef.Load()
			if rl == nil || !running.Load() {
				return "", errRefused
			}
			return shellReadLine(rl, outRef.Load(), prompt)
		}}
	var person *elicitPrompter
	if f, ok := stdin.(*os.File); ok && readline.IsTerminal(int(f.Fd())) {
		// Only with a person at a terminal: lines piped in are commands,
		// not answers to a form they cannot see coming.
		person = prompter
	}
	for i := range inv.serverSet.servers {
		o := &inv.serverSet.servers[i]
		o.roots, o.llm = inv.roots, inv.llm
		if o.session, err = sessionOptions(o, person, prompter.out); err != nil {
			return err
		}
	}
	servers, err := connectShellServers(ctx, &inv.serverSet, names, logger)
	if err != nil {
		return err
	}

	history := ""
	if !inv.noHistory {
		history = prepareHistory(historyPath(), stderr)
	}
	cfg := &readline.Config{
		HistoryFile:       history,
		HistoryLimit:      1000,
		HistorySearchFold: true,
		InterruptPrompt:   "^C",
		Stdin:             io.NopCloser(stdin),
		Stdout:            stdout,
		Stderr:            stderr,
	}
	if history == "" {
		cfg.HistoryLimit = -1
	}
	if _, ok := stdin.(*os.File); !ok {
		// Lines from a reader (a test's) are read without a terminal;
		// for the real stdin the editor looks at the descriptors, so that
		// a piped stdin is read the same way.
		cfg.FuncIsTerminal = func() bool { return false }
		// No terminal, no width to follow: the editor's SIGWINCH
		// goroutine would outlive the shell.
		cfg.FuncOnWidthChanged = func(func()) {}
	}
	rl, err := readline.NewEx(cfg)
	if err != nil {
		closeShellServers(servers)
		return fmt.Errorf("shell: cannot set up the terminal: %w", err)
	}
	// Everything the shell prints goes through the editor, which clears
	// the line being edited, writes, and draws it again.
	shellOut := &lockedWriter{w: rl.Stdout()}
	outRef.Store(shellOut)
	rlRef.Store(rl)
	sh := newShell(servers, shellOut, inv.timeout)
	defer sh.close()
	if f, ok := stdin.(*os.File); ok && readline.IsTerminal(int(f.Fd())) {
		// Keys typed between two line reads wait for the next (shellterm_unix.go).
		if restore, err := typeAhead(int(f.Fd())); err == nil {
			defer restore()
		}
	}
	defer rl.Close()
	fmt.Fprintf(shellOut, "Connected to %s. Type help for the commands, quit or Ctrl-D to leave.\n", joinNames(sh.serverNames()))
	rl.Config.AutoComplete = shellCompleter{sh: sh, ctx: ctx}

	sh.verbose = inv.verbose
	// Lines piped in are a script: one that failed makes the shell fail.
	piped := true
	if f, ok := stdin.(*os.File); ok && readline.IsTerminal(int(f.Fd())) {
		piped = false
	}
	end := func() error {
		if piped {
			return keepWhole(sh.result(), inv.verbose)
		}
		return nil
	}
	for {
		rl.SetPrompt(sh.prompt())
		line, err := rl.Readline()
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			continue
		case errors.Is(err, io.EOF):
			return end()
		case err != nil:
			return fmt.Errorf("shell: reading the terminal: %w", err)
		}
		if ctx.Err() != nil {
			return end()
		}
		running.Store(true)
		err = runLine(ctx, sh, line)
		running.Store(false)
		if errors.Is(err, errQuit) {
			return end()
		}
	}
}

// shellReadLine asks one line of an elicitation through the shell's line
// editor, then puts the shell's prompt back. Ctrl-C or Ctrl-D there
// cancels the form.
func shellReadLine(rl *readline.Instance, out io.Writer, prompt string) (string, error) {
	// The editor's prompt is one line: what comes before the last
	// newline (a field's list of choices) is printed above it.
	if i := strings.LastIndexByte(prompt, '\n'); i >= 0 {
		io.WriteString(out, prompt[:i+1])
		prompt = prompt[i+1:]
	}
	old := rl.Config.Prompt
	rl.SetPrompt(prompt)
	defer rl.SetPrompt(old)
	line, err := rl.Readline()
	if errors.Is(err, readline.ErrInterrupt) || errors.Is(err, io.EOF) {
		return "", errRefused
	}
	return line, err
}

// writerFunc is an io.Writer made of a function.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// runLine runs one command; Ctrl-C (SIGINT) while it runs cancels it and
// only it.
func runLine(ctx context.Context, sh *shell, line string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	intr := make(chan os.Signal, 1)
	signal.Notify(intr, os.Interrupt)
	defer signal.Stop(intr)
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-intr:
			cancel()
		case <-done:
		}
	}()
	return sh.exec(ctx, line)
}

// connectShellServers connects every server at once. If one fails, the
// others are closed and the error names the one that failed.
func connectShellServers(ctx context.Context, set *serverSet, names []string, logger *slog.Logger) ([]*shellServer, error) {
	dials := make([]dialer, len(set.servers))
	for i := range set.servers {
		d, err := chooseServer(&set.servers[i], logger)
		if err != nil {
			return nil, err
		}
		dials[i] = d
	}
	servers := make([]*shellServer, len(dials))
	errs := make([]error, len(dials))
	var wg sync.WaitGroup
	for i, dial := range dials {
		wg.Add(1)
		go func() {
			defer wg.Done()
			timeout := set.timeout
			if timeout <= 0 {
				timeout = defaultTimeout
			}
			dctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			t, err := dial(dctx)
			if err != nil {
				errs[i] = fmt.Errorf("server %s: %w", names[i], explain(ctx, dctx, timeout, "connect", err))
				return
			}
			servers[i] = &shellServer{name: names[i], t: t}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		closeShellServers(servers)
		return nil, err
	}
	uniqueNames(servers)
	return servers, nil
}

func closeShellServers(servers []*shellServer) {
	for _, s := range servers {
		if s != nil {
			s.t.Close()
		}
	}
}

// uniqueNames makes the servers' names unique, as the agent does: a
// second "everything" becomes "everything2".
func uniqueNames(servers []*shellServer) {
	used := map[string]int{}
	for _, s := range servers {
		if s.name == "" {
			s.name = "server"
		}
		used[s.name]++
		if n := used[s.name]; n > 1 {
			s.name = fmt.Sprintf("%s%d", s.name, n)
		}
	}
}

func joinNames(names []string) string {
	switch len(names) {
	case 1:
		return names[0]
	case 2:
		return names[0] + " and " + names[1]
	}
	return fmt.Sprintf("%d servers (%s)", len(names), strings.Join(names, ", "))
}
