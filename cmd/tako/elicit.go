package main

// Answering a server's elicitation/create at the terminal (tako call and
// tako shell, when a person is there to answer).
//
// A form is asked field by field, in the order the server wrote its
// properties, each with its title, description, choices and default; the
// answer is typed by the property's schema and asked again when it does
// not fit. Enter keeps the default (or leaves an optional field out);
// "!decline" and "!cancel" answer the whole form so. A URL elicitation
// shows the URL and waits for Enter, or for the server to report it
// complete (the SDK ends the handler's context then). The SDK applies the
// schema's defaults and validates the answer before it is sent
// (transport/elicit.go) with the same checks.
//
// Each answer is checked against its property's schema as it is typed
// (formats such as email, uri, date and date-time, minimum and maximum,
// lengths, choices), and asked again with what was wrong, the answers
// already given kept: the form is never refused whole at its end.
//
// Only one form is asked at a time: a second request waits for the first.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/tako-mcp/tako/internal/schemacheck"
	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// errRefused is what readLine returns when the person interrupted the
// prompt (Ctrl-C, end of input): the form is cancelled.
var errRefused = errors.New("the prompt was interrupted")

// elicitPrompter asks a server's elicitations at a terminal. readLine
// shows its prompt and returns the line typed, without its newline; it
// returns when ctx ends, with ctx's error, where it can.
type elicitPrompter struct {
	mu       sync.Mutex
	out      io.Writer
	readLine func(ctx context.Context, prompt string) (string, error)
}

// handlers returns the session handlers that answer through p.
func (p *elicitPrompter) handlers() transport.Handlers {
	return transport.Handlers{Elicitation: p.elicit, ElicitationURL: true}
}

func (p *elicitPrompter) elicit(ctx context.Context, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ctx.Err() != nil {
		// The request ended while another form had the terminal.
		return nil, context.Cause(ctx)
	}
	if req.Mode == "url" {
		return p.url(ctx, req)
	}
	fields, err := formFields(req.RequestedSchema)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(p.out, "The server asks: %s\n(Enter keeps the default or leaves the field out; !decline or !cancel answers the whole form.)\n", oneLine(req.Message))
	content := map[string]any{}
	for _, f := range fields {
		for {
			line, err := p.readLine(ctx, f.prompt())
			if err != nil {
				return p.refused(ctx, err)
			}
			line = strings.TrimSpace(line)
			if res := refusal(line); res != nil {
				return res, nil
			}
			if line == "" {
				if f.required && f.prop.Default == nil {
					fmt.Fprintf(p.out, "  %s is required.\n", oneLine(f.name))
					continue
				}
				break // the SDK fills in the default
			}
			v, err := f.parse(line)
			if err == nil {
				err = f.check(v)
			}
			if err != nil {
				// Asked again; the answers before it are kept.
				fmt.Fprintf(p.out, "  %s\n", oneLine(err.Error()))
				continue
			}
			content[f.name] = v
			break
		}
	}
	return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: content}, nil
}

// url shows a URL elicitation and waits for the person, or for the server
// to report it complete.
func (p *elicitPrompter) url(ctx context.Context, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	fmt.Fprintf(p.out, "The server asks you to open this page: %s\n%s\n", oneLine(req.URL), oneLine(req.Message))
	line, err := p.readLine(ctx, "Press Enter when done (!decline, !cancel): ")
	switch {
	case err != nil && errors.Is(context.Cause(ctx), transport.ErrElicitationComplete):
		fmt.Fprintln(p.out, "\nThe server reports it done.")
		return &mcp.ElicitResult{Action: mcp.ElicitAccept}, nil
	case err != nil:
		return p.refused(ctx, err)
	}
	if res := refusal(strings.TrimSpace(line)); res != nil {
		return res, nil
	}
	return &mcp.ElicitResult{Action: mcp.ElicitAccept}, nil
}

