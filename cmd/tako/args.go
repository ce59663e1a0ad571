package main

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tako-mcp/tako/dial"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// defaultTimeout bounds starting the server plus the operation when
// --timeout is not given. A minute leaves room for a first `npx -y` or
// `uvx` run that installs the server before it answers, and still ends a
// script that talks to a server that never will.
const defaultTimeout = 60 * time.Second

// invocation is one parsed command line.
type invocation struct {
	// command is the first positional argument ("tools", "call", "help"),
	// args the positional arguments after it.
	command string
	args    []string
	opts    options
}

// options are the flags of an invocation.
type options struct {
	format   string           // "table" (the default), "json" or "pretty"; --json is --format json
	logLevel mcp.LoggingLevel // --log-level: the server's log messages on stderr
	config   string           // --config FILE (config.go)
	name     string           // --server NAME: which server of the config
	// picked is the --config entry that --server NAME picked, once
	// resolved (config.go).
	picked *dial.Server
	// completePrompt and completeResource are complete's --prompt NAME
	// and --resource URI.
	completePrompt   string
	completeResource string
	verbose          bool
	help             bool
	timeout          time.Duration
	timeoutSet       bool     // --timeout was given (watch runs unbounded without it)
	env              []string // KEY=VALUE, in order; later ones win
	headers          []string // --header 'K: V' for --http, in order (http.go)
	server           serverFlag
	bridge           bridgeFlags // --listen-* and --tls-* of tako bridge (bridge.go)
	grpc             grpcFlags   // --cert, --key, --ca, --server-name, --client-ca, --plaintext, --no-client-auth (grpc.go)
	// session, if set, is the base of the session options (the agent's
	// and the shell's handlers); it is read when the dialer connects.
	session *transport.Options
	// roots are the --root directories, as the file:// roots a server
	// that asks for roots (roots/list) is given.
	roots []mcp.Root
	// llm is --provider, --model, --base-url and --api-key-env: the model
	// that answers a server's sampling requests during call and shell.
	llm providerFlags
}

// providerFlags name a model's API: tako agent's model, and the one that
// answers sampling requests for call and shell.
type providerFlags struct {
	provider  string // "openai" or "anthropic"
	model     string
	baseURL   string
	apiKeyEnv string // the variable that holds the API key
}

// given reports whether any of the flags was given.
func (p *providerFlags) given() bool {
	return p.provider != "" || p.model != "" || p.baseURL != "" || p.apiKeyEnv != ""
}

// check says what is missing when the flags were given.
func (p *providerFlags) check() error {
	switch {
	case !p.given():
		return nil
	case p.provider == "":
		return usagef("--model, --base-url and --api-key-env go with --provider openai or --provider anthropic")
	case p.model == "":
		return usagef("--provider %s needs --model NAME", p.provider)
	}
	return nil
}

// providerFlagSetters parse the provider flags into a providerFlags, for
// every parser that takes them.
var providerFlagSetters = map[string]func(p *providerFlags, v string) error{
	"provider": func(p *providerFlags, v string) error {
		if v != "openai" && v != "anthropic" {
			return usagef("--provider wants openai or anthropic, not %q", v)
		}
		p.provider = v
		return nil
	},
	"model":    func(p *providerFlags, v string) error { p.model = v; return nil },
	"base-url": func(p *providerFlags, v string) error { p.baseURL = v; return nil },
	"api-key-env": func(p *providerFlags, v string) error {
		if v == "" || strings.ContainsAny(v, "= ") {
			return usagef("--api-key-env wants the name of an environment variable, not %q", v)
		}
		p.apiKeyEnv = v
		return nil
	},
}

// parseRoot turns --root DIR into the file:// root a server is given:
// the directory's absolute path, named by its last element. A path that
// does not exist is a usage error, found before anything starts.
func parseRoot(dir string) (mcp.Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return mcp.Root{}, usagef("--root %s: %v", dir, err)
	}
	if _, err := os.Stat(abs); err != nil {
		return mcp.Root{}, usagef("--root %s: no such file or directory", dir)
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	return mcp.Root{URI: u.String(), Name: filepath.Base(abs)}, nil
}

// serverFlag is the transport flag that names the server: its kind (the
// flag's canonical name, such as "stdio") and its value. The zero value
// means no transport was given.
type serverFlag struct {
	kind  string
	value string
}

