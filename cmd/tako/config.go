package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/chzyer/readline"

	"github.com/tako-mcp/tako/dial"
)

// The configuration files people already have (Claude Desktop's, Cursor's,
// Claude Code's and VS Code's, with comments, trailing commas, variables,
// envFile and disabled entries) are dial's to read (dial.LoadConfig).
// --config FILE names one; --server NAME picks an entry (the only one
// needs no name). A VS Code ${input:ID} is asked for at the terminal.

// loadConfig reads the servers of a configuration file, in the file's
// order. Every problem is a usage error that names the file.
func loadConfig(path string) ([]dial.Server, error) {
	servers, err := dial.LoadConfig(path, &dial.LoadOptions{Input: askInput})
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, usagef("--config %s: %v", path, pe.Err) // the path is in the message already
		}
		return nil, usagef("--config: %v", err)
	}
	if len(servers) == 0 {
		return nil, usagef("--config %s: every server in it is disabled", path)
	}
	return servers, nil
}

// askInput asks for a VS Code input at the terminal (without echo for a
// password), as VS Code would; from a script it says what the file wants.
func askInput(in dial.Input) (string, error) {
	if !readline.IsTerminal(int(os.Stdin.Fd())) {
		return "", fmt.Errorf("the server %q needs ${input:%s} (%s), which tako asks for at a terminal only", in.Server, in.ID, in.Description)
	}
	prompt := in.Description
	if prompt == "" {
		prompt = in.ID
	}
	if len(in.Options) > 0 {
		prompt += " (" + strings.Join(in.Options, ", ") + ")"
	}
	if in.Default != "" && !in.Password {
		prompt += " [" + in.Default + "]"
	}
	prompt = "tako: " + cleanLine(prompt) + ": "
	var v string
	if in.Password {
		b, err := readline.Password(prompt)
		if err != nil {
			return "", err
		}
		v = string(b)
	} else {
		line, err := readline.Line(prompt)
		if err != nil {
			return "", err
		}
		v = strings.TrimSpace(line)
	}
	if v == "" {
		v = in.Default
	}
	return v, nil
}

// pickServer returns the entry called name, or the only one when name is
// empty.
func pickServer(path string, list []dial.Server, name string) (*dial.Server, error) {
	names := make([]string, len(list))
	for i := range list {
		if list[i].Name == name {
			return &list[i], nil
		}
		names[i] = list[i].Name
	}
	switch {
	case name == "" && len(list) == 1:
		return &list[0], nil
	case name == "":
		return nil, usagef("--config %s has %d servers: pick one with --server NAME (%s)", filepath.Base(path), len(list), strings.Join(names, ", "))
	}
	return nil, usagef("--config %s has no server %q; it has %s", filepath.Base(path), name, strings.Join(names, ", "))
}

// resolveConfig resolves --config and --server into o.picked.
func resolveConfig(o *options) error {
	switch {
	case o.config == "" && o.name != "":
		return usagef("--server NAME picks a server of a --config FILE; give the file too")
	case o.config == "":
		return nil
	case o.server.kind != "":
		return usagef("--config and --%s both name a server: give one", o.server.kind)
	}
	list, err := loadConfig(o.config)
	if err != nil {
		return err
	}
	s, err := pickServer(o.config, list, o.name)
	if err != nil {
		return err
	}
	// Resolved: a second call (the bridge's, then the dialer's) is a no-op.
	o.config, o.name, o.picked = "", "", s
	return nil
}

// configServers returns the servers of the file called names, in that
// order, or all of them when names is empty (the agent's --config).
func configServers(path string, names []string) ([]dial.Server, error) {
	list, err := loadConfig(path)
	if err != nil || len(names) == 0 {
		return list, err
	}
	out := make([]dial.Server, 0, len(names))
	for _, n := range names {
		s, err := pickServer(path, list, n)
		if err != nil {
			return nil, err
		}
		out = append(out, *s)
	}
	return out, nil
}

// checkMessage words a dial.Server.Check failure as a usage error of the
// flag kind: "--http: the URL has no host".
func checkMessage(kind string, err error) string {
	msg := err.Error()
	if _, rest, ok := strings.Cut(msg, ": check: "); ok {
		msg = rest
	}
	for _, p := range []string{dial.ErrInvalid.Error() + ": ", dial.ErrUnsupported.Error() + ": "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return "--" + kind + ": " + msg
}

var errEmptyCommand = errors.New("empty command name")