// refusal is the answer a typed !decline or !cancel gives, nil for any
// other line.
func refusal(line string) *mcp.ElicitResult {
	switch line {
	case "!decline":
		return &mcp.ElicitResult{Action: mcp.ElicitDecline}
	case "!cancel":
		return &mcp.ElicitResult{Action: mcp.ElicitCancel}
	}
	return nil
}

// refused answers a form whose prompt could not be read: cancelled when
// the person interrupted it, the context's error when the request ended.
func (p *elicitPrompter) refused(ctx context.Context, err error) (*mcp.ElicitResult, error) {
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	fmt.Fprintln(p.out)
	if errors.Is(err, errRefused) {
		return &mcp.ElicitResult{Action: mcp.ElicitCancel}, nil
	}
	return nil, err
}

// formField is one property of a requested form.
type formField struct {
	name string
	// prop is the property as the server wrote it: its title, type,
	// format, default and limits for the prompt, and the keywords an
	// answer is checked against.
	prop     formProperty
	required bool
	choices  []choice // an enum, or the items of a multi-select
	multi    bool     // an array of choices
	// schema checks one answer as the engine will check the whole form
	// (formats asserted), so that a wrong answer is asked again at once;
	// nil when the property does not compile (the engine then refuses
	// the form before it is shown).
	schema *schemacheck.Schema
}

// choice is one value of an enum and the label a person sees.
type choice struct {
	value string
	label string
}

// formProperty is a property of a requestedSchema as the spec allows it.
type formProperty struct {
	Type             string          `json:"type"`
	Title            string          `json:"title"`
	Description      string          `json:"description"`
	Format           string          `json:"format"`
	Default          json.RawMessage `json:"default"`
	Enum             []string        `json:"enum"`
	EnumNames        []string        `json:"enumNames"`
	OneOf            []titledConst   `json:"oneOf"`
	Minimum          *json.Number    `json:"minimum"`
	Maximum          *json.Number    `json:"maximum"`
	ExclusiveMinimum *json.Number    `json:"exclusiveMinimum"`
	ExclusiveMaximum *json.Number    `json:"exclusiveMaximum"`
	Pattern          string          `json:"pattern"`
	MinLength        *int            `json:"minLength"`
	MaxLength        *int            `json:"maxLength"`
	MinItems         *int            `json:"minItems"`
	MaxItems         *int            `json:"maxItems"`
	Items            *struct {
		Enum  []string      `json:"enum"`
		AnyOf []titledConst `json:"anyOf"`
	} `json:"items"`
}

type titledConst struct {
	Const string `json:"const"`
	Title string `json:"title"`
}

// formFields reads a requestedSchema's properties in the order the server
// wrote them.
func formFields(schema json.RawMessage) ([]formField, error) {
	var s struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("the requested form: %w", err)
	}
	var fields []formField
	if len(s.Properties) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(s.Properties))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("the requested form: properties is not an object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("the requested form: %w", err)
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		var prop formProperty
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("the requested form: property %q: %w", name, err)
		}
		if err := json.Unmarshal(raw, &prop); err != nil {
			return nil, fmt.Errorf("the requested form: property %q: %w", name, err)
		}
		f := formField{name: name, prop: prop}
		f.schema, _ = schemacheck.CompileAsserting(raw)
		for _, r := range s.Required {
			f.required = f.required || r == name
		}
		switch {
		case len(prop.OneOf) > 0:
			for _, c := range prop.OneOf {
				f.choices = append(f.choices, choice{c.Const, c.Title})
			}
		case len(prop.Enum) > 0:
			for i, v := range prop.Enum {
				label := ""
				if i < len(prop.EnumNames) {
					label = prop.EnumNames[i]
				}
				f.choices = append(f.choices, choice{v, label})
			}
		case prop.Items != nil:
			f.multi = true
			for _, c := range prop.Items.AnyOf {
				f.choices = append(f.choices, choice{c.Const, c.Title})
			}
			for _, v := range prop.Items.Enum {
				f.choices = append(f.choices, choice{v, ""})
			}
		}
		fields = append(fields, f)
	}
	return fields, nil
}

