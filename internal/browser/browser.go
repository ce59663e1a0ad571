// Package browser opens a URL in the user's browser the way tako's login and
// its inspector both do: without a shell, so that no character of the URL
// (which carries a state, a token or a query of the server's choosing) is
// ever read as shell syntax.
package browser

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// Command is the command line that Open runs for u: the first command of
// $BROWSER (a colon-separated list, as xdg-utils and Python's webbrowser
// read it; a "%s" in it is replaced by the URL, else the URL is appended),
// else the platform's opener (open, rundll32's FileProtocolHandler,
// xdg-open) when $BROWSER is unset or empty. A $BROWSER whose first entry
// is blank is an error, not a fallback: the user set it, and a silent
// fallback would open a browser they did not choose.
func Command(u string) ([]string, error) {
	b, set := os.LookupEnv("BROWSER")
	if !set || b == "" {
		switch runtime.GOOS {
		case "darwin":
			return []string{"open", u}, nil
		case "windows":
			return []string{"rundll32", "url.dll,FileProtocolHandler", u}, nil
		default:
			return []string{"xdg-open", u}, nil
		}
	}
	first, _, _ := strings.Cut(b, ":")
	argv := strings.Fields(first)
	if len(argv) == 0 {
		return nil, errors.New("$BROWSER names no command before its first colon")
	}
	replaced := false
	for i, a := range argv {
		if strings.Contains(a, "%s") {
			argv[i] = strings.ReplaceAll(a, "%s", u)
			replaced = true
		}
	}
	if !replaced {
		argv = append(argv, u)
	}
	return argv, nil
}

// Open starts the browser at u (see [Command]) and returns once it has
// started; an error means it could not start, and the caller should show
// the URL instead. The browser is left running (it is the user's), and its
// exit is reaped in the background so that no zombie stays behind. Its
// output goes nowhere: a browser's chatter must not land in a terminal
// that a program is using.
func Open(u string) error {
	argv, err := Command(u)
	if err != nil {
		return err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}
