package interop

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestConformance runs the official MCP conformance suite against tako's
// conformance client, through conformance/run.sh, each scenario on its own:
// every client scenario of 0.1.16, and of 0.2.0-alpha.12 under
// --requirements 2025-11-25 and 2026-07-28 (the scored ones and those run
// but not scored), each twice: through the SDK's own negotiation (no
// revision pinned) and with the revision pinned. Every scenario must pass,
// with at least one SUCCESS check, without being skipped, and with the
// client having made a request; there is no list of expected failures.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance suite takes a while; skipped with -short")
	}
	bash := conformanceSuite(t)
	bin := filepath.Join(t.TempDir(), "conformance-client")
	build := exec.Command("go", "build", "-o", bin, "./cmd/conformance-client")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the conformance client: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, filepath.Join("conformance", "run.sh"), bin)
	cmd.Env = append(os.Environ(), "CONFORMANCE_OUT="+t.TempDir())
	out, err := cmd.CombinedOutput()
	text := strings.TrimSpace(string(out))
	lines := strings.Split(text, "\n")
	last := lines[len(lines)-1]
	m := regexp.MustCompile(`^(\d+) passed, (\d+) failed$`).FindStringSubmatch(last)
	if m == nil {
		t.Fatalf("run.sh did not end with the summary line (%v):\n%s", err, text)
	}
	if m[2] != "0" || err != nil {
		t.Fatalf("conformance: %s (%v):\n%s", last, err, text)
	}
	t.Logf("conformance: %s\n%s", last, text)
}

// conformanceSuite checks that what run.sh needs is installed and returns
// the path of bash.
func conformanceSuite(t *testing.T) (bash string) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		requireInstalled(t, "node is not on PATH: install Node.js 20 or later, then run `npm ci` in the repository root")
	}
	for _, p := range []string{"@modelcontextprotocol/conformance", "conformance-next"} {
		if _, err := os.Stat(filepath.Join("..", "node_modules", p, "dist", "index.js")); err != nil {
			requireInstalled(t, p+" is missing: run `npm ci` in the repository root")
		}
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		requireInstalled(t, "bash is not on PATH")
	}
	return bash
}

// TestConformanceIdleClientFails: run.sh does not count a scenario the
// client never exercised. With /bin/true as the client (it exits 0 at once
// and never connects) each of these must FAIL:
//   - auth/resource-mismatch (0.1.16), whose only check is that the client
//     did NOT proceed with authorization, so the suite itself passes it
//     (exit 0, one SUCCESS check): only the request count catches it;
//   - sse-retry at 2026-07-28 without --force, which the suite skips as not
//     applicable (exit 0, no checks.json);
//   - tools_call at 2026-07-28, which the suite fails on its own.
func TestConformanceIdleClientFails(t *testing.T) {
	bash := conformanceSuite(t)
	idle, err := exec.LookPath("true")
	if err != nil {
		t.Fatal(err)
	}
	scenarios := []string{
		"0.1.16|auth/resource-mismatch|",
		"0.2.0-alpha.12|sse-retry|--spec-version 2026-07-28",
		"0.2.0-alpha.12|tools_call|--spec-version 2026-07-28 --force",
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, filepath.Join("conformance", "run.sh"), idle)
	cmd.Env = append(os.Environ(), "CONFORMANCE_OUT="+t.TempDir(), "CONFORMANCE_ONLY="+strings.Join(scenarios, "\n"))
	out, err := cmd.CombinedOutput()
	text := strings.TrimSpace(string(out))
	if err == nil {
		t.Errorf("run.sh with a client that does nothing exited 0:\n%s", text)
	}
	if !strings.HasSuffix(text, fmt.Sprintf("0 passed, %d failed", len(scenarios))) {
		t.Errorf("run.sh with a client that does nothing: want every one of the %d scenarios failed, got:\n%s", len(scenarios), text)
	}
	for _, sc := range scenarios {
		name := strings.Split(sc, "|")[1]
		if !regexp.MustCompile(`(?m)^FAIL  \S+  ` + regexp.QuoteMeta(name) + ` `).MatchString(text) {
			t.Errorf("run.sh did not report %s as failed:\n%s", name, text)
		}
	}
}