// flagDef describes one flag. The parser is driven by this table, and so is
// the test that checks the usage text mentions every flag, so adding a flag
// (a later transport's --header or --cert) is one entry here and one
// paragraph in doc.go.
type flagDef struct {
	// names without dashes; the first is the one messages use.
	names []string
	// arg is the placeholder of the flag's value in messages; empty for a
	// boolean flag, which takes no separate argument (but accepts
	// --flag=true and --flag=false).
	arg string
	set func(o *options, value string) error
}

// flagDefs is the flag table. It is never modified.
var flagDefs = []flagDef{
	{names: []string{"stdio"}, arg: `"CMD ARGS..."`, set: setServer("stdio")},
	{names: []string{"http"}, arg: "URL", set: setServer("http")},
	{names: []string{"ws"}, arg: "URL", set: setServer("ws")},
	{names: []string{"grpc"}, arg: "ADDR", set: setServer("grpc")},
	{names: []string{"env"}, arg: "KEY=VALUE", set: func(o *options, v string) error {
		key, _, ok := strings.Cut(v, "=")
		if !ok || key == "" {
			return usagef("--env wants KEY=VALUE, not %q", v)
		}
		o.env = append(o.env, v)
		return nil
	}},
	{names: []string{"header"}, arg: "'K: V'", set: addHeader},
	{names: []string{"listen-ws"}, arg: "ADDR", set: setListen("ws")},
	{names: []string{"tls-cert"}, arg: "FILE", set: func(o *options, v string) error { o.bridge.tlsCert = v; return nil }},
	{names: []string{"tls-key"}, arg: "FILE", set: func(o *options, v string) error { o.bridge.tlsKey = v; return nil }},
	{names: []string{"token"}, set: setTokenFlag},
	{names: []string{"token-env"}, arg: "VAR", set: func(o *options, v string) error { o.bridge.ws.tokenEnv = v; return nil }},
	{names: []string{"allow-host"}, arg: "HOST", set: func(o *options, v string) error {
		o.bridge.ws.allowHosts = append(o.bridge.ws.allowHosts, v)
		return nil
	}},
	{names: []string{"allow-origin"}, arg: "ORIGIN", set: func(o *options, v string) error {
		o.bridge.ws.allowOrigins = append(o.bridge.ws.allowOrigins, v)
		return nil
	}},
	{names: []string{"max-clients"}, arg: "N", set: setMaxClients},
	{names: []string{"listen-grpc"}, arg: "ADDR", set: setListen("grpc")},
	{names: []string{"client-ca"}, arg: "FILE", set: setGRPC("client-ca")},
	{names: []string{"cert"}, arg: "FILE", set: setGRPC("cert")},
	{names: []string{"key"}, arg: "FILE", set: setGRPC("key")},
	{names: []string{"ca"}, arg: "FILE", set: setGRPC("ca")},
	{names: []string{"server-name"}, arg: "NAME", set: setGRPC("server-name")},
	{names: []string{"plaintext"}, set: setGRPC("plaintext")},
	{names: []string{"no-client-auth"}, set: setGRPC("no-client-auth")},
	{names: []string{"timeout"}, arg: "DURATION", set: func(o *options, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return usagef("--timeout wants a duration such as 30s or 2m (0 for none), not %q", v)
		}
		o.timeout, o.timeoutSet = d, true
		return nil
	}},
	{names: []string{"json"}, set: func(o *options, v string) error {
		var b bool
		if err := setBool(&b, "json", v); err != nil {
			return err
		}
		if o.format = ""; b {
			o.format = "json"
		}
		return nil
	}},
	{names: []string{"format"}, arg: "table|json|pretty", set: func(o *options, v string) error {
		switch v {
		case "table", "json", "pretty":
			o.format = v
			return nil
		}
		return usagef("--format wants table, json or pretty, not %q", v)
	}},
	{names: []string{"log-level"}, arg: "LEVEL", set: func(o *options, v string) error {
		if levelRank(mcp.LoggingLevel(v)) < 0 {
			return usagef("--log-level wants one of %s, not %q", strings.Join(logLevels, ", "), v)
		}
		o.logLevel = mcp.LoggingLevel(v)
		return nil
	}},
	{names: []string{"prompt"}, arg: "NAME", set: func(o *options, v string) error { o.completePrompt = v; return nil }},
	{names: []string{"resource"}, arg: "URI", set: func(o *options, v string) error { o.completeResource = v; return nil }},
	{names: []string{"config"}, arg: "FILE", set: func(o *options, v string) error { o.config = v; return nil }},
	{names: []string{"server"}, arg: "NAME", set: func(o *options, v string) error {
		if v == "" {
			return usagef("--server needs a name from the --config file")
		}
		o.name = v
		return nil
	}},
	{names: []string{"root"}, arg: "DIR", set: func(o *options, v string) error {
		r, err := parseRoot(v)
		if err != nil {
			return err
		}
		o.roots = append(o.roots, r)
		return nil
	}},
	{names: []string{"provider"}, arg: "openai|anthropic", set: setProvider("provider")},
	{names: []string{"model"}, arg: "NAME", set: setProvider("model")},
	{names: []string{"base-url"}, arg: "URL", set: setProvider("base-url")},
	{names: []string{"api-key-env"}, arg: "VAR", set: setProvider("api-key-env")},
	{names: []string{"verbose", "v"}, set: func(o *options, v string) error { return setBool(&o.verbose, "verbose", v) }},
	{names: []string{"help", "h"}, set: func(o *options, v string) error { return setBool(&o.help, "help", v) }},
}

