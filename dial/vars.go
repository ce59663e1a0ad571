package dial

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Variables, as VS Code and Cursor define them, in "command", "args",
// "env" values, "envFile", "cwd", "url" and "headers" values:
//
//	${workspaceFolder}          LoadOptions.WorkspaceFolder (see there)
//	${workspaceFolderBasename}  its last element
//	${userHome}                 the user's home folder
//	${env:NAME}                 the environment variable NAME, empty if unset
//	${input:ID}                 the answer to the file's input ID (LoadOptions.Input)
//	${pathSeparator}, ${/}      the path separator, / or \
//
// and, in "mcpServers" files only, Claude Code's ${NAME} and
// ${NAME:-default}: the environment variable NAME, or default when it is
// unset or empty; unset without a default is an error, as it is there. Any
// other ${...} is an error that names the variable and the server
// (ErrUnknownVariable): a value passed on with "${" in it would reach the
// server as a mystery.

// expander expands the variables of one server's entry.
type expander struct {
	l      *loader
	d      dialect
	server string
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// expand expands the variables in s, the value of field.
func (x *expander) expand(field, s string) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return "", fmt.Errorf("%s: %q has a ${ without its }", field, s)
		}
		v, err := x.variable(s[i+2 : i+j])
		if err != nil {
			return "", fmt.Errorf("%s: %w", field, err)
		}
		b.WriteString(v)
		s = s[i+j+1:]
	}
}

// variable is the value of ${name}.
func (x *expander) variable(name string) (string, error) {
	l := x.l
	switch name {
	case "workspaceFolder":
		return l.workspace, nil
	case "workspaceFolderBasename":
		return filepath.Base(l.workspace), nil
	case "userHome":
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("${userHome}: %w", err)
		}
		return home, nil
	case "pathSeparator", "/":
		return string(filepath.Separator), nil
	}
	if v, ok := strings.CutPrefix(name, "env:"); ok {
		val, _ := x.lookupEnv(v)
		return val, nil
	}
	if id, ok := strings.CutPrefix(name, "input:"); ok {
		return x.input(id)
	}
	if x.d == mcpServers {
		n, def, hasDef := strings.Cut(name, ":-")
		if envName.MatchString(n) {
			if v, ok := x.lookupEnv(n); ok && (v != "" || !hasDef) {
				return v, nil
			}
			if hasDef {
				return def, nil
			}
			return "", fmt.Errorf("%w ${%s}: the environment variable %s is not set (write ${%s:-default} for a default)", ErrUnknownVariable, name, n, n)
		}
	}
	return "", fmt.Errorf("%w ${%s} (known: workspaceFolder, workspaceFolderBasename, userHome, env:NAME, input:ID, pathSeparator)", ErrUnknownVariable, name)
}

func (x *expander) lookupEnv(name string) (string, bool) {
	if f := x.l.opts.LookupEnv; f != nil {
		return f(name)
	}
	return os.LookupEnv(name)
}

// input answers ${input:id}, asking LoadOptions.Input once per id.
func (x *expander) input(id string) (string, error) {
	l := x.l
	if v, ok := l.answers[id]; ok {
		return v, nil
	}
	d, ok := l.inputs[id]
	if !ok {
		return "", fmt.Errorf("%w ${input:%s}: the file's \"inputs\" declare no input %q", ErrUnknownVariable, id, id)
	}
	if d.Type != "" && d.Type != "promptString" && d.Type != "pickString" {
		return "", fmt.Errorf("%w: ${input:%s} is of type %q; only promptString and pickString can be asked for", ErrUnsupported, id, d.Type)
	}
	in := Input{ID: id, Type: d.Type, Description: d.Description, Password: d.Password, Default: d.Default, Server: x.server}
	for _, o := range d.Options {
		var s string
		var lv struct {
			Value string `json:"value"`
		}
		switch {
		case json.Unmarshal(o, &s) == nil:
			in.Options = append(in.Options, s)
		case json.Unmarshal(o, &lv) == nil:
			in.Options = append(in.Options, lv.Value)
		}
	}
	if l.opts.Input == nil {
		what := ""
		if d.Description != "" {
			what = fmt.Sprintf(" (%q)", d.Description)
		}
		return "", fmt.Errorf("%w: ${input:%s}%s must be answered, and no one is asked (LoadOptions.Input is nil)", ErrInputNeeded, id, what)
	}
	v, err := l.opts.Input(in)
	if err != nil {
		return "", fmt.Errorf("${input:%s}: %w", id, err)
	}
	l.answers[id] = v
	return v, nil
}

// readEnvFile reads KEY=VALUE lines into vars: blank lines and # comments
// are skipped, "export " is allowed before a key, a value may be quoted
// ('single' literally, "double" with \n, \t, \" and \\ escapes) and an
// unquoted value ends at " #".
func readEnvFile(path string, vars map[string]string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("envFile: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if n == 1 {
			line = strings.TrimPrefix(line, "\ufeff")
		}
		if line == "" || line[0] == '#' {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t\"'") {
			return fmt.Errorf("envFile %s:%d: want KEY=VALUE, not %q", path, n, clip(line, 40))
		}
		v, err := envValue(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("envFile %s:%d: %s: %w", path, n, k, err)
		}
		vars[k] = v
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("envFile %s: %w", path, err)
	}
	return nil
}

// envValue reads the value of an envFile line.
func envValue(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	switch q := v[0]; q {
	case '\'':
		end := strings.IndexByte(v[1:], '\'')
		if end < 0 {
			return "", errors.New("the value's ' is not closed")
		}
		return v[1 : 1+end], trailing(v[2+end:])
	case '"':
		var b strings.Builder
		for i := 1; i < len(v); i++ {
			c := v[i]
			switch {
			case c == '"':
				return b.String(), trailing(v[i+1:])
			case c == '\\' && i+1 < len(v):
				i++
				switch v[i] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				case 'r':
					b.WriteByte('\r')
				default:
					b.WriteByte(v[i])
				}
			default:
				b.WriteByte(c)
			}
		}
		return "", errors.New(`the value's " is not closed (a value spans one line)`)
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(v), nil
}

// trailing accepts what may follow a quoted value: spaces and a comment.
func trailing(rest string) error {
	rest = strings.TrimSpace(rest)
	if rest == "" || rest[0] == '#' {
		return nil
	}
	return fmt.Errorf("unexpected %q after the quoted value", clip(rest, 20))
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
