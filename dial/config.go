package dial

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
)

// The files people already have, and how LoadConfig reads them:
//
//   - Claude Desktop's claude_desktop_config.json, Cursor's ~/.cursor/mcp.json
//     and .cursor/mcp.json, Claude Code's .mcp.json, Windsurf's and
//     Gemini CLI's files: {"mcpServers": {"NAME": {...}}}, each entry a
//     "command" with "args", "env" and "envFile", or a "url" (Windsurf
//     spells it "serverUrl", Gemini CLI "httpUrl") with "headers", and
//     sometimes a "type" (or "transport"): stdio, http, streamable-http,
//     sse, ws.
//   - VS Code's .vscode/mcp.json: {"servers": {...}, "inputs": [...]},
//     entries with a "type" (stdio, http, sse), "cwd" and "envFile"; and
//     the same object under "mcp" in VS Code's settings.json.
//
// All of them may carry comments and trailing commas (JSONC), and, VS
// Code's and Cursor's in particular, variables (vars.go). Keys tako does
// not use (Cline's "autoApprove", VS Code's "dev", Claude Desktop's
// "preferences") are ignored, so one file serves every client.

// LoadOptions configure LoadConfig. The zero value (or nil) works for files
// whose variables need no answer.
type LoadOptions struct {
	// WorkspaceFolder is ${workspaceFolder}, the folder relative paths
	// (envFile, cwd) are taken from, and a VS Code server's working
	// directory. Empty means the folder that holds the file's .vscode or
	// .cursor folder, or else the file's own folder.
	WorkspaceFolder string

	// Input answers ${input:ID}: it is called once per input the servers
	// use, in the order they use them, with the input's declaration from
	// the file's "inputs". Nil makes such a variable an error that names
	// the input and its description (ErrInputNeeded).
	Input func(in Input) (string, error)

	// LookupEnv reads ${env:NAME} (and, in mcpServers files, ${NAME}).
	// Nil means os.LookupEnv.
	LookupEnv func(name string) (string, bool)
}

// Input is one of a VS Code file's "inputs": a value VS Code asks the user
// for, and LoadOptions.Input is asked for.
type Input struct {
	// ID is the name in ${input:ID}; Type is promptString or pickString.
	ID, Type    string
	Description string
	// Password says the answer is a secret: do not echo it.
	Password bool
	Default  string
	// Options are a pickString's choices.
	Options []string
	// Server is the first server whose entry uses the input.
	Server string
}

// ConfigError reports a problem in a configuration file: the file, the
// server when one entry is at fault, and the line and column (counted from
// 1) when the problem has a place.
type ConfigError struct {
	File         string
	Server       string
	Line, Column int
	Err          error
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
	}
	b.WriteString(": ")
	if e.Server != "" {
		fmt.Fprintf(&b, "server %q: ", e.Server)
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *ConfigError) Unwrap() error { return e.Err }

// Errors of LoadConfig, each inside a *ConfigError.
var (
	// ErrNoServers: the file has neither "mcpServers" nor "servers".
	ErrNoServers = errors.New(`no "mcpServers" or "servers" object`)
	// ErrUnknownVariable: a ${...} that is not one of the variables
	// LoadConfig knows, or an environment variable that is not set where
	// the file's dialect makes that an error.
	ErrUnknownVariable = errors.New("unknown variable")
	// ErrInputNeeded: ${input:ID} with no LoadOptions.Input to ask.
	ErrInputNeeded = errors.New("input needed")
)

// entry is one server as the files write it.
type entry struct {
	Type      string                     `json:"type"`
	Transport json.RawMessage            `json:"transport"`
	Command   string                     `json:"command"`
	Args      []string                   `json:"args"`
	Env       map[string]json.RawMessage `json:"env"`
	EnvFile   string                     `json:"envFile"`
	Cwd       string                     `json:"cwd"`
	URL       string                     `json:"url"`
	ServerURL string                     `json:"serverUrl"`
	HTTPURL   string                     `json:"httpUrl"`
	Headers   map[string]string          `json:"headers"`
	Disabled  bool                       `json:"disabled"`
}

