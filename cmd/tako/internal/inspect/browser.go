package inspect

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"github.com/tako-mcp/tako/transport"
)

// takoVersion is the version the page shows.
const takoVersion = transport.Version

// openBrowser starts the user's browser at u without a shell, as tako
// login does: the first command of $BROWSER (colon-separated; "%s" in it
// is the URL, else the URL is appended), else the platform's opener. The
// browser is left running; its exit is reaped in the background.
func openBrowser(u string) error {
	var argv []string
	if b := os.Getenv("BROWSER"); b != "" {
		first, _, _ := strings.Cut(b, ":")
		argv = strings.Fields(first)
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
	} else {
		switch runtime.GOOS {
		case "darwin":
			argv = []string{"open", u}
		case "windows":
			argv = []string{"rundll32", "url.dll,FileProtocolHandler", u}
		default:
			argv = []string{"xdg-open", u}
		}
	}
	if len(argv) == 0 {
		return errors.New("$BROWSER is empty")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}
