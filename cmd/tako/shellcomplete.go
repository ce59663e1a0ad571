package main

import (
	"context"
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
// keys not given yet (as "key="). A complete name is followed by a space,
// a key by nothing, so that the value comes next.
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
		case words[0] == "call":
			if i := slices.IndexFunc(tools, func(t mcp.Tool) bool { return t.Name == words[1] }); i >= 0 {
				for _, a := range toolArgs(tools[i].InputSchema) {
					cands = append(cands, a.name+"=")
				}
			}
			cands = unused(cands, words[2:])
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