// inputDecl is one of "inputs".
type inputDecl struct {
	Type        string            `json:"type"`
	ID          string            `json:"id"`
	Description string            `json:"description"`
	Password    bool              `json:"password"`
	Default     string            `json:"default"`
	Options     []json.RawMessage `json:"options"`
}

// dialect is which family of files a servers object comes from.
type dialect int

const (
	mcpServers dialect = iota // Claude Desktop, Cursor, Claude Code, ...
	vscode                    // VS Code's "servers"
)

// LoadConfig reads the MCP servers of a configuration file in the order
// the file lists them, skipping those marked "disabled": true. Names are
// the file's, cleaned (CleanName: "My Server" is My-Server) and made
// unique; variables are expanded as vars.go describes; an "envFile" is
// read into Env, under the entry's own "env". Every problem is a
// *ConfigError naming the file, the server and, for a JSON error, the
// line and column. A file whose servers are all disabled gives none and
// no error.
func LoadConfig(path string, opts *LoadOptions) ([]Server, error) {
	if opts == nil {
		opts = &LoadOptions{}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is in the message already
		}
		return nil, &ConfigError{File: path, Err: err}
	}
	l := &loader{file: path, data: data, opts: opts, answers: map[string]string{}}
	if err := l.init(); err != nil {
		return nil, err
	}
	return l.load()
}

// loader is one LoadConfig's state.
type loader struct {
	file      string
	data      []byte // the file; after parse, standard JSON with the same offsets
	opts      *LoadOptions
	workspace string
	inputs    map[string]inputDecl
	answers   map[string]string // inputs asked already
	groups    []group
}

// group is one servers object of the file.
type group struct {
	d       dialect
	members []hujson.ObjectMember
}

func (l *loader) errAt(offset int, server string, err error) error {
	line, col := lineColumn(l.data, offset)
	return &ConfigError{File: l.file, Server: server, Line: line, Column: col, Err: err}
}

func lineColumn(b []byte, n int) (line, col int) {
	n = min(max(n, 0), len(b))
	line = 1 + bytes.Count(b[:n], []byte("\n"))
	col = 1 + n - (bytes.LastIndexByte(b[:n], '\n') + 1)
	return line, col
}

// init parses the file and finds its servers and inputs.
func (l *loader) init() error {
	ast, err := hujson.Parse(l.data)
	if err != nil {
		var line, col int
		msg := err.Error()
		if _, serr := fmt.Sscanf(msg, "hujson: line %d, column %d:", &line, &col); serr == nil {
			_, msg, _ = strings.Cut(strings.TrimPrefix(msg, "hujson: "), ": ")
		}
		return &ConfigError{File: l.file, Line: line, Column: col, Err: &syntaxError{msg: "not JSON: " + msg, err: err}}
	}
	ast.Standardize() // comments and trailing commas become spaces: offsets hold
	l.data = ast.Pack()
	top, ok := ast.Value.(*hujson.Object)
	if !ok {
		return l.errAt(ast.StartOffset, "", errors.New("the file is not a JSON object"))
	}
	var inputs *hujson.Value
	for _, obj := range []*hujson.Object{top, member(top, "mcp")} {
		if obj == nil {
			continue
		}
		for _, key := range []string{"mcpServers", "servers"} {
			v := memberValue(obj, key)
			if v == nil {
				continue
			}
			o, ok := v.Value.(*hujson.Object)
			if !ok {
				return l.errAt(v.StartOffset, "", fmt.Errorf("%q is not an object", key))
			}
			d := mcpServers
			if key == "servers" {
				d = vscode
			}
			l.groups = append(l.groups, group{d: d, members: o.Members})
		}
		if v := memberValue(obj, "inputs"); v != nil && inputs == nil {
			inputs = v
		}
	}
	if len(l.groups) == 0 {
		return &ConfigError{File: l.file, Err: ErrNoServers}
	}
	l.inputs = map[string]inputDecl{}
	if inputs != nil {
		var decls []inputDecl
		if err := l.decode(inputs, "", &decls); err != nil {
			return err
		}
		for _, d := range decls {
			l.inputs[d.ID] = d
		}
	}
	ws := l.opts.WorkspaceFolder
	if ws == "" {
		ws = filepath.Dir(l.file)
		if b := filepath.Base(ws); b == ".vscode" || b == ".cursor" {
			ws = filepath.Dir(ws)
		}
	}
	if abs, err := filepath.Abs(ws); err == nil {
		ws = abs
	}
	l.workspace = ws
	return nil
}

