package mcptest_test

import (
	"os"
	"testing"

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