// TestConformanceNoSuccessCheckFails: run.sh does not count a scenario
// whose checks.json has no SUCCESS check. The client here makes one
// request (a ping, where the scenario wants initialize) and exits 0, so
// the suite itself passes initialize (exit 0, no FAILURE or WARNING, only
// INFO checks) and the request count is met: only the SUCCESS rule fails
// it, and the test asserts that this is the one reason given. (The idle
// client of TestConformanceIdleClientFails makes no request, so the
// request rule caught it alone, and removing the SUCCESS rule passed.)
func TestConformanceNoSuccessCheckFails(t *testing.T) {
	bash := conformanceSuite(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The test binary is the client: TestMain sees touchClientEnv.
	client := filepath.Join(t.TempDir(), "touch-client")
	script := fmt.Sprintf("#!/bin/sh\nexport %s=1\nexec '%s' \"$@\"\n", touchClientEnv, exe)
	if err := os.WriteFile(client, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, filepath.Join("conformance", "run.sh"), client)
	cmd.Env = append(os.Environ(), "CONFORMANCE_OUT="+t.TempDir(), "CONFORMANCE_ONLY=0.1.16|initialize|")
	out, err := cmd.CombinedOutput()
	text := strings.TrimSpace(string(out))
	if err == nil || !strings.HasSuffix(text, "0 passed, 1 failed") {
		t.Errorf("run.sh with a client that pings and stops (%v): want initialize failed, got:\n%s", err, text)
	}
	if !regexp.MustCompile(`(?m)^FAIL  0\.1\.16  initialize \(exit 0, no SUCCESS check\)$`).MatchString(text) {
		t.Errorf("want initialize failed for no SUCCESS check alone (exit 0, a request made), got:\n%s", text)
	}
}

// touchClientEnv, set in the environment of the test binary, makes it the
// client of TestConformanceNoSuccessCheckFails instead of running tests.
const touchClientEnv = "TAKO_INTEROP_TOUCH_CLIENT"

// touchClient posts one ping to the server URL the suite passes last in
// args and exits 0, whatever the answer.
func touchClient(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "touch client: no server URL")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	body := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, args[len(args)-1], body)
	if err != nil {
		fmt.Fprintln(os.Stderr, "touch client:", err)
		return 2
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, "touch client:", err)
		return 2
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return 0
}

// TestConformanceElicitationDefaults runs elicitation-sep1034-client-defaults
// on its own, on both suites: the conformance client's elicitation handler
// accepts with no content at all, so the defaults the scenario checks for
// are the ones the SDK fills in from the requested schema.
func TestConformanceElicitationDefaults(t *testing.T) {
	bash := conformanceSuite(t)
	bin := filepath.Join(t.TempDir(), "conformance-client")
	build := exec.Command("go", "build", "-o", bin, "./cmd/conformance-client")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the conformance client: %v\n%s", err, out)
	}
	scenarios := []string{
		"0.1.16|elicitation-sep1034-client-defaults|",
		"0.2.0-alpha.12|elicitation-sep1034-client-defaults|--spec-version 2025-11-25 --force",
	}
	for _, sc := range scenarios {
		t.Run(strings.Split(sc, "|")[0], func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bash, filepath.Join("conformance", "run.sh"), bin)
			cmd.Env = append(os.Environ(), "CONFORMANCE_OUT="+t.TempDir(), "CONFORMANCE_ONLY="+sc)
			out, err := cmd.CombinedOutput()
			text := strings.TrimSpace(string(out))
			if err != nil || !strings.HasSuffix(text, "1 passed, 0 failed") {
				t.Fatalf("%s (%v):\n%s", sc, err, text)
			}
		})
	}
}
