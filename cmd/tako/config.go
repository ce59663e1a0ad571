package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// The configuration files people already have: Claude Desktop's
// claude_desktop_config.json and Cursor's mcp.json hold
//
//	{"mcpServers": {"NAME": {"command": "npx", "args": [...], "env": {...}},
//	                "OTHER": {"url": "https://...", "headers": {...}}}}
//
// and VS Code's .vscode/mcp.json the same entries under "servers", with a
// "type". --config FILE reads either; --server NAME picks an entry (the
// only one needs no name).

// configFile is the part of those files tako reads.
type configFile struct {
	MCPServers map[string]configServer `json:"mcpServers"`
	Servers    map[string]configServer `json:"servers"` // VS Code
}

// configServer is one entry.
type configServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	// ServerURL is another client's spelling of url.
	ServerURL string            `json:"serverUrl"`
	Headers   map[string]string `json:"headers"`
}

// namedServer is an entry with its name.
type namedServer struct {
	name string
	configServer
}

// loadConfig reads the servers of a configuration file, sorted by name.
// Every problem is a usage error that names the file.
func loadConfig(path string) ([]namedServer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is in the message already
		}
		return nil, usagef("--config %s: %v", path, err)
	}
	var f configFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, usagef("--config %s: not the JSON of an MCP configuration: %v", path, err)
	}
	entries := f.MCPServers
	if len(entries) == 0 {
		entries = f.Servers
	}
	if len(entries) == 0 {
		return nil, usagef(`--config %s: no servers: the file needs an "mcpServers" (or VS Code's "servers") object`, path)
	}
	list := make([]namedServer, 0, len(entries))
	for name, s := range entries {
		list = append(list, namedServer{name: name, configServer: s})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].name < list[j].name })
	return list, nil
}

// pickServer returns the entry called name, or the only one when name is
// empty.
func pickServer(path string, list []namedServer, name string) (*namedServer, error) {
	names := make([]string, len(list))
	for i := range list {
		if list[i].name == name {
			return &list[i], nil
		}
		names[i] = list[i].name
	}
	switch {
	case name == "" && len(list) == 1:
		return &list[0], nil
	case name == "":
		return nil, usagef("--config %s has %d servers: pick one with --server NAME (%s)", filepath.Base(path), len(list), strings.Join(names, ", "))
	}
	return nil, usagef("--config %s has no server %q; it has %s", filepath.Base(path), name, strings.Join(names, ", "))
}

// kind is the transport flag an entry stands for.
func (s *configServer) kind() (kind, target string, err error) {
	u := s.URL
	if u == "" {
		u = s.ServerURL
	}
	switch t := strings.ToLower(s.Type); {
	case t == "stdio" || (t == "" && s.Command != ""):
		if s.Command == "" {
			return "", "", errors.New(`a stdio server needs a "command"`)
		}
		return "stdio", s.Command, nil
	case t == "ws" || t == "websocket" || (t == "" && (strings.HasPrefix(u, "ws://") || strings.HasPrefix(u, "wss://"))):
		if u == "" {
			return "", "", errors.New(`a WebSocket server needs a "url"`)
		}
		return "ws", u, nil
	case t == "http" || t == "streamable-http" || t == "streamablehttp" || t == "sse" || (t == "" && u != ""):
		if u == "" {
			return "", "", errors.New(`an HTTP server needs a "url"`)
		}
		return "http", u, nil
	case t == "":
		return "", "", errors.New(`the entry has neither a "command" nor a "url"`)
	default:
		return "", "", fmt.Errorf(`type %q is not one tako speaks (stdio, http, streamable-http, sse, ws)`, s.Type)
	}
}

// apply makes o name the server s: the transport flag, and the config's
// env and headers before those of the command line (which win).
func (s *namedServer) apply(path string, o *options) error {
	kind, target, err := s.kind()
	if err != nil {
		return usagef("--config %s: server %q: %v", filepath.Base(path), s.name, err)
	}
	o.server = serverFlag{kind: kind, value: target}
	if kind == "stdio" {
		o.argv = append([]string{s.Command}, s.Args...)
		o.server.value = strings.Join(o.argv, " ")
	}
	o.env = append(sortedPairs(s.Env, "="), o.env...)
	if kind != "stdio" {
		o.headers = append(sortedPairs(s.Headers, ":"), o.headers...)
	}
	return nil
}

// sortedPairs renders a map as "K<sep>V" strings in key order.
func sortedPairs(m map[string]string, sep string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+sep+v)
	}
	sort.Strings(out)
	return out
}

// applyConfig resolves --config and --server into a transport flag of o.
func applyConfig(o *options) error {
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
	path := o.config
	// Resolved: a second call (the bridge's, then the dialer's) is a no-op.
	o.config, o.name = "", ""
	return s.apply(path, o)
}

// configServers returns the servers of the file called names, in that
// order, or all of them when names is empty (the agent's --config).
func configServers(path string, names []string) ([]namedServer, error) {
	list, err := loadConfig(path)
	if err != nil || len(names) == 0 {
		return list, err
	}
	out := make([]namedServer, 0, len(names))
	for _, n := range names {
		s, err := pickServer(path, list, n)
		if err != nil {
			return nil, err
		}
		out = append(out, *s)
	}
	return out, nil
}
