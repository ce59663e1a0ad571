package main

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseArgs(t *testing.T) {
	def := func(mod func(*invocation)) *invocation {
		inv := &invocation{opts: options{timeout: defaultTimeout}}
		mod(inv)
		return inv
	}
	tests := []struct {
		name string
		args []string
		want *invocation
	}{
		{"nothing", nil, def(func(*invocation) {})},
		{"flags last", []string{"call", "echo", `{"message":"hi"}`, "--stdio", "srv -x", "--json"},
			def(func(i *invocation) {
				i.command, i.args = "call", []string{"echo", `{"message":"hi"}`}
				i.opts.server = serverFlag{"stdio", "srv -x"}
				i.opts.format = "json"
			})},
		{"flags first", []string{"--stdio", "srv", "-json", "call", "echo"},
			def(func(i *invocation) {
				i.command, i.args = "call", []string{"echo"}
				i.opts.server = serverFlag{"stdio", "srv"}
				i.opts.format = "json"
			})},
		{"flags between", []string{"call", "--json", "echo", "--stdio=srv a", "{}"},
			def(func(i *invocation) {
				i.command, i.args = "call", []string{"echo", "{}"}
				i.opts.server = serverFlag{"stdio", "srv a"}
				i.opts.format = "json"
			})},
		{"single dash and equals", []string{"tools", "-stdio=srv", "-timeout=5s", "-env=A=1"},
			def(func(i *invocation) {
				i.command = "tools"
				i.opts.server = serverFlag{"stdio", "srv"}
				i.opts.timeout, i.opts.timeoutSet = 5*time.Second, true
				i.opts.env = []string{"A=1"}
			})},
		{"env repeats in order, empty value allowed", []string{"tools", "--env", "A=1", "--env", "B=", "--env=A=x=y"},
			def(func(i *invocation) {
				i.command = "tools"
				i.opts.env = []string{"A=1", "B=", "A=x=y"}
			})},
		{"timeout zero means none", []string{"--timeout", "0", "tools"},
			def(func(i *invocation) { i.command = "tools"; i.opts.timeout, i.opts.timeoutSet = 0, true })},
		{"last timeout wins", []string{"--timeout", "1s", "--timeout", "2m", "tools"},
			def(func(i *invocation) { i.command = "tools"; i.opts.timeout, i.opts.timeoutSet = 2*time.Minute, true })},
		{"boolean with value", []string{"tools", "--json=false", "-v=true"},
			def(func(i *invocation) { i.command = "tools"; i.opts.verbose = true })},
		{"value that looks like a flag", []string{"tools", "--stdio", "--weird"},
			def(func(i *invocation) { i.command = "tools"; i.opts.server = serverFlag{"stdio", "--weird"} })},
		{"double dash ends flags", []string{"call", "--json", "--", "-tool-", "--stdio"},
			def(func(i *invocation) {
				i.command, i.args = "call", []string{"-tool-", "--stdio"}
				i.opts.format = "json"
			})},
		{"lone dash is positional", []string{"call", "-"},
			def(func(i *invocation) { i.command, i.args = "call", []string{"-"} })},
		{"help forms", []string{"-h"}, def(func(i *invocation) { i.opts.help = true })},
		{"help long", []string{"tools", "--help"}, def(func(i *invocation) { i.command = "tools"; i.opts.help = true })},
		{"http", []string{"tools", "--http", "http://127.0.0.1:1/mcp"},
			def(func(i *invocation) { i.command = "tools"; i.opts.server = serverFlag{"http", "http://127.0.0.1:1/mcp"} })},
		{"ws", []string{"tools", "-ws=ws://127.0.0.1:1"},
			def(func(i *invocation) { i.command = "tools"; i.opts.server = serverFlag{"ws", "ws://127.0.0.1:1"} })},
		{"grpc", []string{"tools", "--grpc", "127.0.0.1:1"},
			def(func(i *invocation) { i.command = "tools"; i.opts.server = serverFlag{"grpc", "127.0.0.1:1"} })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseArgs(tt.args)
			if err != nil {
				t.Fatalf("parseArgs(%q): %v", tt.args, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseArgs(%q)\n got %+v\nwant %+v", tt.args, got, tt.want)
			}
		})
	}
}

func TestParseArgsErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"tools", "--nope"}, "unknown flag --nope"},
		{[]string{"tools", "-x"}, "unknown flag -x"},
		{[]string{"tools", "---json"}, "unknown flag ---json"},
		{[]string{"tools", "--=x"}, "unknown flag --"},
		{[]string{"tools", "--api-key=s3cret"}, "unknown flag --api-key"},
		{[]string{"bridge", "--token=s3cret"}, "--token takes no value"},
		{[]string{"tools", "--stdio"}, `flag --stdio needs a value: --stdio "CMD ARGS..."`},
		{[]string{"tools", "--timeout"}, "flag --timeout needs a value"},
		{[]string{"tools", "--timeout", "soon"}, `--timeout wants a duration`},
		{[]string{"tools", "--timeout", "-1s"}, `--timeout wants a duration`},
		{[]string{"tools", "--env", "NOEQUALS"}, `--env wants KEY=VALUE, not "NOEQUALS"`},
		{[]string{"tools", "--env", "=v"}, `--env wants KEY=VALUE`},
		{[]string{"tools", "--json=maybe"}, `--json is a boolean flag, not "maybe"`},
		{[]string{"tools", "--stdio", "a", "--stdio", "b"}, "one server at a time: --stdio and --stdio"},
		{[]string{"tools", "--stdio", "a", "--http", "b"}, "one server at a time: --stdio and --http"},
		{[]string{"tools", "--stdio", "  "}, "--stdio needs a non-empty value"},
	}
	for _, tt := range tests {
		_, err := parseArgs(tt.args)
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Errorf("parseArgs(%q): error %v, want a usage error", tt.args, err)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseArgs(%q): %q, want it to contain %q", tt.args, err, tt.want)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("parseArgs(%q): the message %q repeats the flag's value", tt.args, err)
		}
	}
}

// TestUsageMentionsEveryFlag keeps doc.go, the one source of the help text,
// in step with the flag table.
func TestUsageMentionsEveryFlag(t *testing.T) {
	u := usage()
	for _, d := range flagDefs {
		for _, n := range d.names {
			dash := "--"
			if len(n) == 1 {
				dash = "-"
			}
			if !strings.Contains(u, dash+n) {
				t.Errorf("usage does not mention %s%s", dash, n)
			}
		}
	}
	for _, s := range []string{"tako tools", "tako call NAME", "tako help", "Exit status", "60s"} {
		if !strings.Contains(u, s) {
			t.Errorf("usage does not mention %q", s)
		}
	}
	// A comment marker at the start of a line; "//" inside a URL is fine.
	if strings.HasPrefix(u, "//") || strings.Contains(u, "\n//") || strings.Contains(u, "package main") {
		t.Errorf("usage still has Go syntax in it:\n%s", u)
	}
	if defaultTimeout != 60*time.Second {
		t.Errorf("defaultTimeout is %v but doc.go says 60s", defaultTimeout)
	}
}
