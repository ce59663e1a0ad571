package inspect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tako-mcp/tako/dial"
)

// Import of an MCP registry server.json (the registry's published
// schema, 2025-09-29 and later). The page sends the file's text; Go parses
// it into the few fields tako can act on, refuses what it cannot read, and
// lists the choices: each package (npm run with npx, pypi with uvx, oci
// with docker) and each remote (Streamable HTTP or SSE), with the inputs
// the person must give. Once the person has picked one and filled it in,
// the resolved server goes through connectServer like a typed one: a
// remote is reached at once, a package's command waits for the same
// confirmation as a typed command. Parsing in Go, not only in the page,
// keeps one reading of the file that the confirmation can trust.

// serverJSON is the part of a server.json the inspector reads.
type serverJSON struct {
	Schema      string         `json:"$schema"`
	Name        string         `json:"name"`
	Title       string         `json:"title"`
	Description string         `json:"description"`
	Version     string         `json:"version"`
	Packages    []regPackage   `json:"packages"`
	Remotes     []regTransport `json:"remotes"`
}

// regPackage is a package entry: what to download and how to run it.
type regPackage struct {
	RegistryType         string       `json:"registryType"`
	RegistryBaseURL      string       `json:"registryBaseUrl"`
	Identifier           string       `json:"identifier"`
	Version              string       `json:"version"`
	RuntimeHint          string       `json:"runtimeHint"`
	Transport            regTransport `json:"transport"`
	RuntimeArguments     []regInput   `json:"runtimeArguments"`
	PackageArguments     []regInput   `json:"packageArguments"`
	EnvironmentVariables []regInput   `json:"environmentVariables"`
}

// regTransport is a package's transport or a remote.
type regTransport struct {
	Type      string              `json:"type"`
	URL       string              `json:"url"`
	Headers   []regInput          `json:"headers"`
	Variables map[string]regInput `json:"variables"`
}

// regInput is the schema's Input with its variants folded in: a
// KeyValueInput (Name is the header or variable), a named argument
// (Type "named", Name the flag) or a positional one (Type "positional").
type regInput struct {
	Type        string              `json:"type"`
	Name        string              `json:"name"`
	ValueHint   string              `json:"valueHint"`
	Description string              `json:"description"`
	IsRequired  bool                `json:"isRequired"`
	IsSecret    bool                `json:"isSecret"`
	IsRepeated  bool                `json:"isRepeated"`
	Format      string              `json:"format"`
	Value       string              `json:"value"`
	Default     string              `json:"default"`
	Placeholder string              `json:"placeholder"`
	Choices     []string            `json:"choices"`
	Variables   map[string]regInput `json:"variables"`
}

