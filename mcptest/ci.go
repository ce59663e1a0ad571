package mcptest

import (
	"os"
	"strings"
	"testing"
)

// InCI reports whether the environment variable CI says the tests run under
// continuous integration, where a test whose prerequisite (Node.js, an npm
// peer, protoc, a browser) is missing must fail rather than skip: a CI run
// that skips its interop tests proves nothing.
//
// CI systems spell it differently (true, 1, yes, TRUE), so any value that is
// set and is not a recognizable false counts: CI unset or empty, or one of
// 0, f, false, n, no, off (any case, surrounding space ignored), means not
// under CI. A value read wrongly must not turn a required check into a
// silent skip.
func InCI() bool {
	v := strings.ToLower(strings.TrimSpace(os.Getenv("CI")))
	switch v {
	case "", "0", "f", "false", "n", "no", "off":
		return false
	}
	return true
}

// SkipOrFail stops a test whose prerequisite is missing, with msg saying
// what to install: under CI (see InCI) it fails, elsewhere it skips.
func SkipOrFail(t testing.TB, msg string) {
	t.Helper()
	if InCI() {
		t.Fatal(msg + " (CI is set, so this fails instead of skipping)")
	}
	t.Skip(msg)
}
