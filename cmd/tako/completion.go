package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
)

// `tako completion bash|zsh|fish` prints a script that completes tako's
// commands, its flags (anywhere on the line, as tako takes them), file
// names after --config and the certificate flags, directories after
// --root, and the values of --format, --log-level and --provider. The
// scripts are made from the command and flag tables, so a new flag is
// completed without touching them.

// commandFlags are the flags of the commands that parse their own, as
// name and whether it takes a value.
var commandFlags = map[string]map[string]bool{
	"agent":   {"provider": true, "model": true, "base-url": true, "api-key-env": true, "system": true, "max-turns": true, "prefix": false, "root": true},
	"shell":   {"no-history": false, "root": true, "provider": true, "model": true, "base-url": true, "api-key-env": true},
	"login":   {"scope": true, "dpop": false, "no-browser": false, "timeout": true, "client-credentials": false, "client-id": true, "client-secret-env": true},
	"logout":  {},
	"inspect": {"listen": true, "no-browser": false, "ca": true, "cert": true, "key": true, "server-name": true, "plaintext": false},
}

// flagValues are the values a flag's argument completes to: a fixed list,
// or "" with a kind ("file", "dir").
var flagValues = map[string][]string{
	"format":    {"table", "json", "pretty"},
	"log-level": logLevels,
	"provider":  {"openai", "anthropic"},
}

var fileFlags = []string{"config", "tls-cert", "tls-key", "cert", "key", "ca", "client-ca"}

// completionShells are the shells tako writes a script for.
var completionShells = []string{"bash", "zsh", "fish"}

// runCompletion is `tako completion SHELL`.
func runCompletion(args []string, stdout io.Writer) error {
	if slices.ContainsFunc(args, func(a string) bool { return a == "-h" || a == "--help" || a == "-help" }) {
		_, err := io.WriteString(stdout, commandHelp("completion"))
		return err
	}
	if len(args) != 1 {
		return usagef("completion takes the name of a shell: tako completion bash|zsh|fish")
	}
	var script string
	switch args[0] {
	case "bash":
		script = bashCompletion()
	case "zsh":
		script = zshCompletion()
	case "fish":
		script = fishCompletion()
	default:
		return usagef("completion knows bash, zsh and fish, not %q", args[0])
	}
	_, err := io.WriteString(stdout, script)
	return err
}

// completionWords are the lists every script needs.
type completionWords struct {
	commands     []string            // sorted
	flags        []string            // every flag of the shared table, with "--"
	valueFlags   []string            // the flags, of any command, that take a value
	cmdFlags     map[string][]string // each command that parses its own flags: what completes after it
	descriptions map[string]string
}

func completionLists() completionWords {
	w := completionWords{cmdFlags: map[string][]string{}, descriptions: map[string]string{}}
	for name, c := range commands {
		w.commands = append(w.commands, name)
		w.descriptions[name] = c.brief
	}
	sort.Strings(w.commands)
	values := map[string]bool{}
	for _, d := range flagDefs {
		for _, n := range d.names {
			if len(n) > 1 {
				w.flags = append(w.flags, "--"+n)
				if d.arg != "" {
					values[n] = true
				}
			}
		}
	}
	sort.Strings(w.flags)
	for cmd, fl := range commandFlags {
		if len(fl) == 0 {
			continue // no arm: the catch-all completes the shared flags
		}
		for n, v := range fl {
			w.cmdFlags[cmd] = append(w.cmdFlags[cmd], "--"+n)
			if v {
				values[n] = true
			}
		}
		if cmd == "agent" || cmd == "shell" || cmd == "inspect" { // they take the shared flags too
			w.cmdFlags[cmd] = append(w.cmdFlags[cmd], w.flags...)
		}
		sort.Strings(w.cmdFlags[cmd])
		w.cmdFlags[cmd] = slices.Compact(w.cmdFlags[cmd])
	}
	for n := range values {
		w.valueFlags = append(w.valueFlags, "--"+n)
	}
	sort.Strings(w.valueFlags)
	return w
}

