package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The tako CLI against the TypeScript reference server: every command over
// stdio and over Streamable HTTP, checked on its output and exit status, and
// --config with a Claude Desktop file naming both. The CLI is the built
// binary, run as a user runs it.

// takoCLI, the built command, is in oauth_login_test.go.

type cliResult struct {
	code           int
	stdout, stderr string
}

// runTako runs the CLI with args and returns what it did. Each run has a
// minute of its own: a test runs dozens, each starting node.
func runCLI(t *testing.T, ctx context.Context, args ...string) cliResult {
	t.Helper()
	bin := takoCLI(t)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := cliResult{stdout: stdout.String(), stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("tako %q: %v", args, err)
	}
	t.Logf("tako %q: exit %d\nstdout: %.1500s\nstderr: %.1500s", args, r.code, r.stdout, r.stderr)
	return r
}

// everythingStdio is the --stdio value that runs the reference server.
func everythingStdio(t *testing.T) string {
	node, args := everything(t)
	return "'" + node + "' '" + strings.Join(args, "' '") + "'"
}

func TestCLIEverything(t *testing.T) {
	ctx := context.Background()
	servers := map[string][]string{
		"stdio": {"--stdio", everythingStdio(t)},
		"http":  {"--http", everythingHTTP(t, "streamableHttp")},
	}
	checks := []struct {
		name string
		args []string
		code int
		// want are strings stdout must contain; stderr those of stderr.
		want, stderr []string
	}{
		{"tools", []string{"tools"}, 0, []string{"NAME ", "echo(message)", "get-sum(a, b)"}, nil},
		{"tools json", []string{"tools", "--format", "json"}, 0, []string{`"name":"echo"`}, nil},
		{"call pairs", []string{"call", "get-sum", "a=2", "b=3.5"}, 0, []string{"5.5"}, nil},
		{"call json", []string{"call", "echo", `{"message":"hi tako"}`}, 0, []string{"Echo: hi tako"}, nil},
		{"call bad value", []string{"call", "get-sum", "a=two", "b=3"}, 2, nil, []string{"want a number"}},
		{"call progress", []string{"call", "trigger-long-running-operation", "duration=1", "steps=2"}, 0,
			[]string{"Long running operation completed"}, []string{"progress 1/2", "progress 2/2"}},
		{"resources", []string{"resources"}, 0, []string{"demo://resource/static/document/features.md", "text/markdown"}, nil},
		{"templates", []string{"templates"}, 0, []string{"demo://resource/dynamic/text/{resourceId}"}, nil},
		{"read", []string{"read", "demo://resource/static/document/features.md"}, 0, []string{"# Everything Server"}, nil},
		{"prompts", []string{"prompts"}, 0, []string{"args-prompt(city, [state])", "simple-prompt"}, nil},
		{"prompt", []string{"prompt", "args-prompt", "city=Paris", "state=Texas"}, 0, []string{"[user]", "What's weather in Paris, Texas?"}, nil},
		{"complete", []string{"complete", "--prompt", "completable-prompt", "department=E"}, 0, []string{"Engineering"}, nil},
		{"complete with context", []string{"complete", "--prompt", "completable-prompt", "name=", "department=Sales"}, 0, []string{"David\nEve\nFrank\n"}, nil},
		{"ping", []string{"ping"}, 0, []string{"ok: mcp-servers/everything"}, nil},
		{"info", []string{"info"}, 0, []string{"server:       mcp-servers/everything", "protocol:     2025-11-25", "prompts", "instructions:"}, nil},
		{"info pretty", []string{"info", "--format", "pretty"}, 0, []string{"\n  \"protocolVersion\": \"2025-11-25\""}, nil},
		{"log level", []string{"call", "toggle-simulated-logging", "--log-level", "debug"}, 0, []string{"simulated"}, []string{"server ["}},
		// Issue 22: the call's arguments under one rule, one tool described.
		{"tools NAME", []string{"tools", "get-sum"}, 0, []string{"get-sum(a, b)", "\nArguments:\n  a  (number; required)", "\nInput schema:\n"}, nil},
		{"call bare word", []string{"call", "echo", "hi"}, 2, nil, []string{`not "hi": did you mean message=hi?`}},
		{"call unknown tool", []string{"call", "ech"}, 2, nil, []string{`the server has no tool "ech"; did you mean echo?`}},
		{"call missing arguments", []string{"call", "get-sum"}, 2, nil, []string{`tool "get-sum" needs the arguments a=... b=...`}},
		{"call missing arguments, JSON", []string{"call", "get-sum", `{"a":1}`}, 2, nil, []string{`tool "get-sum" needs the argument b=...`}},
	}
	for kind, server := range servers {
		t.Run(kind, func(t *testing.T) {
			t.Parallel() // the two servers side by side: each check starts a process
			for _, c := range checks {
				t.Run(c.name, func(t *testing.T) {
					r := runCLI(t, ctx, append(c.args, server...)...)
					if r.code != c.code {
						t.Errorf("exit %d, want %d", r.code, c.code)
					}
					for _, w := range c.want {
						if !strings.Contains(r.stdout, w) {
							t.Errorf("stdout lacks %q", w)
						}
					}
					for _, w := range c.stderr {
						if !strings.Contains(r.stderr, w) {
							t.Errorf("stderr lacks %q", w)
						}
					}
				})
			}
		})
	}
}

