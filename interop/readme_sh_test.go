package interop

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The README's command lines, run by one bash per group (readme_test.go
// says what the blocks mean). The test writes each command to bash's
// standard input and reads until bash prints the command's exit status
// between two record separators, so that it knows each command's output
// and status apart, and what one command leaves (a variable, a background
// bridge) is there for the next, as in a person's terminal.

// shStep is one command of a sh block.
type shStep struct {
	line       int      // in README.md
	cmd        string   // as bash reads it; continuation lines joined
	want       []string // what a transcript shows it printing; nil: not checked
	input      []string // what the person types into tako shell
	background bool
}

// promptRE is tako shell's prompt, "NAME> ", in a transcript.
var promptRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+> (.*)$`)

// parseSteps reads a sh block's commands, and in a transcript what each
// prints. first is the README line of the block's first line.
func parseSteps(text string, first int) []shStep {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	transcript := false
	for _, l := range lines {
		transcript = transcript || strings.HasPrefix(l, "$ ")
	}
	var steps []shStep
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if transcript && !strings.HasPrefix(l, "$ ") {
			if len(steps) == 0 {
				continue
			}
			s := &steps[len(steps)-1]
			if m := promptRE.FindStringSubmatch(l); m != nil && strings.Contains(s.cmd, "tako shell") {
				s.input = append(s.input, m[1])
			} else {
				s.want = append(s.want, l)
			}
			continue
		}
		l = strings.TrimPrefix(l, "$ ")
		if strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		s := shStep{line: first + i}
		cmd := l
		for strings.HasSuffix(cmd, `\`) && i+1 < len(lines) {
			i++
			cmd += "\n" + lines[i]
		}
		s.cmd = cmd
		if strings.HasSuffix(strings.TrimSpace(stripComment(cmd)), "&") {
			s.background = true
			s.cmd = strings.TrimSuffix(strings.TrimSpace(stripComment(cmd)), "&")
		}
		if transcript {
			s.want = []string{}
		}
		steps = append(steps, s)
	}
	return steps
}

// stripComment drops a trailing "# ..." that is outside quotes.
func stripComment(cmd string) string {
	var quote rune
	for i, c := range cmd {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#' && (i == 0 || cmd[i-1] == ' '):
			return cmd[:i]
		}
	}
	return cmd
}

// listenRE finds what a background command listens on.
var listenRE = regexp.MustCompile(`--listen-(?:ws|grpc) (\S+)|\bPORT=(\d+)`)

// shBlock runs a sh block's commands in the group's bash.
func (r *readmeRun) shBlock(t *testing.T, b *readmeBlock) {
	t.Helper()
	steps := parseSteps(r.substitute(t, b, b.text), b.line+1)
	sh := r.bash(t)
	for i, s := range steps {
		if s.background {
			m := listenRE.FindStringSubmatch(s.cmd)
			if m == nil {
				t.Fatalf("README.md:%d: a background command must say where it listens (--listen-ws, --listen-grpc, PORT=)", s.line)
			}
			addr := m[1]
			if m[2] != "" {
				addr = "127.0.0.1:" + m[2]
			}
			dir := t.TempDir()
			log, exit := filepath.Join(dir, "output"), filepath.Join(dir, "exit")
			// The status file says the command ended, so that the wait
			// below stops at once for a command that fails to start.
			sh.send(t, fmt.Sprintf("{ { %s\n} </dev/null >%q 2>&1; echo $? >%q; } &\n", s.cmd, log, exit))
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			err := waitListening(ctx, addr, exit)
			cancel()
			if err != nil {
				out, _ := os.ReadFile(log)
				t.Fatalf("README.md:%d: %s: %v\nit printed:\n%s", s.line, s.cmd, err, out)
			}
			continue
		}
		start := time.Now()
		out, status := sh.run(t, s)
		t.Logf("README.md:%d: $ %s\n%s(exit %d, %s)", s.line, s.cmd, out, status, time.Since(start).Round(time.Millisecond))
		asked := i+1 < len(steps) && steps[i+1].cmd == "echo $?"
		if status != 0 && !asked {
			t.Errorf("README.md:%d: %s: exit %d, want 0 (or show it with echo $?)\n%s", s.line, s.cmd, status, out)
		}
		if s.want != nil {
			if diff := matchOutput(strings.Join(s.want, "\n"), out); diff != "" {
				t.Errorf("README.md:%d: %s: the output is not what the README shows: %s", s.line, s.cmd, diff)
			}
		}
	}
}

// bashShell is a group's bash, reading commands from a pipe.
type bashShell struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	pipe  *os.File // its stdout and stderr
	out   *bufio.Reader
}

// bash returns the group's bash, starting it.
func (r *readmeRun) bash(t *testing.T) *bashShell {
	t.Helper()
	if r.sh != nil {
		return r.sh
	}
	cmd := r.command(context.Background(), "bash", "--norc", "--noprofile", "-s")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	r.sh = &bashShell{cmd: cmd, stdin: stdin, pipe: pr, out: bufio.NewReader(pr)}
	return r.sh
}

func (sh *bashShell) send(t *testing.T, s string) {
	t.Helper()
	if _, err := io.WriteString(sh.stdin, s); err != nil {
		t.Fatalf("writing to bash: %v", err)
	}
}

// statusRE is the line bash prints after each command.
var statusRE = regexp.MustCompile("\x1e([0-9]+)\x1e\n$")

// run runs one command and returns what it printed and its exit status.
// Standard input is tako shell's input, or nothing.
func (sh *bashShell) run(t *testing.T, s shStep) (string, int) {
	t.Helper()
	in := "</dev/null"
	if s.input != nil {
		in = "<<'README_INPUT'\n" + strings.Join(s.input, "\n") + "\nREADME_INPUT"
	}
	// The command's status is printed on a line of its own, and given
	// back to bash, for an echo $? that follows.
	sh.send(t, fmt.Sprintf("{ %s\n} %s\nreadme_status=$?; printf '\\n\\036%%d\\036\\n' $readme_status; (exit $readme_status)\n", s.cmd, in))
	type result struct {
		out    string
		status int
		err    error
	}
	done := make(chan result, 1)
	go func() {
		var b strings.Builder
		for {
			line, err := sh.out.ReadString('\n')
			b.WriteString(line)
			if err != nil {
				done <- result{b.String(), -1, err}
				return
			}
			if m := statusRE.FindStringSubmatch(line); m != nil {
				out := strings.TrimSuffix(b.String(), line)
				out = strings.TrimSuffix(out, "\n") // the newline before the status
				n, _ := strconv.Atoi(m[1])
				done <- result{out, n, nil}
				return
			}
		}
	}()
	select {
	case res := <-done:
		if res.err != nil {
			t.Fatalf("README.md:%d: %s: bash ended: %v\n%s", s.line, s.cmd, res.err, res.out)
		}
		return res.out, res.status
	case <-time.After(3 * time.Minute):
		t.Fatalf("README.md:%d: %s: no end after 3 minutes", s.line, s.cmd)
		return "", -1
	}
}

// matchOutput reports how got differs from want, or "" when it matches:
// line by line, trailing spaces ignored, "…" standing for any text in a
// line and a line of "…" for any lines.
func matchOutput(want, got string) string {
	w, g := outputLines(want), outputLines(got)
	if matchLines(w, g) {
		return ""
	}
	return fmt.Sprintf("\n--- the README shows:\n%s\n--- it printed:\n%s", strings.Join(w, "\n"), strings.Join(g, "\n"))
}

func outputLines(s string) []string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func matchLines(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if want[0] == "…" {
		for i := 0; i <= len(got); i++ {
			if matchLines(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && matchLine(want[0], got[0]) && matchLines(want[1:], got[1:])
}

func matchLine(want, got string) bool {
	parts := strings.Split(want, "…")
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	return regexp.MustCompile(`^` + strings.Join(parts, `.*`) + `$`).MatchString(got)
}