// A completionDialect is how bash or zsh completes each kind of word; the
// two scripts have the same arms otherwise (prevArms, commandArms).
type completionDialect struct {
	offer       func(words []string) string // offers words to complete the current one
	files, dirs string                      // completes a file name, a directory
}

var (
	bashDialect = completionDialect{
		offer: func(words []string) string {
			return fmt.Sprintf("COMPREPLY=($(compgen -W %q -- \"$cur\"))", strings.Join(words, " "))
		},
		files: "COMPREPLY=($(compgen -f -- \"$cur\"))",
		dirs:  "COMPREPLY=($(compgen -d -- \"$cur\"))",
	}
	zshDialect = completionDialect{
		offer: func(words []string) string { return "compadd -- " + strings.Join(words, " ") },
		files: "_files",
		dirs:  "_files -/",
	}
)

// prevArms writes the arms of the case on the word before the cursor:
// what a flag that takes a value completes to.
func (w completionWords) prevArms(b *strings.Builder, d completionDialect) {
	fmt.Fprintf(b, "        %s) %s; return ;;\n", strings.Join(dashed(fileFlags), "|"), d.files)
	fmt.Fprintf(b, "        --root) %s; return ;;\n", d.dirs)
	for _, f := range slices.Sorted(maps.Keys(flagValues)) {
		fmt.Fprintf(b, "        --%s) %s; return ;;\n", f, d.offer(flagValues[f]))
	}
	fmt.Fprintf(b, "        %s) return ;;\n", strings.Join(w.valueFlags, "|"))
}

// commandArms writes the arms of the case on the command, after the one
// for no command yet: what help and completion take, and each command's
// flags.
func (w completionWords) commandArms(b *strings.Builder, d completionDialect) {
	fmt.Fprintf(b, "        help) %s; return ;;\n", d.offer(append(slices.Clone(w.commands), "all")))
	fmt.Fprintf(b, "        completion) %s; return ;;\n", d.offer(completionShells))
	for _, cmd := range slices.Sorted(maps.Keys(w.cmdFlags)) {
		fmt.Fprintf(b, "        %s) [[ $cur == -* ]] && %s; return ;;\n", cmd, d.offer(w.cmdFlags[cmd]))
	}
	fmt.Fprintf(b, "        *) [[ $cur == -* ]] && %s; return ;;\n", d.offer(w.flags))
}

func bashCompletion() string {
	w := completionLists()
	var b strings.Builder
	b.WriteString("# bash completion for tako. Load it with:\n#   source <(tako completion bash)\n# or save it as /etc/bash_completion.d/tako.\n")
	b.WriteString("_tako() {\n")
	b.WriteString("    local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\" cmd= i w\n")
	b.WriteString("    case \"$prev\" in\n")
	w.prevArms(&b, bashDialect)
	b.WriteString("    esac\n")
	b.WriteString("    for ((i = 1; i < COMP_CWORD; i++)); do\n        w=\"${COMP_WORDS[i]}\"\n        case \"$w\" in\n")
	fmt.Fprintf(&b, "            %s) ((i++)) ;;\n", strings.Join(w.valueFlags, "|"))
	b.WriteString("            -*) ;;\n            *) cmd=\"$w\"; break ;;\n        esac\n    done\n")
	b.WriteString("    case \"$cmd\" in\n")
	fmt.Fprintf(&b, "        \"\") [[ $cur == -* ]] && COMPREPLY=($(compgen -W %q -- \"$cur\")) || COMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n",
		strings.Join(w.flags, " "), strings.Join(w.commands, " "))
	w.commandArms(&b, bashDialect)
	b.WriteString("    esac\n}\ncomplete -F _tako tako\n")
	return b.String()
}