// prompt is the line that asks for f, with its choices listed first.
func (f *formField) prompt() string {
	var b strings.Builder
	label := oneLine(f.name)
	if f.prop.Title != "" && f.prop.Title != f.name {
		label += " (" + oneLine(f.prop.Title) + ")"
	}
	if f.prop.Description != "" {
		label += ": " + oneLine(f.prop.Description)
	}
	if len(f.choices) > 0 {
		b.WriteString("  " + label + "\n")
		for i, c := range f.choices {
			fmt.Fprintf(&b, "    %d. %s", i+1, oneLine(c.value))
			if c.label != "" {
				fmt.Fprintf(&b, " (%s)", oneLine(c.label))
			}
			b.WriteString("\n")
		}
		label = "  choose"
		if f.multi {
			label += " one or more, separated by commas"
		}
	} else {
		label = "  " + label
	}
	b.WriteString(label)
	var notes []string
	if f.prop.Type != "" && f.prop.Type != "string" && !f.multi {
		notes = append(notes, oneLine(f.prop.Type))
	}
	if f.prop.Format != "" {
		notes = append(notes, oneLine(f.prop.Format))
	}
	for _, l := range f.prop.limits() {
		notes = append(notes, oneLine(l))
	}
	if f.required {
		notes = append(notes, "required")
	}
	if f.prop.Default != nil {
		notes = append(notes, "default "+oneLine(string(f.prop.Default)))
	}
	if len(notes) > 0 {
		b.WriteString(" [" + strings.Join(notes, ", ") + "]")
	}
	b.WriteString(": ")
	return b.String()
}

// parse turns a typed answer into the field's JSON type.
func (f *formField) parse(s string) (any, error) {
	if len(f.choices) > 0 {
		if !f.multi {
			return f.pick(s)
		}
		var out []string
		for _, part := range strings.Split(s, ",") {
			v, err := f.pick(strings.TrimSpace(part))
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	switch f.prop.Type {
	case "integer":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s wants a whole number, not %q", f.name, s)
		}
		return n, nil
	case "number":
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%s wants a number, not %q", f.name, s)
		}
		return x, nil
	case "boolean":
		switch strings.ToLower(s) {
		case "y", "yes", "true", "1":
			return true, nil
		case "n", "no", "false", "0":
			return false, nil
		}
		return nil, fmt.Errorf("%s wants yes or no, not %q", f.name, s)
	}
	return s, nil
}

// pick is one choice, by its number in the list or by its value.
func (f *formField) pick(s string) (string, error) {
	if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(f.choices) {
		return f.choices[n-1].value, nil
	}
	for _, c := range f.choices {
		if c.value == s || strings.EqualFold(c.label, s) {
			return c.value, nil
		}
	}
	return "", fmt.Errorf("%s wants one of the choices listed (a number or a value), not %q", f.name, s)
}

// oneLine is a server's text as the terminal shows it: on one line, cut
// at maxShown runes, and with control characters made spaces, so that a
// server cannot write escape sequences to the person's terminal (move the
// cursor over a prompt, set the clipboard).
func oneLine(s string) string {
	return truncate(cleanLine(s), maxShown)
}

// maxShown bounds each piece of a server's text in a prompt.
const maxShown = 500

// stdinLines reads lines from r on a goroutine of its own, started at the
// first prompt, so that a prompt can give up when its request ends; it
// lives as long as r (the process's stdin).
type stdinLines struct {
	r     io.Reader
	out   io.Writer
	once  sync.Once
	lines chan string
	err   error // set before lines is closed
}

func (s *stdinLines) readLine(ctx context.Context, prompt string) (string, error) {
	s.once.Do(func() {
		s.lines = make(chan string)
		go func() {
			sc := bufio.NewScanner(s.r)
			for sc.Scan() {
				s.lines <- sc.Text()
			}
			s.err = sc.Err()
			close(s.lines)
		}()
	})
	io.WriteString(s.out, prompt)
	select {
	case line, ok := <-s.lines:
		if !ok {
			if s.err != nil {
				return "", s.err
			}
			return "", errRefused
		}
		return line, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