// syntaxError is a JSONC syntax error, worded without the position (the
// ConfigError has it).
type syntaxError struct {
	msg string
	err error
}

func (e *syntaxError) Error() string { return e.msg }
func (e *syntaxError) Unwrap() error { return e.err }

// memberValue is the value of obj's member key, or nil.
func memberValue(obj *hujson.Object, key string) *hujson.Value {
	for i := range obj.Members {
		m := &obj.Members[i]
		if lit, ok := m.Name.Value.(hujson.Literal); ok && lit.String() == key {
			return &m.Value
		}
	}
	return nil
}

// member is obj's member key if it is an object, or nil.
func member(obj *hujson.Object, key string) *hujson.Object {
	if v := memberValue(obj, key); v != nil {
		if o, ok := v.Value.(*hujson.Object); ok {
			return o
		}
	}
	return nil
}

// decode unmarshals v into out, with a type error's place in the file.
func (l *loader) decode(v *hujson.Value, server string, out any) error {
	err := json.Unmarshal(l.data[v.StartOffset:v.EndOffset], out)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "the value"
		} else {
			field = fmt.Sprintf("%q", field)
		}
		return l.errAt(v.StartOffset+int(te.Offset), server, fmt.Errorf("%s must be %s, not %s", field, jsonType(te.Type.Kind().String()), te.Value))
	}
	return l.errAt(v.StartOffset, server, err)
}

// jsonType words a Go kind as the JSON type a file must have there.
func jsonType(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "slice":
		return "an array"
	case "map", "struct":
		return "an object"
	case "bool":
		return "true or false"
	}
	return "a " + kind
}

// load turns every entry into a Server.
func (l *loader) load() ([]Server, error) {
	var out []Server
	for _, g := range l.groups {
		for i := range g.members {
			m := &g.members[i]
			name := ""
			if lit, ok := m.Name.Value.(hujson.Literal); ok {
				name = lit.String()
			}
			if _, ok := m.Value.Value.(*hujson.Object); !ok {
				return nil, l.errAt(m.Value.StartOffset, name, errors.New("the entry is not an object"))
			}
			var e entry
			if err := l.decode(&m.Value, name, &e); err != nil {
				return nil, err
			}
			if e.Disabled {
				continue
			}
			s, err := l.server(name, g.d, &e)
			if err != nil {
				var ce *ConfigError
				if errors.As(err, &ce) {
					return nil, err
				}
				return nil, l.errAt(m.Value.StartOffset, name, err)
			}
			out = append(out, s)
		}
	}
	names := make([]string, len(out))
	for i := range out {
		names[i] = out[i].Name
	}
	for i, n := range UniqueNames(names) {
		out[i].Name = n
	}
	return out, nil
}

// server turns one entry into a Server, its variables expanded.
func (l *loader) server(name string, d dialect, e *entry) (Server, error) {
	x := &expander{l: l, d: d, server: name}
	s := Server{Name: CleanName(name)}
	kind, err := entryKind(e)
	if err != nil {
		return s, err
	}
	s.Kind = kind
	if kind == Stdio {
		if s.Command, err = x.expand("command", e.Command); err != nil {
			return s, err
		}
		for i, a := range e.Args {
			v, err := x.expand(fmt.Sprintf("args[%d]", i), a)
			if err != nil {
				return s, err
			}
			s.Args = append(s.Args, v)
		}
		if s.Env, err = l.env(x, e); err != nil {
			return s, err
		}
		if e.Cwd != "" {
			cwd, err := x.expand("cwd", e.Cwd)
			if err != nil {
				return s, err
			}
			s.Dir = l.abs(cwd)
		} else if d == vscode {
			s.Dir = l.workspace // VS Code starts its servers there
		}
	} else {
		if len(e.Env) > 0 || e.EnvFile != "" || len(e.Args) > 0 {
			return s, fmt.Errorf(`"env", "envFile" and "args" are for a command; a server of type %q is reached at its URL`, kind)
		}
		if s.URL, err = x.expand("url", entryURL(e)); err != nil {
			return s, err
		}
		keys := slices.Sorted(maps.Keys(e.Headers))
		for _, k := range keys {
			v, err := x.expand("headers."+k, e.Headers[k])
			if err != nil {
				return s, err
			}
			if s.Header == nil {
				s.Header = http.Header{}
			}
			s.Header.Add(k, v)
		}
	}
	if s.Name == "" {
		s.Name = s.DefaultName()
	}
	return s, nil
}

