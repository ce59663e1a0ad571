package main

import (
	"strconv"
	"strings"
	"time"

	"github.com/tako-mcp/tako/mcp"
)

// serverSet is the part of a command line that names several servers, as
// tako agent and tako shell take them: each transport flag starts a
// server, --env and --header apply to the one before them, and --config
// FILE adds the file's servers (or the --server NAMEs).
type serverSet struct {
	servers  []options // one per transport flag, with its --env and --header
	config   string
	names    []string // the --server NAMEs
	timeout  time.Duration
	logLevel mcp.LoggingLevel // --log-level: ask every server for its log messages
	verbose  bool
	help     bool
}

// transportKinds are the shared flags that start a new server.
var transportKinds = map[string]bool{"stdio": true, "http": true, "ws": true, "grpc": true}

// parse reads args: the command's own flags (own take a value, bools
// none), then the shared ones of the flag table, so that the transport
// flags and their --env and --header parse exactly as for the other
// commands. It returns the positional arguments.
func (set *serverSet) parse(cmd string, args []string, own map[string]func(string) error, bools map[string]func(bool)) ([]string, error) {
	var positional []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if len(arg) < 2 || arg[0] != '-' {
			positional = append(positional, arg)
			continue
		}
		name := strings.TrimPrefix(strings.TrimPrefix(arg, "-"), "-")
		name, value, hasValue := strings.Cut(name, "=")
		if setBool, ok := bools[name]; ok {
			b := true
			if hasValue {
				var err error
				if b, err = strconv.ParseBool(value); err != nil {
					return nil, usagef("--%s is a boolean flag, not %q", name, value)
				}
			}
			setBool(b)
			continue
		}
		setOwn, isOwn := own[name]
		def := lookupFlag(name)
		if !isOwn && def == nil {
			return nil, usagef("unknown flag %s for tako %s", quoteFlag(arg), cmd)
		}
		needsValue := isOwn || def.arg != ""
		switch {
		case !needsValue && !hasValue:
			value = "true"
		case needsValue && !hasValue:
			if i+1 == len(args) {
				return nil, usagef("flag --%s needs a value", name)
			}
			i++
			value = args[i]
		}
		if isOwn {
			if err := setOwn(value); err != nil {
				return nil, err
			}
			continue
		}
		if err := set.shared(cmd, def, value); err != nil {
			return nil, err
		}
	}
	if !set.help && len(set.names) > 0 && set.config == "" {
		return nil, usagef("--server NAME picks a server of a --config FILE; give the file too")
	}
	return positional, nil
}

// shared applies one flag of the shared table.
func (set *serverSet) shared(cmd string, def *flagDef, value string) error {
	canonical := def.names[0]
	switch {
	case transportKinds[canonical]:
		var o options
		if err := def.set(&o, value); err != nil {
			return err
		}
		set.servers = append(set.servers, o)
	case canonical == "env" || canonical == "header":
		if len(set.servers) == 0 {
			return usagef("--%s applies to the server flag before it; give --stdio, --http or --ws first", canonical)
		}
		return def.set(&set.servers[len(set.servers)-1], value)
	case canonical == "config":
		set.config = value
	case canonical == "server":
		if value == "" {
			return usagef("--server needs a name from the --config file")
		}
		set.names = append(set.names, value)
	case canonical == "timeout", canonical == "verbose", canonical == "help", canonical == "log-level":
		var o options
		if err := def.set(&o, value); err != nil {
			return err
		}
		set.timeout, set.verbose, set.help = max(set.timeout, o.timeout), set.verbose || o.verbose, set.help || o.help
		if o.logLevel != "" {
			set.logLevel = o.logLevel
		}
	default:
		return usagef("--%s is not a flag of tako %s", canonical, cmd)
	}
	return nil
}

// resolve adds the --config file's servers to the flags' and returns the
// name of each: a config's own names, else dial's name of the flag's
// server. --log-level applies to every server.
func (set *serverSet) resolve(cmd string) ([]string, error) {
	names := make([]string, len(set.servers))
	for i := range set.servers {
		names[i] = serverName(&set.servers[i])
	}
	if set.config != "" {
		cfg, err := configServers(set.config, set.names)
		if err != nil {
			return nil, err
		}
		for i := range cfg {
			set.servers = append(set.servers, options{picked: &cfg[i]})
			names = append(names, cfg[i].Name)
		}
	}
	if len(set.servers) == 0 {
		return nil, usagef(`%s needs a server: --stdio "CMD ARGS...", --http URL or --config FILE`, cmd)
	}
	for i := range set.servers {
		if set.logLevel != "" {
			set.servers[i].logLevel = set.logLevel
		}
	}
	return names, nil
}

// serverName names a server after its flag's value, as dial does
// (dial.Server.DefaultName): "" for flags that name no server.
func serverName(o *options) string {
	s, err := serverOf(o)
	if err != nil {
		return ""
	}
	return s.DefaultName()
}
