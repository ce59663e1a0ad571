package streamablehttp

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/tako-mcp/tako/transport"
)

// maxErrorBody bounds how much of an error response's body is read and kept.
const maxErrorBody = 4096

// StatusError is an HTTP answer that is neither success nor something the
// protocol gives a meaning to (a 500 with an HTML page, a 502 from a proxy).
// It carries the status so that a program can tell a broken gateway from a
// refused request.
type StatusError struct {
	// Code is the HTTP status code.
	Code int
	// Body is the start of the response body (at most a few KiB), for
	// diagnostics.
	Body string
	// Method is the MCP method of the message that got this answer, or the
	// HTTP method (GET, DELETE) for a stream or the session's end.
	Method string
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("mcp http: %s: %d %s", e.Method, e.Code, http.StatusText(e.Code))
	if b := strings.TrimSpace(e.Body); b != "" {
		if len(b) > 200 {
			b = b[:200] + "..."
		}
		msg += ": " + b
	}
	return msg
}

// AuthError is a 401 or 403 that the Auth hooks did not resolve. It wraps
// transport.ErrAuthRequired.
type AuthError struct {
	StatusError
	// WWWAuthenticate is the challenge the server sent, if any.
	WWWAuthenticate string
	// Cause is the error Options.Auth's HandleUnauthorized returned, if it ran and
	// failed (for example the auth package's step-up limit).
	Cause error
}

func (e *AuthError) Error() string {
	if e.Cause != nil {
		return e.StatusError.Error() + ": " + e.Cause.Error()
	}
	return e.StatusError.Error()
}

// Unwrap makes errors.Is(err, transport.ErrAuthRequired) hold, and
// errors.Is and errors.As reach Cause.
func (e *AuthError) Unwrap() []error {
	if e.Cause != nil {
		return []error{transport.ErrAuthRequired, e.Cause}
	}
	return []error{transport.ErrAuthRequired}
}

// ContentTypeError is a successful HTTP answer whose body is neither JSON
// nor an event stream: a web page, a login portal or a proxy's notice where
// the MCP endpoint was expected. It wraps transport.ErrNotMCP, so Connect
// reports it at once instead of trying another era, or waiting out a
// timeout for an answer that will never come.
type ContentTypeError struct {
	// Code is the HTTP status code (2xx).
	Code int
	// ContentType is the media type the server gave, "" if none.
	ContentType string
	// Body is the start of the body (at most a few KiB), for diagnostics.
	Body string
	// Method is the MCP method of the message that got this answer, or GET
	// for a stream.
	Method string
}

func (e *ContentTypeError) Error() string {
	what := e.ContentType
	if what == "" {
		what = "a body with no Content-Type"
	}
	want := "JSON or an event stream"
	if e.Method == http.MethodGet {
		want = "an event stream"
	}
	return fmt.Sprintf("mcp http: %s: the server answered %s, not %s: is this the MCP endpoint?", e.Method, what, want)
}

// Unwrap returns transport.ErrNotMCP.
func (e *ContentTypeError) Unwrap() error { return transport.ErrNotMCP }