func zshCompletion() string {
	w := completionLists()
	var b strings.Builder
	b.WriteString("#compdef tako\n# zsh completion for tako. Load it with:\n#   source <(tako completion zsh)\n# or save it as _tako in a directory of $fpath.\n")
	b.WriteString("_tako() {\n")
	b.WriteString("    local cur=${words[CURRENT]} prev=${words[CURRENT-1]} cmd= i\n")
	b.WriteString("    local -a commands\n    commands=(\n")
	for _, c := range w.commands {
		fmt.Fprintf(&b, "        %s\n", zshQuote(c+":"+w.descriptions[c]))
	}
	b.WriteString("    )\n")
	b.WriteString("    case $prev in\n")
	w.prevArms(&b, zshDialect)
	b.WriteString("    esac\n")
	b.WriteString("    for (( i = 2; i < CURRENT; i++ )); do\n        case ${words[i]} in\n")
	fmt.Fprintf(&b, "            %s) (( i++ )) ;;\n", strings.Join(w.valueFlags, "|"))
	b.WriteString("            -*) ;;\n            *) cmd=${words[i]}; break ;;\n        esac\n    done\n")
	b.WriteString("    case $cmd in\n")
	fmt.Fprintf(&b, "        '') if [[ $cur == -* ]]; then compadd -- %s; else _describe command commands; fi; return ;;\n", strings.Join(w.flags, " "))
	w.commandArms(&b, zshDialect)
	b.WriteString("    esac\n}\n")
	b.WriteString("if [[ ${funcstack[1]} == _tako ]]; then _tako \"$@\"; else compdef _tako tako; fi\n")
	return b.String()
}

func fishCompletion() string {
	w := completionLists()
	var b strings.Builder
	b.WriteString("# fish completion for tako. Load it with:\n#   tako completion fish | source\n# or save it as ~/.config/fish/completions/tako.fish.\n")
	fmt.Fprintf(&b, "set -l tako_commands %s\n", strings.Join(w.commands, " "))
	b.WriteString("complete -c tako -f\n")
	for _, c := range w.commands {
		fmt.Fprintf(&b, "complete -c tako -n \"not __fish_seen_subcommand_from $tako_commands\" -a %s -d %s\n", c, fishQuote(w.descriptions[c]))
	}
	fmt.Fprintf(&b, "complete -c tako -n \"__fish_seen_subcommand_from help\" -a %s\n", fishQuote(strings.Join(append(slices.Clone(w.commands), "all"), " ")))
	fmt.Fprintf(&b, "complete -c tako -n \"__fish_seen_subcommand_from completion\" -a %s\n", fishQuote(strings.Join(completionShells, " ")))
	seen := map[string]bool{}
	flag := func(name string, value bool, cond string) {
		line := "complete -c tako"
		if cond != "" {
			line += " -n " + fishQuote(cond)
		}
		line += " -l " + name
		switch {
		case slices.Contains(fileFlags, name):
			line += " -r -F"
		case name == "root":
			line += " -r -a '(__fish_complete_directories)'"
		case flagValues[name] != nil:
			line += " -x -a " + fishQuote(strings.Join(flagValues[name], " "))
		case value:
			line += " -x"
		}
		b.WriteString(line + "\n")
	}
	for _, d := range flagDefs {
		for _, n := range d.names {
			if len(n) > 1 && !seen[n] {
				seen[n] = true
				flag(n, d.arg != "", "")
			}
		}
	}
	for _, cmd := range slices.Sorted(maps.Keys(commandFlags)) {
		for _, n := range slices.Sorted(maps.Keys(commandFlags[cmd])) {
			if !seen[n] {
				flag(n, commandFlags[cmd][n], "__fish_seen_subcommand_from "+cmd)
			}
		}
	}
	return b.String()
}

func dashed(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "--" + n
	}
	return out
}

// zshQuote and fishQuote quote s in single quotes for their shell.
func zshQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
func fishQuote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}
