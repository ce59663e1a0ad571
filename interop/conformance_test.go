package interop

import (
	"context"
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
// but not scored). Every scenario must pass, with at least one SUCCESS
// check and without being skipped; there is no list of expected failures.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance suite takes a while; skipped with -short")
	}
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
