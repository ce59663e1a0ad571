package interop

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// tako shell as a person uses it: the built binary on a pseudo-terminal,
// with server-everything over stdio. The test types, and reads what the
// terminal shows.

// ptyScreen collects what the terminal shows and wakes whoever waits for
// a piece of it.
type ptyScreen struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	mark  int // expect looks only past what it already matched
	wrote chan struct{}
}

func (s *ptyScreen) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.buf.Write(p)
	s.mu.Unlock()
	select {
	case s.wrote <- struct{}{}:
	default:
	}
	return len(p), nil
}

// expect waits until the terminal has shown want since the last match.
func (s *ptyScreen) expect(t *testing.T, want string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		s.mu.Lock()
		seen := s.buf.String()[s.mark:]
		if i := strings.Index(seen, want); i >= 0 {
			s.mark += i + len(want)
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		select {
		case <-s.wrote:
		case <-timeout:
			t.Fatalf("the terminal did not show %q within 30s; it shows:\n%q", want, seen)
		}
	}
}

// children lists the pids whose parent is pid.
func children(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var kids []int
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			if n, err := strconv.Atoi(e.Name()); err == nil {
				kids = append(kids, n)
			}
		}
	}
	return kids
}

// alive reports whether a process pid exists (a zombie counts: nobody
// reaped it).
func alive(pid int) bool {
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// TestShellPTY types at tako shell on a pseudo-terminal: tools lists the
// tools, "call ec" and TAB completes to echo, the call answers, a log
// message arriving while a line is edited is printed above it without
// garbling it, quit ends the shell, and neither tako nor the server is
// left running.
// onPTY starts cmd on a pseudo-terminal. It returns what the terminal
// shows, a function that types, and a channel closed when cmd has exited
// (its Wait error then in *waitErr). The cleanup kills cmd if it still
// runs, and logs the screen when the test failed.
func onPTY(t *testing.T, cmd *exec.Cmd) (screen *ptyScreen, typeText func(string), exited <-chan struct{}, waitErr *error) {
	t.Helper()
	return onPTYSized(t, cmd, 200)
}

// onPTYSized is onPTY on a terminal of cols columns.
func onPTYSized(t *testing.T, cmd *exec.Cmd, cols uint16) (screen *ptyScreen, typeText func(string), exited <-chan struct{}, waitErr *error) {
	t.Helper()
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: cols})
	if err != nil {
		t.Fatalf("starting tako on a pseudo-terminal: %v", err)
	}
	screen = &ptyScreen{wrote: make(chan struct{}, 1)}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		io.Copy(screen, tty) // ends with EIO once tako has exited
	}()
	done := make(chan struct{})
	waitErr = new(error)
	go func() { *waitErr = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			cmd.Process.Kill()
			<-done
		}
		tty.Close()
		<-copied
		if t.Failed() {
			t.Logf("the terminal showed:\n%q", screen.buf.String())
		}
	})
	typeText = func(s string) {
		t.Helper()
		if _, err := io.WriteString(tty, s); err != nil {
			t.Fatalf("typing %q: %v", s, err)
		}
	}
	return screen, typeText, done, waitErr
}

