package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// The commands of the operations other than tools: resources, templates,
// read, prompts, prompt, complete, ping and info. Each checks its
// arguments before any server starts, prints text for a person, and with
// --format json or pretty prints the protocol's result instead, through
// transport.Call, so that every transport serves them alike.

func noArgs(name string) func(inv *invocation) error {
	return func(inv *invocation) error {
		if len(inv.args) > 0 {
			return usagef("%s takes no arguments, got %q (see tako help %s)", name, inv.args[0], name)
		}
		return nil
	}
}

// resourcesCommand implements `tako resources`.
func resourcesCommand(inv *invocation) (operation, error) {
	if err := noArgs("resources")(inv); err != nil {
		return nil, err
	}
	return func(ctx context.Context, t transport.Transport, stdout, _ io.Writer) error {
		if inv.opts.raw() {
			return writeList(ctx, t, stdout, mcp.MethodResourcesList, t.ServerInfo().Capabilities.Resources != nil, inv.opts.format)
		}
		list, err := t.ListResources(ctx)
		if err != nil && !notOffered(err) {
			return err
		}
		rows := make([][]string, len(list))
		for i, r := range list {
			rows[i] = []string{cleanLine(r.URI), cleanLine(r.MIMEType), summary(r.Title, r.Name, r.Description)}
		}
		return writeTable(stdout, "(the server has no resources)", []string{"URI", "MIME", "NAME"}, rows)
	}, nil
}

// templatesCommand implements `tako templates`.
func templatesCommand(inv *invocation) (operation, error) {
	if err := noArgs("templates")(inv); err != nil {
		return nil, err
	}
	return func(ctx context.Context, t transport.Transport, stdout, _ io.Writer) error {
		if inv.opts.raw() {
			return writeList(ctx, t, stdout, mcp.MethodResourcesTemplatesList, t.ServerInfo().Capabilities.Resources != nil, inv.opts.format)
		}
		list, err := t.ListResourceTemplates(ctx)
		if err != nil && !notOffered(err) {
			return err
		}
		rows := make([][]string, len(list))
		for i, r := range list {
			rows[i] = []string{cleanLine(r.URITemplate), cleanLine(r.MIMEType), summary(r.Title, r.Name, r.Description)}
		}
		return writeTable(stdout, "(the server has no resource templates)", []string{"URI TEMPLATE", "MIME", "NAME"}, rows)
	}, nil
}

// readCommand implements `tako read URI`.
func readCommand(inv *invocation) (operation, error) {
	if len(inv.args) != 1 || inv.args[0] == "" {
		return nil, usagef("read takes one resource URI: tako read URI (tako resources lists them)")
	}
	params := &mcp.ReadResourceParams{URI: inv.args[0]}
	return func(ctx context.Context, t transport.Transport, stdout, _ io.Writer) error {
		if inv.opts.raw() {
			return callRaw(ctx, t, stdout, mcp.MethodResourcesRead, params, inv.opts.format)
		}
		res, err := t.ReadResource(ctx, params)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		for _, c := range res.Contents {
			switch {
			case c.Text != nil:
				text := showText(*c.Text)
				b.WriteString(text)
				if !strings.HasSuffix(text, "\n") {
					b.WriteByte('\n')
				}
			case c.Blob != nil:
				fmt.Fprintf(&b, "[blob %s %s, %d bytes] (--format json has the base64)\n", cleanLine(c.URI), orUnknown(c.MIMEType), c.Blob.Size())
			default:
				fmt.Fprintf(&b, "[%s without text or blob]\n", cleanLine(c.URI))
			}
		}
		_, err = stdout.Write(b.Bytes())
		return err
	}, nil
}

// promptsCommand implements `tako prompts`.
func promptsCommand(inv *invocation) (operation, error) {
	if err := noArgs("prompts")(inv); err != nil {
		return nil, err
	}
	return func(ctx context.Context, t transport.Transport, stdout, _ io.Writer) error {
		if inv.opts.raw() {
			return writeList(ctx, t, stdout, mcp.MethodPromptsList, t.ServerInfo().Capabilities.Prompts != nil, inv.opts.format)
		}
		list, err := t.ListPrompts(ctx)
		if err != nil && !notOffered(err) {
			return err
		}
		rows := make([][]string, len(list))
		for i, p := range list {
			args := make([]argName, len(p.Arguments))
			for j, a := range p.Arguments {
				args[j] = argName{name: a.Name, required: a.Required}
			}
			rows[i] = []string{signature(p.Name, args), summary(p.Title, "", p.Description)}
		}
		return writeTable(stdout, "(the server has no prompts)", []string{"NAME", "DESCRIPTION"}, rows)
	}, nil
}

