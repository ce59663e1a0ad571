package mcp

import "log/slog"

// Logging levels, the RFC 5424 severities in increasing order.
const (
	LevelDebug     LoggingLevel = "debug"
	LevelInfo      LoggingLevel = "info"
	LevelNotice    LoggingLevel = "notice"
	LevelWarning   LoggingLevel = "warning"
	LevelError     LoggingLevel = "error"
	LevelCritical  LoggingLevel = "critical"
	LevelAlert     LoggingLevel = "alert"
	LevelEmergency LoggingLevel = "emergency"
)

// Severity returns l's rank, 0 for debug up to 7 for emergency, so that
// levels compare ("at or above"); -1 if l is not a level. It is the reverse
// of RFC 5424's numbering, where 0 is the most severe.
func (l LoggingLevel) Severity() int {
	switch l {
	case LevelDebug:
		return 0
	case LevelInfo:
		return 1
	case LevelNotice:
		return 2
	case LevelWarning:
		return 3
	case LevelError:
		return 4
	case LevelCritical:
		return 5
	case LevelAlert:
		return 6
	case LevelEmergency:
		return 7
	}
	return -1
}

// IsValid reports whether l is one of the eight levels. A 2026-07-28 server
// answers an invalid _meta log level with -32602, so check before sending.
func (l LoggingLevel) IsValid() bool { return l.Severity() >= 0 }

// SlogLevel maps l onto log/slog's scale, for forwarding a server's
// notifications/message to a slog.Logger: notice joins info, and critical,
// alert and emergency sit above error in steps of one. An invalid level maps
// to slog.LevelInfo.
func (l LoggingLevel) SlogLevel() slog.Level {
	switch l {
	case LevelDebug:
		return slog.LevelDebug
	case LevelInfo, LevelNotice:
		return slog.LevelInfo
	case LevelWarning:
		return slog.LevelWarn
	case LevelError:
		return slog.LevelError
	case LevelCritical:
		return slog.LevelError + 1
	case LevelAlert:
		return slog.LevelError + 2
	case LevelEmergency:
		return slog.LevelError + 3
	}
	return slog.LevelInfo
}