// raw reports whether the output is the protocol's JSON rather than text.
func (o *options) raw() bool { return o.format == "json" || o.format == "pretty" }

func setServer(kind string) func(*options, string) error {
	return func(o *options, v string) error {
		if o.server.kind != "" {
			return usagef("one server at a time: --%s and --%s both given", o.server.kind, kind)
		}
		if strings.TrimSpace(v) == "" {
			return usagef("--%s needs a non-empty value", kind)
		}
		o.server = serverFlag{kind: kind, value: v}
		return nil
	}
}

func setProvider(name string) func(*options, string) error {
	return func(o *options, v string) error { return providerFlagSetters[name](&o.llm, v) }
}

func setBool(dst *bool, name, v string) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return usagef("--%s is a boolean flag, not %q", name, v)
	}
	*dst = b
	return nil
}

func lookupFlag(name string) *flagDef {
	for i := range flagDefs {
		for _, n := range flagDefs[i].names {
			if n == name {
				return &flagDefs[i]
			}
		}
	}
	return nil
}

// parseArgs parses a command line (without the program name).
//
// The standard flag package stops at the first positional argument, which
// would make `tako call echo '{}' --stdio ...` fail; tako wants flags
// anywhere, so this small parser takes every argument that starts with a
// dash as a flag, and every other one as a positional argument, in order.
// Both -flag and --flag work, and both --flag=value and --flag value; "--"
// ends the flags, and a lone "-" is positional.
func parseArgs(args []string) (*invocation, error) {
	inv := &invocation{opts: options{timeout: defaultTimeout}}
	var positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			positional = append(positional, a)
			continue
		}
		name := a[1:]
		if name[0] == '-' {
			name = name[1:]
		}
		name, value, hasValue := strings.Cut(name, "=")
		def := lookupFlag(name)
		if def == nil {
			return nil, usagef("unknown flag %s", quoteFlag(a))
		}
		switch {
		case def.arg == "" && !hasValue:
			value = "true"
		case def.arg != "" && !hasValue:
			if i+1 == len(args) {
				return nil, usagef("flag --%s needs a value: --%s %s", def.names[0], def.names[0], def.arg)
			}
			i++
			value = args[i]
		}
		if err := def.set(&inv.opts, value); err != nil {
			return nil, err
		}
	}
	if len(positional) > 0 {
		inv.command = positional[0]
	}
	if len(positional) > 1 {
		inv.args = positional[1:]
	}
	return inv, nil
}

// quoteFlag shows an unknown flag as typed, without the value of
// --flag=value (which might be a secret) and quoted if it holds anything
// unprintable.
func quoteFlag(a string) string {
	a, _, _ = strings.Cut(a, "=")
	if q := strconv.Quote(a); q[1:len(q)-1] != a {
		return q
	}
	return a
}

// usageError is a mistake on the command line: tako exits with status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}