// promptCommand implements `tako prompt NAME [KEY=VALUE ...]`. Prompt
// arguments are strings, so no schema is needed to type them.
func promptCommand(inv *invocation) (operation, error) {
	if len(inv.args) == 0 || inv.args[0] == "" {
		return nil, usagef("prompt needs a prompt name: tako prompt NAME [KEY=VALUE ...] (tako prompts lists them)")
	}
	args, err := stringPairs("prompt", inv.args[1:])
	if err != nil {
		return nil, err
	}
	params := &mcp.GetPromptParams{Name: inv.args[0], Arguments: args}
	return func(ctx context.Context, t transport.Transport, stdout, _ io.Writer) error {
		if inv.opts.raw() {
			return callRaw(ctx, t, stdout, mcp.MethodPromptsGet, params, inv.opts.format)
		}
		res, err := t.GetPrompt(ctx, params)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		for i, m := range res.Messages {
			if i > 0 {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "[%s]\n", cleanLine(m.Role))
			if err := writeContent(&b, &mcp.CallToolResult{Content: []mcp.Content{m.Content}}); err != nil {
				return err
			}
		}
		_, err = stdout.Write(b.Bytes())
		return err
	}, nil
}

// completeCommand implements `tako complete --prompt NAME ARG=PARTIAL
// [KEY=VALUE ...]` and `tako complete --resource URI ARG=PARTIAL`: the
// first pair is the argument being completed, the others the arguments
// already chosen (the completion's context).
func completeCommand(inv *invocation) (operation, error) {
	o := &inv.opts
	var ref mcp.CompleteRef
	switch {
	case o.completePrompt != "" && o.completeResource != "":
		return nil, usagef("complete takes --prompt NAME or --resource URI, not both")
	case o.completePrompt != "":
		ref = mcp.CompleteRef{Type: "ref/prompt", Name: o.completePrompt}
	case o.completeResource != "":
		ref = mcp.CompleteRef{Type: "ref/resource", URI: o.completeResource}
	default:
		return nil, usagef("complete needs --prompt NAME or --resource URI: tako complete --prompt NAME ARG=PARTIAL")
	}
	if len(inv.args) == 0 {
		return nil, usagef("complete needs the argument to complete: ARG=PARTIAL (PARTIAL may be empty)")
	}
	first, err := stringPairs("complete", inv.args[:1])
	if err != nil {
		return nil, err
	}
	context_, err := stringPairs("complete", inv.args[1:])
	if err != nil {
		return nil, err
	}
	params := &mcp.CompleteParams{Ref: ref}
	for k, v := range first {
		params.Argument = mcp.CompleteArgument{Name: k, Value: v}
	}
	if len(context_) > 0 {
		params.Context = &mcp.CompleteContext{Arguments: context_}
	}
	return func(ctx context.Context, t transport.Transport, stdout, _ io.Writer) error {
		if inv.opts.raw() {
			return callRaw(ctx, t, stdout, mcp.MethodComplete, params, inv.opts.format)
		}
		res, err := t.Complete(ctx, params)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		for _, v := range res.Completion.Values {
			b.WriteString(cleanLine(v))
			b.WriteByte('\n')
		}
		switch c := res.Completion; {
		case c.Total != nil && *c.Total > len(c.Values):
			fmt.Fprintf(&b, "(%d of %d)\n", len(c.Values), *c.Total)
		case c.HasMore:
			b.WriteString("(more)\n")
		case len(c.Values) == 0:
			b.WriteString("(no completions)\n")
		}
		_, err = stdout.Write(b.Bytes())
		return err
	}, nil
}

// pingCommand implements `tako ping`: the handshake, then one ping (on
// 2026-07-28, which has no ping, server/discover).
func pingCommand(inv *invocation) (operation, error) {
	if err := noArgs("ping")(inv); err != nil {
		return nil, err
	}
	return func(ctx context.Context, t transport.Transport, stdout, _ io.Writer) error {
		start := time.Now()
		var err error
		if p, ok := t.(interface{ Ping(context.Context) error }); ok {
			err = p.Ping(ctx)
		} else {
			err = transport.Call(ctx, t, mcp.MethodPing, nil, nil)
		}
		if err != nil {
			return err
		}
		d := time.Since(start)
		if inv.opts.raw() {
			return writeRaw(stdout, json.RawMessage(fmt.Sprintf(`{"ok":true,"ms":%.3f}`, float64(d.Microseconds())/1000)), inv.opts.format)
		}
		_, err = fmt.Fprintf(stdout, "ok: %s answered in %v\n", serverLabel(t.ServerInfo()), d.Round(time.Microsecond*100))
		return err
	}, nil
}

