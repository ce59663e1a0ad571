package browser

import (
	"runtime"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A URL as an authorization server gives it: a query with &, ;, quotes and
// a $ that a shell would read.
const authURL = `http://127.0.0.1:9/authorize?client_id=c&state=a;b'c"d$HOME&scope=mcp%20read`

// TestCommandReadsBROWSER: $BROWSER's first command, its words split on
// blanks, the URL in place of %s or appended; unset, the platform's opener.
func TestCommandReadsBROWSER(t *testing.T) {
	for _, tc := range []struct {
		browser string
		want    []string
	}{
		{"firefox", []string{"firefox", authURL}},
		{"chromium --new-window:firefox", []string{"chromium", "--new-window", authURL}},
		{"open -a Safari %s --fresh", []string{"open", "-a", "Safari", authURL, "--fresh"}},
		{"wrap --url=%s", []string{"wrap", "--url=" + authURL}},
	} {
		t.Setenv("BROWSER", tc.browser)
		got, err := Command(authURL)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("BROWSER=%q: %q, %v; want %q", tc.browser, got, err, tc.want)
		}
	}
	t.Setenv("BROWSER", "")
	got, err := Command(authURL)
	if err != nil || got[len(got)-1] != authURL || (runtime.GOOS == "linux" && got[0] != "xdg-open") {
		t.Errorf("no BROWSER: %q, %v", got, err)
	}
	t.Setenv("BROWSER", " :firefox")
	if _, err := Command(authURL); err == nil || !strings.Contains(err.Error(), "no command") {
		t.Errorf("BROWSER of blanks before its colon: %v, want an error", err)
	}
}
