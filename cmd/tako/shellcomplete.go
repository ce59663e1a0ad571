package main

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"github.com/tako-mcp/tako/mcp"
)

// complete returns the completions of the word that ends at pos in line:
// each candidate as the text to insert after what was typed, and the length
// in runes of the typed part they share. Commands complete first; then tool
// names after call, prompt names after prompt, resource URIs after read,
// server names after use, and, after a tool or prompt name, the argument
// keys not given yet (as "key="), and after "key=" the values: those the
// server completes for a prompt's argument (completion/complete), the
// choices (enum) or true and false of a tool's. A complete name or value
// is followed by a space, a key by nothing, so that the value comes next.
func (sh *shell) complete(ctx context.Context, line string, pos int) (suffixes []string, length int) {
	r := []rune(line)
	if pos > len(r) {
		pos = len(r)
	}
	before := string(r[:pos])
	words := strings.Fields(before)
	partial := ""
	if len(words) > 0 && !strings.HasSuffix(before, " ") {
		partial, words = words[len(words)-1], words[:len(words)-1]
	}
	var cands []string // whole words, each with what follows it
	switch {
	case len(words) == 0:
		for _, c := range shellCommands {
			cands = append(cands, c.name+" ")
		}
		cands = append(cands, "exit ")
	case len(words) == 1 && (words[0] == "use"):
		for _, n := range sh.serverNames() {
			cands = append(cands, n+" ")
		}
	case len(words) == 1 && words[0] == "help":
		for _, c := range shellCommands {
			cands = append(cands, c.name+" ")
		}
	case words[0] == "call" || words[0] == "prompt" || words[0] == "read":
		tools, prompts, resources := sh.cur.lists(ctx)
		switch {
		case words[0] == "read" && len(words) == 1:
			for _, res := range resources {
				cands = append(cands, res.URI+" ")
			}
		case words[0] == "call" && len(words) == 1:
			for _, t := range tools {
				cands = append(cands, t.Name+" ")
			}
		case words[0] == "prompt" && len(words) == 1:
			for _, p := range prompts {
				cands = append(cands, p.Name+" ")
			}
		case words[0] == "call" && strings.Contains(partial, "="):
			if i := slices.IndexFunc(tools, func(t mcp.Tool) bool { return t.Name == words[1] }); i >= 0 {
				key, _, _ := strings.Cut(partial, "=")
				for _, v := range schemaValues(tools[i].InputSchema, key) {
					cands = append(cands, key+"="+v+" ")
				}
			}
		case words[0] == "call":
			if i := slices.IndexFunc(tools, func(t mcp.Tool) bool { return t.Name == words[1] }); i >= 0 {
				for _, a := range toolArgs(tools[i].InputSchema) {
					cands = append(cands, a.name+"=")
				}
			}
			cands = unused(cands, words[2:])
		case words[0] == "prompt" && strings.Contains(partial, "="):
			// The server completes the value (completion/complete), with
			// the arguments already given as its context.
			key, value, _ := strings.Cut(partial, "=")
			for _, v := range sh.cur.completeValue(ctx, mcp.CompleteRef{Type: "ref/prompt", Name: words[1]}, key, value, words[2:]) {
				cands = append(cands, key+"="+v+" ")
			}
		case words[0] == "prompt":
			if i := slices.IndexFunc(prompts, func(p mcp.Prompt) bool { return p.Name == words[1] }); i >= 0 {
				for _, a := range prompts[i].Arguments {
					cands = append(cands, a.Name+"=")
				}
			}
			cands = unused(cands, words[2:])
		}
	}
	sort.Strings(cands)
	cands = slices.Compact(cands)
	n := len([]rune(partial))
	for _, c := range cands {
		if strings.HasPrefix(c, partial) && c != partial {
			suffixes = append(suffixes, string([]rune(c)[n:]))
		}
	}
	return suffixes, n
}

// unused drops the "key=" candidates whose key a word already sets.
func unused(cands, given []string) []string {
	return slices.DeleteFunc(cands, func(c string) bool {
		return slices.ContainsFunc(given, func(g string) bool { return strings.HasPrefix(g, c) })
	})
}

// shellCompleter adapts complete to the line editor's interface.
type shellCompleter struct {
	sh  *shell
	ctx context.Context
}

// Do returns the completions of the word before pos.
func (c shellCompleter) Do(line []rune, pos int) ([][]rune, int) {
	suffixes, n := c.sh.complete(c.ctx, string(line), pos)
	out := make([][]rune, len(suffixes))
	for i, s := range suffixes {
		out[i] = []rune(s)
	}
	return out, n
}

// completeValue asks the server to complete the argument key of ref from
// value, the other key=value words as the context. Nothing when the server
// does not complete, or does not answer in time.
func (s *shellServer) completeValue(ctx context.Context, ref mcp.CompleteRef, key, value string, given []string) []string {
	if s.t.ServerInfo().Capabilities.Completions == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	params := &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteArgument{Name: key, Value: value}}
	args := map[string]string{}
	for _, w := range given {
		if k, v, ok := strings.Cut(w, "="); ok && k != key {
			args[k] = v
		}
	}
	if len(args) > 0 {
		params.Context = &mcp.CompleteContext{Arguments: args}
	}
	res, err := s.t.Complete(ctx, params)
	if err != nil {
		return nil
	}
	var out []string
	for _, v := range res.Completion.Values {
		if c := cleanLine(v); c == v && !strings.ContainsAny(v, " '\"\\") {
			out = append(out, v) // a value the line can hold unquoted
		}
	}
	return out
}

// schemaValues are the values a tool's argument key can take that the
// schema lists: its enum, or true and false for a boolean.
func schemaValues(schema json.RawMessage, key string) []string {
	var s struct {
		Properties map[string]struct {
			Type json.RawMessage   `json:"type"`
			Enum []json.RawMessage `json:"enum"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	p, ok := s.Properties[key]
	if !ok {
		return nil
	}
	var out []string
	for _, e := range p.Enum {
		var v string
		if json.Unmarshal(e, &v) != nil {
			v = string(e)
		}
		if v != "" && !strings.ContainsAny(v, " '\"\\") && cleanLine(v) == v {
			out = append(out, v)
		}
	}
	if len(out) == 0 && slices.Contains((propSchema{Type: p.Type}).types(), "boolean") {
		out = []string{"false", "true"}
	}
	return out
}
