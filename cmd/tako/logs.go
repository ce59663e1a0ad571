package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/transport"
)

// logLevels are the RFC 5424 severities of MCP logging, lowest first.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// levelRank is the place of l in logLevels, or -1 for no level.
func levelRank(l mcp.LoggingLevel) int { return slices.Index(logLevels, string(l)) }

// showLogs prints the server's log messages (notifications/message) on
// stderr while a command runs with --log-level, one line each:
//
//	server [warning] logger: the message
//
// The level itself was asked for in the handshake (transport.Options
// LogLevel). The returned function stops the printing.
func showLogs(inv *invocation, t transport.Transport, stderr io.Writer) (stop func()) {
	if inv.opts.logLevel == "" {
		return func() {}
	}
	return t.Subscribe(func(n mcp.Notification) {
		if n.Method != "notifications/message" {
			return
		}
		var p mcp.LoggingMessageParams
		if err := json.Unmarshal(n.Params, &p); err != nil {
			return
		}
		// A server may send messages below the level it was asked for.
		if r := levelRank(p.Level); r >= 0 && r < levelRank(inv.opts.logLevel) {
			return
		}
		fmt.Fprintf(stderr, "server %s\n", logText(&p))
	})
}

// logText is a log message on one line: "[level] logger: message".
func logText(p *mcp.LoggingMessageParams) string {
	var text string
	if json.Unmarshal(p.Data, &text) != nil {
		text = string(p.Data)
	}
	logger := ""
	if p.Logger != "" {
		logger = cleanLine(p.Logger) + ": "
	}
	return fmt.Sprintf("[%s] %s%s", cleanLine(string(p.Level)), logger, truncate(cleanLine(text), maxMessage))
}