// infoCommand implements `tako info`: what the handshake learned.
func infoCommand(inv *invocation) (operation, error) {
	if err := noArgs("info")(inv); err != nil {
		return nil, err
	}
	return func(ctx context.Context, t transport.Transport, stdout, _ io.Writer) error {
		info := t.ServerInfo()
		if inv.opts.raw() {
			// The shape of an initialize result, which every era's
			// handshake maps onto.
			raw, err := json.Marshal(struct {
				ProtocolVersion string                 `json:"protocolVersion"`
				ServerInfo      mcp.Implementation     `json:"serverInfo"`
				Capabilities    mcp.ServerCapabilities `json:"capabilities"`
				Instructions    string                 `json:"instructions,omitempty"`
			}{info.ProtocolVersion, info.Implementation, info.Capabilities, info.Instructions})
			if err != nil {
				return err
			}
			return writeRaw(stdout, raw, inv.opts.format)
		}
		var b bytes.Buffer
		fmt.Fprintf(&b, "server:       %s\n", serverLabel(info))
		fmt.Fprintf(&b, "protocol:     %s\n", cleanLine(info.ProtocolVersion))
		fmt.Fprintf(&b, "capabilities: %s\n", strings.Join(capabilityNames(info.Capabilities), ", "))
		if s := strings.TrimSpace(info.Instructions); s != "" {
			b.WriteString("instructions:\n")
			for l := range strings.SplitSeq(s, "\n") {
				b.WriteString(strings.TrimRight("  "+cleanText(l), " ") + "\n")
			}
		}
		_, err := stdout.Write(b.Bytes())
		return err
	}, nil
}

// serverLabel is "name version" of a server, cleaned for a terminal.
func serverLabel(info transport.ServerInfo) string {
	s := cleanLine(info.Implementation.Name)
	if s == "" {
		s = "(unnamed server)"
	}
	if v := cleanLine(info.Implementation.Version); v != "" {
		s += " " + v
	}
	return s
}

// capabilityNames lists what a server declared, with the sub-flags that
// change what a client can do.
func capabilityNames(c mcp.ServerCapabilities) []string {
	raw, err := json.Marshal(c)
	var m map[string]json.RawMessage
	if err != nil || json.Unmarshal(raw, &m) != nil {
		return nil
	}
	var names []string
	for k, v := range m {
		var sub map[string]json.RawMessage
		var flags []string
		if json.Unmarshal(v, &sub) == nil {
			for f, fv := range sub {
				if string(fv) == "true" {
					flags = append(flags, f)
				}
			}
		}
		sort.Strings(flags)
		if len(flags) > 0 {
			k += " (" + strings.Join(flags, ", ") + ")"
		}
		names = append(names, cleanLine(k))
	}
	sort.Strings(names)
	if len(names) == 0 {
		return []string{"(none)"}
	}
	return names
}

// cleanText is cleanLine for one line of a longer text: control characters
// become spaces but the indentation stays.
func cleanText(s string) string {
	indent := len(s) - len(strings.TrimLeft(s, " "))
	return strings.Repeat(" ", indent) + cleanLine(s)
}

// callRaw sends method and prints its result as the protocol has it.
func callRaw(ctx context.Context, t transport.Transport, w io.Writer, method string, params any, format string) error {
	var raw json.RawMessage
	if err := transport.Call(ctx, t, method, params, &raw); err != nil {
		return err
	}
	return writeRaw(w, raw, format)
}

// stringPairs parses KEY=VALUE arguments of a command whose values are
// strings (prompt arguments, completion context).
func stringPairs(cmd string, args []string) (map[string]string, error) {
	if len(args) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(args))
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return nil, usagef("%s wants KEY=VALUE arguments, not %q (see tako help %s)", cmd, truncate(a, 40), cmd)
		}
		m[k] = v
	}
	return m, nil
}

// summary is a title, else a name, and the first line of a description.
func summary(title, name, description string) string {
	head := cleanLine(title)
	if head == "" {
		head = cleanLine(name)
	}
	var line string
	for l := range strings.SplitSeq(description, "\n") {
		if line = cleanLine(l); line != "" {
			break
		}
	}
	switch {
	case head == "":
		return line
	case line == "" || line == head:
		return head
	}
	return head + ": " + line
}
