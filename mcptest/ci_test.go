package mcptest_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcptest"
)

// TestInCIReadsEverySpelling: CI=1, CI=yes, CI=TRUE and the like mean CI,
// so a required check cannot be skipped because the CI system spells
// "true" its own way; only unset, empty or a recognizable false does not.
func TestInCIReadsEverySpelling(t *testing.T) {
	for v, want := range map[string]bool{
		"": false, "0": false, "false": false, "FALSE": false, "f": false,
		"no": false, "No": false, "n": false, "off": false, " false ": false,
		"true": true, "TRUE": true, "True": true, "1": true, "yes": true,
		"YES": true, "on": true, "y": true, "2": true, "github-actions": true,
	} {
		t.Setenv("CI", v)
		if got := mcptest.InCI(); got != want {
			t.Errorf("CI=%q: InCI() = %v, want %v", v, got, want)
		}
	}
	t.Setenv("CI", "")
	os.Unsetenv("CI") // t.Setenv restores it after the test
	if mcptest.InCI() {
		t.Error("CI unset: InCI() = true, want false")
	}
}

// skipOrFailProbe names, in the environment of a child test binary, the
// prerequisite TestSkipOrFailProbe pretends is missing.
const skipOrFailProbe = "TAKO_SKIPORFAIL_PROBE"

// TestSkipOrFailProbe is run by TestSkipOrFailFailsUnderCI in a child
// process; run directly (the variable unset) it does nothing.
func TestSkipOrFailProbe(t *testing.T) {
	what := os.Getenv(skipOrFailProbe)
	if what == "" {
		return
	}
	mcptest.SkipOrFail(t, what+" is not installed")
	t.Log("SkipOrFail returned") // neither branch may get here
}

// TestSkipOrFailFailsUnderCI: a missing prerequisite fails the test under
// CI and skips it elsewhere. The test binary runs itself with
// TestSkipOrFailProbe, whose prerequisite is missing, once with CI=true
// (the test must fail, the binary exit non-zero, and the message say why)
// and once with CI unset (a skip, exit 0): a CI branch that skipped, or
// went on, would make a CI run that never ran its interop tests pass.
func TestSkipOrFailFailsUnderCI(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ci       string // "" for unset
		wantFail bool
		want     string
	}{
		{"true", true, "--- FAIL: TestSkipOrFailProbe"},
		{"1", true, "--- FAIL: TestSkipOrFailProbe"},
		{"", false, "--- SKIP: TestSkipOrFailProbe"},
		{"false", false, "--- SKIP: TestSkipOrFailProbe"},
	} {
		t.Run("CI="+tc.ci, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, exe, "-test.run=^TestSkipOrFailProbe$", "-test.v", "-test.count=1")
			env := []string{skipOrFailProbe + "=the-probe-tool"}
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, "CI=") && !strings.HasPrefix(kv, skipOrFailProbe+"=") {
					env = append(env, kv)
				}
			}
			if tc.ci != "" {
				env = append(env, "CI="+tc.ci)
			}
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			text := string(out)
			var exit *exec.ExitError
			switch {
			case tc.wantFail && !errors.As(err, &exit):
				t.Errorf("a missing prerequisite under CI=%s: the test binary exited with %v, want a failure:\n%s", tc.ci, err, text)
			case !tc.wantFail && err != nil:
				t.Errorf("a missing prerequisite without CI: the test binary exited with %v, want 0 (a skip):\n%s", err, text)
			}
			if !strings.Contains(text, tc.want) {
				t.Errorf("want %q in the output:\n%s", tc.want, text)
			}
			if !strings.Contains(text, "the-probe-tool is not installed") {
				t.Errorf("the output does not say what is missing:\n%s", text)
			}
			if tc.wantFail && !strings.Contains(text, "CI is set, so this fails instead of skipping") {
				t.Errorf("the failure does not say CI made it one:\n%s", text)
			}
			if strings.Contains(text, "SkipOrFail returned") {
				t.Errorf("the test went on after SkipOrFail:\n%s", text)
			}
		})
	}
}
