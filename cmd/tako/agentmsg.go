package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/tako-mcp/tako/dial"
	"github.com/tako-mcp/tako/orchestrator/anthropic"
	"github.com/tako-mcp/tako/orchestrator/openai"
	"github.com/tako-mcp/tako/registry"
)

// explainAgent words an agent failure for a person, as explain does for
// the other commands: a tool name clash says how to avoid it, the model's
// API is named as such with what to check (never its error page), and a
// server that could not be started or reached is explained as tako tools
// would explain it. running says that the servers were connected and the
// model was being asked.
func explainAgent(ctx context.Context, a *agentInvocation, running bool, err error) error {
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &failure{msg: "agent: timed out (see --timeout)", err: err}
	case ctx.Err() != nil:
		return &failure{msg: "agent: interrupted", err: err}
	}
	var (
		f  *failure
		ce *registry.ClashError
	)
	switch {
	case errors.As(err, &f):
		return err
	case errors.As(err, &ce):
		return &failure{msg: clashMessage(ce), err: err}
	}
	if msg, ok := providerFailure(&a.providerFlags, err); ok {
		return &failure{msg: "agent: " + msg, err: err}
	}
	if running {
		if why, _ := netReason(err); why != "" {
			return &failure{msg: "agent: cannot reach the model's API" + apiURL(err) + ": " + why + " (is it running, and is --base-url right?)", err: err}
		}
	}
	if parts := serverFailures(ctx, a, err); len(parts) > 0 {
		return &failure{msg: "agent: " + strings.Join(parts, "; "), err: err}
	}
	return &failure{msg: "agent: " + strings.TrimPrefix(err.Error(), "orchestrator: "), err: err}
}

// clashMessage says which tools two servers share and how to keep both.
func clashMessage(ce *registry.ClashError) string {
	names := ce.Names
	if len(names) == 0 {
		names = ce.Twice
	}
	shown := names[:min(len(names), 3)]
	list := strings.Join(shown, ", ")
	if more := len(names) - len(shown); more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	if len(ce.Names) == 0 {
		return fmt.Sprintf("agent: server %s lists the tools %s twice", ce.Server, list)
	}
	servers := make([]string, 0, len(ce.Owners)+1)
	for _, o := range ce.Owners {
		if q, ok := strings.CutPrefix(o, "server "); ok {
			if name, err := strconv.Unquote(q); err == nil {
				o = name
			}
		}
		servers = append(servers, o)
	}
	servers = append(servers, ce.Server)
	return fmt.Sprintf("agent: servers %s have tools of the same names (%s): give --prefix to name them SERVER__TOOL",
		strings.Join(servers, " and "), list)
}

// providerFailure words an error answer of the model's API: its status,
// its message or page title, and what to check.
func providerFailure(a *providerFlags, err error) (string, bool) {
	var (
		oe *openai.APIError
		ae *anthropic.APIError
	)
	var code int
	var message string
	switch {
	case errors.As(err, &oe):
		code, message = oe.StatusCode, oe.Message
	case errors.As(err, &ae):
		code, message = ae.StatusCode, ae.Message
	default:
		return "", false
	}
	msg := fmt.Sprintf("the model's API answered HTTP %d %s", code, http.StatusText(code))
	if s := pageSummary(message); s != "" && !strings.Contains(msg, s) {
		msg += " (" + truncate(s, 160) + ")"
	}
	switch code {
	case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotImplemented:
		msg += ": is --base-url the API's root (often ending in /v1)?"
	case http.StatusUnauthorized, http.StatusForbidden:
		v := "OPENAI_API_KEY"
		if a.provider == "anthropic" {
			v = "ANTHROPIC_API_KEY"
		}
		if a.apiKeyEnv != "" {
			v = a.apiKeyEnv
		}
		msg += ": is the key in $" + v + " right?"
	}
	return msg, true
}

// apiURL is " at URL" for the request a network error names, else "".
func apiURL(err error) string {
	if msg, ok := netFailure(err, ""); ok {
		if rest, ok := strings.CutPrefix(msg, "cannot reach "); ok {
			if u, _, ok := strings.Cut(rest, ": "); ok {
				return " at " + u
			}
		}
	}
	return ""
}

// serverFailures explains the failures of the servers the agent could not
// connect, each as "server NAME: why", from orchestrator.New's errors
// ("orchestrator: server "NAME": ...", several joined).
func serverFailures(ctx context.Context, a *agentInvocation, err error) []string {
	var parts []string
	var walk func(e error)
	walk = func(e error) {
		if de, ok := e.(*dial.Error); ok {
			parts = append(parts, "server "+de.Server+": "+explain(ctx, ctx, a.timeout, "connect", de).Error())
			return
		}
		if rest, ok := strings.CutPrefix(e.Error(), "server "); ok {
			if q, qerr := strconv.QuotedPrefix(rest); qerr == nil && strings.HasPrefix(rest[len(q):], ": ") {
				name, _ := strconv.Unquote(q)
				if inner := errors.Unwrap(e); inner != nil {
					parts = append(parts, "server "+name+": "+explain(ctx, ctx, a.timeout, "connect", inner).Error())
					return
				}
			}
		}
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				walk(x)
			}
		case interface{ Unwrap() error }:
			if x := u.Unwrap(); x != nil {
				walk(x)
			}
		}
	}
	walk(err)
	return parts
}
