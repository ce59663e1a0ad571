package main

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// noServer is a --stdio command that cannot start: a usage error must be
// found before tako tries, so these tests see status 2 and not 3.
const noServer = "/nonexistent/tako-test/no-such-server --flag"

func TestHelp(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"help"}, shortHelp},
		{[]string{"-h"}, shortHelp},
		{[]string{"--help"}, shortHelp},
		{[]string{"help", "all"}, usage()},
		{[]string{"tools", "--help"}, commandHelp("tools")},
		{[]string{"call", "echo", "{not json", "-h"}, commandHelp("call")},
		{[]string{"help", "tools"}, commandHelp("tools")},
		{[]string{"help", "complete"}, commandHelp("complete")},
		{[]string{"agent", "--help"}, commandHelp("agent")},
	} {
		r := tako(t, tt.args...)
		if r.code != 0 || r.stdout != tt.want || r.stderr != "" {
			t.Errorf("tako %q: exit %d, stderr %q, stdout %.60q...; want %.60q... and 0", tt.args, r.code, r.stderr, r.stdout, tt.want)
		}
	}
	tako(t, "help", "lsit").wantFailure(t, 2, `no command "lsit"`, "tools")
}

// TestShortHelpFitsOneScreen: tako help must fit 24 lines of 80 columns
// and point to the help of each command.
func TestShortHelpFitsOneScreen(t *testing.T) {
	lines := strings.Split(strings.TrimSuffix(shortHelp, "\n"), "\n")
	if len(lines) > 24 {
		t.Errorf("tako help has %d lines, want at most 24", len(lines))
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
	if !strings.Contains(shortHelp, "tako help CMD") {
		t.Error("tako help does not point to tako help CMD")
	}
	for name := range commands {
		if !strings.Contains(shortHelp, name) {
			t.Errorf("tako help does not mention %s", name)
		}
	}
}

// TestCommandHelp: every command's help has its usage and an example.
func TestCommandHelp(t *testing.T) {
	for name := range commands {
		h := commandHelp(name)
		if !strings.HasPrefix(h, "Usage:\n  tako "+name) {
			t.Errorf("help %s does not start with its usage: %.60q", name, h)
		}
		if !strings.Contains(h, "\n  tako "+name+" ") {
			t.Errorf("help %s has no example", name)
		}
		for l := range strings.SplitSeq(h, "\n") {
			if n := utf8.RuneCountInString(l); n > 100 {
				t.Errorf("help %s: line of %d columns: %q", name, n, l)
			}
		}
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "no command given"},
		{"unknown command", []string{"lsit", "--stdio", noServer}, `unknown command "lsit"`},
		{"unknown flag", []string{"tools", "--stdio", noServer, "--verbsoe"}, "unknown flag --verbsoe"},
		{"missing flag value", []string{"tools", "--stdio"}, "flag --stdio needs a value"},
		{"no transport", []string{"tools"}, `no server: give one with --stdio "CMD ARGS...", --http URL or --config FILE`},
		{"no transport for call", []string{"call", "echo", "{}"}, "no server"},
		{"tools with two arguments", []string{"tools", "one", "two", "--stdio", noServer}, `tools takes at most one tool name, got 2 arguments`},
		{"no tool name", []string{"call", "--stdio", noServer}, "call needs a tool name"},
		{"empty tool name", []string{"call", "", "--stdio", noServer}, "non-empty tool name"},
		{"bad JSON", []string{"call", "echo", `{"message":`, "--stdio", noServer}, "not valid JSON"},
		{"JSON not an object", []string{"call", "echo", `["a"]`, "--stdio", noServer}, "must be a JSON object"},
		{"unquoted JSON split by the shell", []string{"call", "echo", `{"a":`, `1}`, "--stdio", noServer}, "quote the JSON"},
		{"unterminated quote", []string{"tools", "--stdio", `server 'arg`}, "--stdio: unterminated single quote"},
		{"unterminated double quote", []string{"tools", "--stdio", `server "arg`}, "--stdio: unterminated double quote"},
		{"shell operator", []string{"tools", "--stdio", `server | tee log`}, "tako runs no shell"},
		{"empty command", []string{"tools", "--stdio", `''`}, "empty command"},
		{"bad timeout", []string{"tools", "--stdio", noServer, "--timeout", "10"}, "--timeout wants a duration"},
		{"bad env", []string{"tools", "--stdio", noServer, "--env", "PATH"}, "--env wants KEY=VALUE"},
		{"two transports", []string{"tools", "--stdio", noServer, "--stdio", noServer}, "one server at a time"},
		{"http with a bad URL", []string{"tools", "--http", "ftp://127.0.0.1:9/mcp"}, `--http: the URL must start with http:// or https://, not "ftp:"`},
		{"ws with an http URL", []string{"call", "echo", "--ws", "http://127.0.0.1:9/"}, "--ws: the URL must start with ws:// or wss://"},
		{"bridge without an end", []string{"bridge", "--stdio", noServer}, "bridge needs an end to serve"},
		{"bridge without a server", []string{"bridge", "--listen-ws", "127.0.0.1:0"}, "bridge needs a server"},
		{"bridge with an argument", []string{"bridge", "extra", "--listen-ws", "127.0.0.1:0", "--stdio", noServer}, "bridge takes no arguments"},
		{"bridge tls half", []string{"bridge", "--listen-ws", "127.0.0.1:0", "--stdio", noServer, "--tls-cert", "c.pem"}, "--tls-cert and --tls-key go together"},
		{"listen flag outside bridge", []string{"tools", "--stdio", noServer, "--listen-ws", "127.0.0.1:0"}, "flags of tako bridge"},
		{"grpc without a CA", []string{"tools", "--grpc=127.0.0.1:9"}, "--grpc needs --ca FILE"},
		{"grpc flag elsewhere", []string{"tools", "--stdio", noServer, "--cert", "c.pem"}, "are for a --grpc server"},
		{"client-ca outside bridge", []string{"tools", "--grpc=127.0.0.1:9", "--client-ca", "ca.pem"}, "--client-ca is a flag of tako bridge"},
		{"env with another transport", []string{"tools", "--http", "http://127.0.0.1:9/mcp", "--env", "A=1"}, "--env sets the environment of a --stdio server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tako(t, tt.args...)
			r.wantFailure(t, 2, tt.want)
			if r.stdout != "" {
				t.Errorf("stdout: %q, want nothing", r.stdout)
			}
		})
	}
}