func entryURL(e *entry) string {
	for _, u := range []string{e.URL, e.HTTPURL, e.ServerURL} {
		if u != "" {
			return u
		}
	}
	return ""
}

// entryKind is the Kind an entry stands for.
func entryKind(e *entry) (Kind, error) {
	t := e.Type
	if t == "" && len(e.Transport) > 0 {
		// "transport": "sse", or {"type": "sse"}.
		var s string
		var o struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(e.Transport, &s) == nil {
			t = s
		} else if json.Unmarshal(e.Transport, &o) == nil {
			t = o.Type
		}
	}
	u := entryURL(e)
	norm := strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(t))
	var k Kind
	switch norm {
	case "":
		switch {
		case e.Command != "" && u != "":
			return "", errors.New(`the entry has both a "command" and a "url": give one`)
		case e.Command != "":
			return Stdio, nil
		case u == "":
			return "", errors.New(`the entry has neither a "command" nor a "url"`)
		case e.HTTPURL != "":
			return HTTP, nil
		}
		probe := Server{URL: u}
		k, err := probe.kind()
		if err != nil {
			return "", err
		}
		return k, nil
	case "stdio", "local", "command":
		k = Stdio
	case "http", "streamablehttp", "streamable", "https":
		k = HTTP
	case "sse":
		k = SSE
	case "ws", "websocket", "wss":
		k = WebSocket
	case "grpc":
		k = GRPC
	default:
		return "", fmt.Errorf("%w: type %q (stdio, http, streamable-http, sse, ws, grpc)", ErrUnsupported, t)
	}
	switch {
	case k == Stdio && e.Command == "":
		return "", fmt.Errorf(`a server of type %q needs a "command"`, t)
	case k != Stdio && u == "":
		return "", fmt.Errorf(`a server of type %q needs a "url"`, t)
	case k != Stdio && e.Command != "":
		return "", fmt.Errorf(`a server of type %q has a "url", not a "command"`, t)
	}
	return k, nil
}

// abs makes a relative path one in the workspace folder.
func (l *loader) abs(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(l.workspace, p)
}

// env is an entry's environment: its envFile, then its "env" (which
// wins), as sorted KEY=VALUE entries. A null value leaves the variable out.
func (l *loader) env(x *expander, e *entry) ([]string, error) {
	vars := map[string]string{}
	if e.EnvFile != "" {
		p, err := x.expand("envFile", e.EnvFile)
		if err != nil {
			return nil, err
		}
		if err := readEnvFile(l.abs(p), vars); err != nil {
			return nil, err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(e.Env)) {
		raw := bytes.TrimSpace(e.Env[k])
		var v string
		switch {
		case string(raw) == "null":
			delete(vars, k)
			continue
		case len(raw) > 0 && raw[0] == '"':
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, fmt.Errorf("env.%s: %w", k, err)
			}
		case len(raw) > 0 && (raw[0] == '{' || raw[0] == '['):
			return nil, fmt.Errorf("env.%s must be a string, not %s", k, raw)
		default:
			v = string(raw) // a number or a boolean, as written
		}
		v, err := x.expand("env."+k, v)
		if err != nil {
			return nil, err
		}
		vars[k] = v
	}
	if len(vars) == 0 {
		return nil, nil
	}
	out := make([]string, 0, len(vars))
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		out = append(out, k+"="+vars[k])
	}
	return out, nil
}