// TestCLIConfig: a Claude Desktop file naming a stdio and an HTTP server;
// --server picks one, tako servers lists both as answering.
func TestCLIConfig(t *testing.T) {
	ctx := context.Background()
	node, args := everything(t)
	url := everythingHTTP(t, "streamableHttp")
	cfg := map[string]any{"mcpServers": map[string]any{
		"local":  map[string]any{"command": node, "args": args, "env": map[string]string{"TAKO_CONFIG_TEST": "from-config"}},
		"remote": map[string]any{"url": url, "type": "http", "headers": map[string]string{"X-Tako-Test": "1"}},
	}}
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}

	r := runCLI(t, ctx, "servers", "--config", file)
	if r.code != 0 {
		t.Errorf("servers: exit %d, want 0", r.code)
	}
	for _, w := range []string{"local ", "stdio", "remote ", "http", "ok: mcp-servers/everything"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("servers: stdout lacks %q", w)
		}
	}
	if n := strings.Count(r.stdout, "ok: "); n != 2 {
		t.Errorf("servers: %d servers answered, want 2", n)
	}
	// --json: the same, as a document (the flag was ignored before).
	r = runCLI(t, ctx, "servers", "--config", file, "--json")
	var doc struct {
		Servers []struct {
			Name, Transport string
			OK              bool
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); r.code != 0 || err != nil || len(doc.Servers) != 2 ||
		!doc.Servers[0].OK || !doc.Servers[1].OK || doc.Servers[0].Name != "local" || doc.Servers[1].Transport != "http" {
		t.Errorf("servers --json: exit %d, %v, stdout %q", r.code, err, r.stdout)
	}

	r = runCLI(t, ctx, "call", "get-env", "--config", file, "--server", "local")
	if r.code != 0 || !strings.Contains(r.stdout, "from-config") {
		t.Errorf("call get-env on local: exit %d, the config's env did not reach the server", r.code)
	}
	r = runCLI(t, ctx, "call", "echo", "message=remote", "--config", file, "--server", "remote")
	if r.code != 0 || !strings.Contains(r.stdout, "Echo: remote") {
		t.Errorf("call echo on remote: exit %d", r.code)
	}
	r = runCLI(t, ctx, "tools", "--config", file)
	if r.code != 2 || !strings.Contains(r.stderr, "--server NAME (local, remote)") {
		t.Errorf("tools without --server: exit %d, stderr %q; want 2 and the names", r.code, r.stderr)
	}
}

// TestCLIHelp: the help fits a screen and each command has its own.
func TestCLIHelp(t *testing.T) {
	ctx := context.Background()
	r := runCLI(t, ctx, "help")
	if r.code != 0 || strings.Count(r.stdout, "\n") > 24 || !strings.Contains(r.stdout, "tako help CMD") {
		t.Errorf("help: exit %d, %d lines", r.code, strings.Count(r.stdout, "\n"))
	}
	for _, cmd := range []string{"tools", "resources", "templates", "read", "prompts", "prompt", "complete", "ping", "info", "servers", "call", "watch", "version", "completion"} {
		r := runCLI(t, ctx, cmd, "--help")
		if r.code != 0 || !strings.HasPrefix(r.stdout, "Usage:\n  tako "+cmd) {
			t.Errorf("%s --help: exit %d, stdout %.40q", cmd, r.code, r.stdout)
		}
	}
}

// TestCLIHostCheck403: the TypeScript SDK's Host check answers 403 with a
// JSON-RPC error and no OAuth challenge. tako says what the server said and
// what to check, and does not call it an authorization problem (issue 22:
// "auth: the server refuses the request").
func TestCLIHostCheck403(t *testing.T) {
	node, _ := everything(t)
	url := startServer(t, false, regexp.MustCompile(`listening on port (\d+)`), func(p string) string { return "http://127.0.0.1:" + p + "/mcp" },
		nil, node, "./testdata/hostcheck.cjs")
	r := runCLI(t, context.Background(), "tools", "--http", url)
	if r.code != 3 || strings.Count(r.stderr, "\n") != 1 ||
		!strings.Contains(r.stderr, "tako: connect: the server answered HTTP 403 Forbidden (Invalid Host: 127.0.0.1): the server's Host check refuses the name in the URL") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	for _, s := range []string{"auth", "login"} {
		if strings.Contains(r.stderr, s) {
			t.Errorf("reported as an authorization problem (%q): %q", s, r.stderr)
		}
	}
}