// waitExited waits for a tako started by onPTY to exit, successfully.
func waitExited(t *testing.T, what string, exited <-chan struct{}, waitErr *error) {
	t.Helper()
	select {
	case <-exited:
		if *waitErr != nil {
			t.Fatalf("%s exited with %v", what, *waitErr)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not exit within 30s", what)
	}
}

// callOnPTY runs tako call TOOL ARGS... against server-everything over
// stdio, on a pseudo-terminal.
func callOnPTY(t *testing.T, tool string, toolArgs ...string) (*ptyScreen, func(string), <-chan struct{}, *error) {
	t.Helper()
	node, args := everything(t)
	argv := append([]string{"call", "--stdio", "'" + node + "' '" + strings.Join(args, "' '") + "'", tool}, toolArgs...)
	cmd := exec.Command(takoCLI(t), argv...)
	cmd.Env = append(os.Environ(), "TERM=xterm")
	return onPTY(t, cmd)
}

// everythingForm is the order of the fields server-everything's
// trigger-elicitation-request asks for; each prompt ends with "]: ".
var everythingForm = []string{"name", "check", "firstLine", "email", "homepage", "birthdate", "integer", "number",
	"untitledSingleSelectEnum", "untitledMultipleSelectEnum", "titledSingleSelectEnum", "titledMultipleSelectEnum", "legacyTitledEnum"}

// answerEverythingForm answers the form with name and Enter (the default,
// or nothing) for every other field, waiting for each prompt.
func answerEverythingForm(t *testing.T, screen *ptyScreen, typeText func(string), name string) {
	t.Helper()
	screen.expect(t, "The server asks: Please provide inputs")
	for i, f := range everythingForm {
		screen.expect(t, f)
		screen.expect(t, "]: ")
		if i == 0 {
			typeText(name + "\r")
		} else {
			typeText("\r")
		}
	}
	screen.expect(t, "User provided the requested information")
	screen.expect(t, "- Name: "+name)
	screen.expect(t, "- Favorite Integer: 42") // the default, filled in by the SDK
}

// TestCallElicitationPTY: tako call on a terminal declares elicitation,
// so server-everything offers trigger-elicitation-request, and the form
// it asks is answered at the terminal.
func TestCallElicitationPTY(t *testing.T) {
	screen, typeText, exited, waitErr := callOnPTY(t, "trigger-elicitation-request")
	answerEverythingForm(t, screen, typeText, "Ada")
	waitExited(t, "tako call", exited, waitErr)
}

// TestCallElicitationChecksEachAnswerPTY: a wrong answer to
// server-everything's form (an email without @, a URI without a scheme, a
// date in another order, an integer past its maximum) is refused as it
// is typed and asked again; the answers before it are kept, and the form
// the server gets has the corrected ones.
func TestCallElicitationChecksEachAnswerPTY(t *testing.T) {
	screen, typeText, exited, waitErr := callOnPTY(t, "trigger-elicitation-request")
	screen.expect(t, "The server asks: Please provide inputs")
	answers := map[string][][2]string{
		"name":      {{"Ada", ""}},
		"email":     {{"ada(at)example.com", "email wants an email address"}, {"ada@example.com", ""}},
		"homepage":  {{"not a uri", "homepage wants a URI"}, {"https://ada.example/", ""}},
		"birthdate": {{"10/12/1815", "birthdate wants a date such as"}, {"1815-12-10", ""}},
		"integer":   {{"500", "integer wants a number of at most 100, not 500"}, {"7", ""}},
	}
	for _, f := range everythingForm {
		screen.expect(t, f)
		screen.expect(t, "]: ")
		tries := answers[f]
		if tries == nil {
			typeText("\r")
			continue
		}
		for _, try := range tries {
			typeText(try[0] + "\r")
			if try[1] != "" {
				screen.expect(t, try[1])
				screen.expect(t, "]: ")
			}
		}
	}
	screen.expect(t, "User provided the requested information")
	for _, want := range []string{"- Name: Ada", "- Email: ada@example.com", "- Homepage: https://ada.example/", "- Birthdate: 1815-12-10", "- Favorite Integer: 7"} {
		screen.expect(t, want)
	}
	waitExited(t, "tako call", exited, waitErr)
}

// TestCallURLElicitationPTY: a URL elicitation is shown at the terminal
// and answered with Enter or !decline, on the request path
// (elicitation/create in URL mode) and on the error path (-32042, which
// the SDK answers through the same prompt and then retries the call).
func TestCallURLElicitationPTY(t *testing.T) {
	t.Run("ErrorPath", func(t *testing.T) {
		screen, typeText, exited, waitErr := callOnPTY(t, "trigger-url-elicitation", "url=https://example.test/done", "errorPath=true")
		screen.expect(t, "open this page: https://modelcontextprotocol.io")
		screen.expect(t, "Press Enter when done")
		typeText("\r")
		screen.expect(t, "open this page: https://example.test/done")
		screen.expect(t, "Press Enter when done")
		typeText("\r")
		screen.expect(t, "User completed the URL elicitation flow")
		waitExited(t, "tako call", exited, waitErr)
	})
	t.Run("Decline", func(t *testing.T) {
		screen, typeText, exited, waitErr := callOnPTY(t, "trigger-url-elicitation", "url=https://example.test/no")
		screen.expect(t, "open this page: https://example.test/no")
		screen.expect(t, "Press Enter when done")
		typeText("!decline\r")
		screen.expect(t, "User declined to open the URL")
		waitExited(t, "tako call", exited, waitErr)
	})
}

func TestShellPTY(t *testing.T) {
	node, args := everything(t)
	cmd := exec.Command(takoCLI(t), "shell", "--log-level", "debug", "--stdio", "'"+node+"' '"+strings.Join(args, "' '")+"'")
	cmd.Env = append(os.Environ(), "TAKO_SHELL_HISTORY=off", "TERM=xterm")
	screen, typeText, exited, waitErrp := onPTY(t, cmd)

	screen.expect(t, "everything> ")
	servers := children(cmd.Process.Pid)
	if len(servers) != 1 {
		t.Fatalf("tako has %d child processes, want the server alone: %v", len(servers), servers)
	}

	typeText("tools\r")
	screen.expect(t, "echo(message)")
	screen.expect(t, "trigger-long-running-operation")
	screen.expect(t, "everything> ")

	typeText("call ec\t")
	screen.expect(t, "call echo ")
	typeText("message=hi\r")
	screen.expect(t, "Echo: hi")
	screen.expect(t, "everything> ")

	// A log message that arrives while a line is being edited is shown
	// above it, and the line is drawn again as it was.
	typeText("call toggle-simulated-logging\r")
	screen.expect(t, "Started simulated")
	screen.expect(t, "everything> ")
	typeText("pin")
	screen.expect(t, "pin")
	screen.expect(t, "everything: [")
	screen.expect(t, "everything> pin")
	typeText("g\r")
	screen.expect(t, "ok: mcp-servers/everything")

	// A server's form, asked through the line editor while the call runs.
	typeText("call trigger-elicitation-request\r")
	answerEverythingForm(t, screen, typeText, "Grace")
	screen.expect(t, "everything> ")

	typeText("quit\r")
	waitExited(t, "tako shell", exited, waitErrp)
	for _, pid := range servers {
		if alive(pid) {
			stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			t.Errorf("the server (pid %d) outlived the shell: %s", pid, stat)
		}
	}
}

// shellOnPTY starts tako shell on server-everything over stdio, on a
// pseudo-terminal, and waits for its prompt.
func shellOnPTY(t *testing.T, flags ...string) (*ptyScreen, func(string), <-chan struct{}, *error) {
	t.Helper()
	node, args := everything(t)
	argv := append([]string{"shell", "--stdio", "'" + node + "' '" + strings.Join(args, "' '") + "'"}, flags...)
	cmd := exec.Command(takoCLI(t), argv...)
	cmd.Env = append(os.Environ(), "TAKO_SHELL_HISTORY=off", "TERM=xterm")
	screen, typeText, exited, waitErr := onPTY(t, cmd)
	screen.expect(t, "everything> ")
	return screen, typeText, exited, waitErr
}

// TestShellCtrlDTypedAheadPTY: a Ctrl-D typed while a command runs, or
// the moment its result shows, ends the shell once the command is done; it
// was lost (1 run in 12) when it reached the terminal in cooked mode,
// between two line reads, where the line discipline takes it as an end of
// file for a read nobody made.
func TestShellCtrlDTypedAheadPTY(t *testing.T) {
	t.Run("WhileRunning", func(t *testing.T) {
		screen, typeText, exited, waitErr := shellOnPTY(t)
		typeText("call trigger-long-running-operation duration=1 steps=1\r\x04")
		screen.expect(t, "Long running operation completed")
		waitExited(t, "tako shell", exited, waitErr)
	})
	t.Run("RightAfterTheResult", func(t *testing.T) {
		screen, typeText, exited, waitErr := shellOnPTY(t)
		typeText("ping\r")
		screen.expect(t, "ok: mcp-servers/everything")
		typeText("\x04")
		waitExited(t, "tako shell", exited, waitErr)
	})
}

// TestShellAtThePromptPTY: at the prompt a JSON object needs no quotes,
// TAB completes a prompt argument's value with the server's completion,
// and the list changes server-everything announces at start (it registers
// tools as the client's capabilities allow) print nothing, since nothing
// the person saw changed.
func TestShellAtThePromptPTY(t *testing.T) {
	screen, typeText, exited, waitErr := shellOnPTY(t)
	typeText(`call echo {"message": "hi there"}` + "\r")
	screen.expect(t, "Echo: hi there")
	screen.expect(t, "everything> ")
	typeText("prompt completable-prompt department=Eng\t")
	screen.expect(t, "department=Engineering ")
	typeText("name=\r")
	screen.expect(t, "everything> ")
	typeText("tools\r")
	screen.expect(t, "echo(message)")
	screen.expect(t, "everything> ")
	// A sampling request during a call is asked through the line editor.
	typeText("call trigger-sampling-request prompt=hi\r")
	screen.expect(t, "[user] Resource trigger-sampling-request context: hi")
	screen.expect(t, "Type the answer (!decline refuses): ")
	typeText("Hello.\r")
	screen.expect(t, `"text": "Hello."`)
	screen.expect(t, "everything> ")
	screen.mu.Lock()
	shown := screen.buf.String()
	screen.mu.Unlock()
	if strings.Contains(shown, "changed") {
		t.Errorf("a list change that changed nothing was told:\n%q", shown)
	}
	typeText("quit\r")
	waitExited(t, "tako shell", exited, waitErr)
}

// TestCallSamplingTypedPTY: tako call on a terminal declares sampling, so
// server-everything offers trigger-sampling-request; its request is shown,
// and the answer typed there goes back to the server.
func TestCallSamplingTypedPTY(t *testing.T) {
	screen, typeText, exited, waitErr := callOnPTY(t, "trigger-sampling-request", "prompt=the capital of France?")
	screen.expect(t, "The server asks for a model's answer (sampling, at most 100 tokens):")
	screen.expect(t, "[system] You are a helpful test server.")
	screen.expect(t, "[user] Resource trigger-sampling-request context: the capital of France?")
	screen.expect(t, "Type the answer (!decline refuses): ")
	typeText("Paris.\r")
	screen.expect(t, "LLM sampling result:")
	screen.expect(t, `"model": "human"`)
	screen.expect(t, `"text": "Paris."`)
	waitExited(t, "tako call", exited, waitErr)

	screen, typeText, exited, waitErr = callOnPTY(t, "trigger-sampling-request", "prompt=no")
	screen.expect(t, "Type the answer (!decline refuses): ")
	typeText("!decline\r")
	screen.expect(t, "the user declined the sampling request")
	select {
	case <-exited: // the call fails: the server reports the refusal
		if *waitErr == nil {
			t.Error("tako call exited 0 after the sampling request was declined")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("tako call did not exit within 30s")
	}
}

// TestToolsTableFitsTheTerminalPTY: tako tools cuts its descriptions at
// the terminal's width, whatever it is.
func TestToolsTableFitsTheTerminalPTY(t *testing.T) {
	for _, cols := range []uint16{90, 150} {
		node, args := everything(t)
		cmd := exec.Command(takoCLI(t), "tools", "--stdio", "'"+node+"' '"+strings.Join(args, "' '")+"'")
		cmd.Env = append(os.Environ(), "TERM=xterm")
		screen, _, exited, waitErr := onPTYSized(t, cmd, cols)
		screen.expect(t, "toggle-simulated-logging")
		waitExited(t, "tako tools", exited, waitErr)
		screen.mu.Lock()
		shown := screen.buf.String()
		screen.mu.Unlock()
		cut := 0
		for _, l := range strings.Split(strings.TrimRight(shown, "\r\n"), "\r\n") {
			if n := len([]rune(l)); n > int(cols) {
				t.Errorf("%d columns: a line of %d: %q", cols, n, l)
			}
			if strings.HasSuffix(l, "…") {
				cut++
			}
		}
		if cut == 0 {
			t.Errorf("%d columns: no description was cut:\n%s", cols, shown)
		}
	}
}

// TestCallSamplingWithProviderPTY: with --provider, the model drafts the
// answer, the terminal shows it, and Enter sends it.
func TestCallSamplingWithProviderPTY(t *testing.T) {
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"model":"m-1","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Paris."}}]}`)
	}))
	defer model.Close()
	screen, typeText, exited, waitErr := callOnPTY(t, "trigger-sampling-request", "prompt=the capital of France?",
		"--provider", "openai", "--base-url", model.URL+"/v1", "--model", "m")
	screen.expect(t, "The model (m-1) answers: Paris.")
	screen.expect(t, "Enter sends it; !edit types another; !decline refuses: ")
	typeText("\r")
	screen.expect(t, `"model": "m-1"`)
	screen.expect(t, `"text": "Paris."`)
	waitExited(t, "tako call", exited, waitErr)
}
