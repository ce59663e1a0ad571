package transport

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/tako-mcp/tako/mcp"
)

// Server logs (checklist §6G). The level the client asks for lives on the
// Session and may change at any time: before 2026-07-28 it is sent once with
// logging/setLevel (and again after a renewed legacy session's handshake);
// on 2026-07-28, which has no setLevel, it travels in every request's _meta,
// and a server sends logs only for requests that carry it, on their own
// response streams. Either way the log messages arrive as
// notifications/message, which OnLog decodes.

// SetLogLevel asks the server for log messages at or above level from now
// on. Before 2026-07-28 it sends logging/setLevel, which needs the server's
// logging capability (an error wrapping ErrCapability otherwise, nothing
// sent). On 2026-07-28 it changes the _meta log level of every request
// that follows, and sends nothing; there, "" stops asking for logs. A level
// that is not one of the spec's eight is refused before anything is sent
// (servers answer it with -32602).
//
// It is safe to call concurrently with calls in flight: each request
// carries the level current when it was written.
func (s *Session) SetLogLevel(ctx context.Context, level mcp.LoggingLevel) error {
	if level != "" && !level.IsValid() {
		return fmt.Errorf("mcp: %q is not a logging level", level)
	}
	if s.modern {
		s.levelMu.Lock()
		s.mu.Lock()
		s.logLevel = level
		s.mu.Unlock()
		s.buildMeta()
		s.levelMu.Unlock()
		return nil
	}
	if level == "" {
		return fmt.Errorf("mcp: logging/setLevel has no level that turns logs off; ask for %q to get the fewest", mcp.LevelEmergency)
	}
	if s.ServerInfo().Capabilities.Logging == nil {
		return fmt.Errorf("%w: logging", ErrCapability)
	}
	if err := s.Call(ctx, mcp.MethodLoggingSetLevel, &mcp.SetLevelParams{Level: level}, nil); err != nil {
		return err
	}
	s.mu.Lock()
	s.logLevel = level
	s.mu.Unlock()
	return nil
}

// LogLevel returns the level the session asks the server for, "" for none.
func (s *Session) LogLevel() mcp.LoggingLevel { return s.currentLogLevel() }

func (s *Session) currentLogLevel() mcp.LoggingLevel {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logLevel
}

// OnLog registers fn for the server's log messages (notifications/message),
// decoded. It is Subscribe with a filter: fn runs on the session's event
// goroutine, in order, and must not block for long. A message that does not
// decode is logged to Options.Logger and skipped. The returned function
// removes the registration.
func (s *Session) OnLog(fn func(*mcp.LoggingMessageParams)) (remove func()) {
	return s.Subscribe(func(n mcp.Notification) {
		if n.Method != mcp.NotificationMessage {
			return
		}
		var p mcp.LoggingMessageParams
		if err := json.Unmarshal(n.Params, &p); err != nil {
			s.log.Warn("mcp: bad notifications/message", "err", err)
			return
		}
		fn(&p)
	})
}

// LogToSlog returns a callback for OnLog that forwards each server log
// message to logger, at the slog level of its MCP level
// (mcp.LoggingLevel.SlogLevel: notice joins info, critical and above sit
// above error). A message whose data is a JSON string becomes the record's
// message; any other data is the record's "data" attribute, as raw JSON,
// under the message "mcp server log". The server's logger name, if any, is
// the "logger" attribute.
func LogToSlog(logger *slog.Logger) func(*mcp.LoggingMessageParams) {
	return func(p *mcp.LoggingMessageParams) {
		level := p.Level.SlogLevel()
		ctx := context.Background()
		if !logger.Enabled(ctx, level) {
			return
		}
		msg := "mcp server log"
		attrs := make([]slog.Attr, 0, 2)
		var text string
		if len(p.Data) > 0 && p.Data[0] == '"' && json.Unmarshal(p.Data, &text) == nil {
			msg = text
		} else if len(p.Data) > 0 {
			attrs = append(attrs, slog.Any("data", json.RawMessage(p.Data)))
		}
		if p.Logger != "" {
			attrs = append(attrs, slog.String("logger", p.Logger))
		}
		logger.LogAttrs(ctx, level, msg, attrs...)
	}
}