// regField is one input the page asks the person for.
type regField struct {
	Key         string   `json:"key"`
	Label       string   `json:"label"`
	Description string   `json:"description,omitempty"`
	Required    bool     `json:"required,omitempty"`
	Secret      bool     `json:"secret,omitempty"`
	Repeated    bool     `json:"repeated,omitempty"`
	Default     string   `json:"default,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
	Choices     []string `json:"choices,omitempty"`
}

// regChoice is one way to reach the server: a package or a remote.
type regChoice struct {
	ID     string     `json:"id"` // package:N or remote:N
	Label  string     `json:"label"`
	Kind   string     `json:"kind"` // stdio, http, sse
	Fields []regField `json:"fields"`
	Error  string     `json:"error,omitempty"` // why tako cannot use it
}

// parseServerJSON reads a server.json, or a registry API answer that wraps
// one under "server".
func parseServerJSON(b []byte) (*serverJSON, error) {
	bad := func(why string) error {
		return &apiError{status: 400, msg: "this is not a server.json tako can read: " + why}
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return nil, bad("it is not a JSON object")
	}
	var wrap struct {
		Server json.RawMessage `json:"server"`
		Name   string          `json:"name"`
	}
	if err := json.Unmarshal(b, &wrap); err != nil {
		return nil, bad(err.Error())
	}
	if wrap.Name == "" && len(wrap.Server) > 0 {
		b = wrap.Server
	}
	var sj serverJSON
	if err := json.Unmarshal(b, &sj); err != nil {
		return nil, bad(strings.TrimPrefix(err.Error(), "json: "))
	}
	if sj.Name == "" {
		return nil, bad("it has no name")
	}
	if len(sj.Packages) == 0 && len(sj.Remotes) == 0 {
		return nil, bad("it lists neither packages nor remotes")
	}
	return &sj, nil
}

// choices lists the packages and remotes with what each asks for.
func (sj *serverJSON) choices() []regChoice {
	var cs []regChoice
	for i, p := range sj.Packages {
		c := regChoice{ID: fmt.Sprintf("package:%d", i), Kind: "stdio",
			Label: fmt.Sprintf("%s package %s %s", p.RegistryType, p.Identifier, p.Version)}
		if _, err := p.runtime(); err != nil {
			c.Error = err.Error()
		} else if t := p.Transport.Type; t != "" && t != "stdio" {
			c.Error = fmt.Sprintf("this package serves %s at %s: start it yourself and connect to that URL", t, p.Transport.URL)
		}
		for j, a := range p.RuntimeArguments {
			c.Fields = append(c.Fields, a.fields(fmt.Sprintf("runtime:%d", j), argLabel(a))...)
		}
		for j, a := range p.PackageArguments {
			c.Fields = append(c.Fields, a.fields(fmt.Sprintf("arg:%d", j), argLabel(a))...)
		}
		for _, e := range p.EnvironmentVariables {
			c.Fields = append(c.Fields, e.fields("env:"+e.Name, e.Name)...)
		}
		cs = append(cs, c)
	}
	for i, r := range sj.Remotes {
		c := regChoice{ID: fmt.Sprintf("remote:%d", i), Label: fmt.Sprintf("%s remote %s", r.Type, r.URL)}
		switch r.Type {
		case "streamable-http":
			c.Kind = "http"
		case "sse":
			c.Kind = "sse"
		default:
			c.Error = fmt.Sprintf("the remote's type %q is neither streamable-http nor sse", r.Type)
		}
		for _, name := range sortedKeys(r.Variables) {
			c.Fields = append(c.Fields, r.Variables[name].field("url:"+name, name))
		}
		for _, h := range r.Headers {
			c.Fields = append(c.Fields, h.fields("header:"+h.Name, h.Name)...)
		}
		cs = append(cs, c)
	}
	return cs
}

func argLabel(a regInput) string {
	switch {
	case a.Name != "":
		return a.Name
	case a.ValueHint != "":
		return a.ValueHint
	}
	return "argument"
}

// fields is what in is asks for: itself when it has no fixed value, or
// the variables its fixed value names.
func (in regInput) fields(key, label string) []regField {
	if in.Value == "" {
		return []regField{in.field(key, label)}
	}
	var fs []regField
	for _, v := range sortedKeys(in.Variables) {
		fs = append(fs, in.Variables[v].field(key+"/"+v, label+" {"+v+"}"))
	}
	return fs
}

func (in regInput) field(key, label string) regField {
	return regField{Key: key, Label: label, Description: in.Description, Required: in.IsRequired, Secret: in.IsSecret,
		Repeated: in.IsRepeated, Default: in.Default, Placeholder: in.Placeholder, Choices: in.Choices}
}

// resolve is in's values with the person's answers: none when it is left
// out, several when it is repeated (one a line).
func (in regInput) resolve(key, label string, answers map[string]string) ([]string, error) {
	if in.Value != "" {
		v := in.Value
		for _, name := range sortedKeys(in.Variables) {
			x, err := in.Variables[name].one(key+"/"+name, label+" {"+name+"}", answers)
			if err != nil {
				return nil, err
			}
			v = strings.ReplaceAll(v, "{"+name+"}", x)
		}
		return []string{v}, nil
	}
	v, ok := answers[key]
	if !ok || v == "" {
		v = in.Default
	}
	if v == "" {
		if in.IsRequired {
			return nil, &apiError{status: 400, msg: label + " is required"}
		}
		return nil, nil
	}
	var vs []string
	if in.IsRepeated {
		for l := range strings.SplitSeq(v, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				vs = append(vs, l)
			}
		}
	} else {
		vs = []string{v}
	}
	for _, x := range vs {
		if len(in.Choices) > 0 && !slices.Contains(in.Choices, x) {
			return nil, &apiError{status: 400, msg: fmt.Sprintf("%s is one of %s", label, strings.Join(in.Choices, ", "))}
		}
	}
	return vs, nil
}

// one is a variable's single value ("" when left out and not required).
func (in regInput) one(key, label string, answers map[string]string) (string, error) {
	vs, err := in.resolve(key, label, answers)
	if err != nil || len(vs) == 0 {
		return "", err
	}
	return vs[0], nil
}

// runtime is the program that runs p, with its own arguments: the one its
// runtimeHint names (a publisher's choice, such as bunx for an npm
// package or pipx for a PyPI one), or else the usual runner of its
// registry type.
func (p *regPackage) runtime() ([]string, error) {
	hint := p.RuntimeHint
	if hint == "" {
		if hint = defaultRuntime[p.RegistryType]; hint == "" {
			return nil, fmt.Errorf("tako inspect runs npm, pypi, oci and nuget packages, not %q ones: type its command in the connect form", p.RegistryType)
		}
	}
	if !commandName.MatchString(hint) {
		// It becomes the command run: a name to look up in PATH, never
		// a path or a shell line from the file.
		return nil, fmt.Errorf("runtimeHint %q is not a command name: type its command in the connect form", hint)
	}
	if argv, ok := runtimeArgs[hint]; ok {
		return slices.Clone(argv), nil
	}
	return []string{hint}, nil
}

// defaultRuntime is the runner of each registry type's packages.
var defaultRuntime = map[string]string{"npm": "npx", "pypi": "uvx", "oci": "docker", "nuget": "dnx"}

// runtimeArgs are what a runner needs before the package to run it
// unattended over stdio: npx would otherwise ask before it downloads (on
// the stdin that the MCP messages use; dnx's --yes goes after the
// package), pipx runs with its run command, and a container needs its
// stdin.
var runtimeArgs = map[string][]string{
	"npx":    {"npx", "-y"},
	"pipx":   {"pipx", "run"},
	"docker": {"docker", "run", "-i", "--rm"},
	"podman": {"podman", "run", "-i", "--rm"},
}

// commandName is a runtimeHint tako runs: a plain program name.
var commandName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// container reports whether argv runs a container, which passes on only
// the environment variables it is told to.
func container(argv []string) bool { return argv[0] == "docker" || argv[0] == "podman" }

// args appends the arguments as to argv.
func args(argv []string, as []regInput, prefix string, answers map[string]string) ([]string, error) {
	for j, a := range as {
		vs, err := a.resolve(fmt.Sprintf("%s:%d", prefix, j), argLabel(a), answers)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			if a.Type == "named" {
				argv = append(argv, a.Name)
			}
			argv = append(argv, v)
		}
	}
	return argv, nil
}

// ociTagged reports whether an image reference already names a tag or a
// digest.
var ociTagged = regexp.MustCompile(`(@sha256:[0-9a-f]+|:[A-Za-z0-9_][A-Za-z0-9_.-]*)$`)

// unfilled is a {variable} left in a URL template.
var unfilled = regexp.MustCompile(`\{[A-Za-z0-9_.-]+\}`)

// server is the dial.Server of the choice id with the person's answers.
func (sj *serverJSON) server(id string, answers map[string]string) (dial.Server, error) {
	var s dial.Server
	s.Name = sj.Name
	var n int
	switch {
	case index(id, "package:", len(sj.Packages), &n):
		p := sj.Packages[n]
		argv, err := p.runtime()
		if err != nil {
			return s, &apiError{status: 400, msg: err.Error()}
		}
		if t := p.Transport.Type; t != "" && t != "stdio" {
			return s, &apiError{status: 400, msg: "this package does not speak stdio: start it yourself and connect to its URL"}
		}
		if argv, err = args(argv, p.RuntimeArguments, "runtime", answers); err != nil {
			return s, err
		}
		for _, e := range p.EnvironmentVariables {
			v, err := e.one("env:"+e.Name, e.Name, answers)
			if err != nil {
				return s, err
			}
			if v == "" {
				continue
			}
			s.Env = append(s.Env, e.Name+"="+v)
			if container(argv) {
				argv = append(argv, "-e", e.Name)
			}
		}
		switch ref := p.Identifier; p.RegistryType {
		case "npm":
			argv = append(argv, ref+"@"+p.Version)
		case "pypi":
			argv = append(argv, ref+"=="+p.Version)
		case "oci":
			if !ociTagged.MatchString(ref[strings.LastIndex(ref, "/")+1:]) && p.Version != "" {
				ref += ":" + p.Version
			}
			argv = append(argv, ref)
		case "nuget":
			// dnx: --yes, not to ask before the download; the package's
			// own arguments after --.
			if p.Version != "" {
				ref += "@" + p.Version
			}
			argv = append(argv, ref, "--yes")
			if len(p.PackageArguments) > 0 {
				argv = append(argv, "--")
			}
		}
		if argv, err = args(argv, p.PackageArguments, "arg", answers); err != nil {
			return s, err
		}
		s.Kind, s.Command, s.Args = dial.Stdio, argv[0], argv[1:]
	case index(id, "remote:", len(sj.Remotes), &n):
		r := sj.Remotes[n]
		switch r.Type {
		case "streamable-http":
			s.Kind = dial.HTTP
		case "sse":
			s.Kind = dial.SSE
		default:
			return s, &apiError{status: 400, msg: fmt.Sprintf("the remote's type %q is neither streamable-http nor sse", r.Type)}
		}
		s.URL = r.URL
		for _, name := range sortedKeys(r.Variables) {
			v, err := r.Variables[name].one("url:"+name, name, answers)
			if err != nil {
				return s, err
			}
			s.URL = strings.ReplaceAll(s.URL, "{"+name+"}", v)
		}
		if m := unfilled.FindString(s.URL); m != "" {
			return s, &apiError{status: 400, msg: fmt.Sprintf("the remote's URL names %s, which its variables do not define", m)}
		}
		for _, h := range r.Headers {
			v, err := h.one("header:"+h.Name, h.Name, answers)
			if err != nil {
				return s, err
			}
			if v != "" {
				if s.Header == nil {
					s.Header = http.Header{}
				}
				s.Header.Add(h.Name, v)
			}
		}
	default:
		return s, &apiError{status: 400, msg: "the server.json has no " + id}
	}
	if err := s.Check(); err != nil {
		return s, &apiError{status: 400, msg: describe(err)}
	}
	return s, nil
}

// index reads a choice id "prefixN" with N below limit.
func index(id, prefix string, limit int, n *int) bool {
	rest, ok := strings.CutPrefix(id, prefix)
	if !ok {
		return false
	}
	i, err := strconv.Atoi(rest)
	*n = i
	return err == nil && i >= 0 && i < limit
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// registryRequest is POST /api/registry: the file's text, and once the
// person has picked, the choice and the answers. Preview asks what would
// run or be reached, without doing it.
type registryRequest struct {
	Text    string            `json:"text"`
	Choice  string            `json:"choice"`
	Answers map[string]string `json:"answers"`
	Preview bool              `json:"preview"`
}

// apiRegistry lists a server.json's choices, previews one, or connects
// to one through connectServer (a command still waits for the person's
// confirmation).
func (ins *Inspector) apiRegistry(r *http.Request) (any, error) {
	var c registryRequest
	if err := readJSON(r, &c); err != nil {
		return nil, err
	}
	sj, err := parseServerJSON([]byte(c.Text))
	if err != nil {
		return nil, err
	}
	if c.Choice == "" {
		return map[string]any{"name": sj.Name, "title": sj.Title, "description": sj.Description, "version": sj.Version, "choices": sj.choices()}, nil
	}
	s, err := sj.server(c.Choice, c.Answers)
	if err != nil {
		return nil, err
	}
	if c.Preview {
		return preview(&s), nil
	}
	return ins.connectServer(s)
}

// preview is what the page shows before connecting: the exact argv or
// URL, and the names (not the values) of the variables and headers.
func preview(s *dial.Server) map[string]any {
	p := map[string]any{"kind": string(s.Kind)}
	if s.Kind == dial.Stdio {
		p["argv"] = append([]string{s.Command}, s.Args...)
		var env []string
		for _, e := range s.Env {
			k, _, _ := strings.Cut(e, "=")
			env = append(env, k)
		}
		p["env"] = nonNil(env)
	} else {
		p["url"] = s.URL
		p["headers"] = nonNil(sortedKeys(s.Header))
	}
	return p
}
