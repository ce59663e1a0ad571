package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/orchestrator"
)

// agentPrinter shows a run of tako agent: the model's text on stdout as it
// streams, everything else on stderr, one line an event:
//
//	→ echo {"message":"hi"}               a tool call starts
//	… trigger-long-running-operation 2/5   its progress
//	everything [info] logger: text          a server's log message
//	⇄ sampling for everything: tool_use lookup   a server asked the model
//	← echo ok (3ms): Echo: hi               the call's result
//
// The agent serialises its events, so the printer needs no lock.
type agentPrinter struct {
	stdout, stderr io.Writer
	// midLine is set while the text on stdout does not end a line: a
	// turn's text is ended before the tool calls that follow it.
	midLine bool
	// streamed is set once any text reached stdout in the last turn.
	streamed bool
	err      error
}

func (p *agentPrinter) event(e orchestrator.Event) {
	switch e.Kind {
	case orchestrator.EventTurnStart:
		p.streamed = false
	case orchestrator.EventText:
		p.text(e.Text)
	case orchestrator.EventTurnEnd:
		if !p.streamed && e.Response != nil && e.Response.Text != "" {
			// A provider that did not stream still shows its text.
			p.text(e.Response.Text)
		}
		p.endLine()
	case orchestrator.EventToolStart:
		fmt.Fprintf(p.stderr, "→ %s %s\n", e.Call.Name, truncate(cleanLine(compactJSON(e.Call.Arguments)), 200))
	case orchestrator.EventToolProgress:
		fmt.Fprintf(p.stderr, "… %s %s\n", e.Call.Name, progressText(*e.Progress))
	case orchestrator.EventToolLog:
		fmt.Fprintf(p.stderr, "%s %s\n", e.Server, logText(e.Log))
	case orchestrator.EventSampling:
		fmt.Fprintf(p.stderr, "⇄ sampling for %s: %s\n", e.Server, samplingSummary(e.Sampling, e.Response))
	case orchestrator.EventToolEnd:
		status := "ok"
		if e.Result.IsError {
			status = "error"
		}
		fmt.Fprintf(p.stderr, "← %s %s (%s): %s\n", e.Call.Name, status, e.Duration.Round(time.Millisecond),
			truncate(cleanLine(orchestrator.ResultText(e.Result)), 200))
	}
}

// text writes a piece of the model's text to stdout.
func (p *agentPrinter) text(s string) {
	if s == "" || p.err != nil {
		return
	}
	p.streamed = true
	if _, err := io.WriteString(p.stdout, s); err != nil {
		p.err = err
		return
	}
	p.midLine = !strings.HasSuffix(s, "\n")
}

func (p *agentPrinter) endLine() {
	if p.midLine && p.err == nil {
		_, p.err = io.WriteString(p.stdout, "\n")
	}
	p.midLine = false
}

// finish ends the output of a run (whose final answer was printed as it
// streamed) and reports a failed write to stdout.
func (p *agentPrinter) finish() error {
	p.endLine()
	return p.err
}

// samplingSummary says in a few words what a server asked the model and
// what it answered.
func samplingSummary(req *mcp.CreateMessageParams, resp *orchestrator.Response) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d message(s)", len(req.Messages))
	if n := len(req.Tools); n > 0 {
		fmt.Fprintf(&b, ", %d tool(s) offered", n)
	}
	b.WriteString(" → ")
	if resp == nil {
		b.WriteString("no answer")
		return b.String()
	}
	if len(resp.ToolCalls) > 0 {
		names := make([]string, len(resp.ToolCalls))
		for i, c := range resp.ToolCalls {
			names[i] = c.Name
		}
		b.WriteString("tool_use " + strings.Join(names, ", "))
		return b.String()
	}
	b.WriteString(truncate(cleanLine(resp.Text), 120))
	return b.String()
}
