package main

import (
	"errors"
	"fmt"
	"html"
	"io/fs"
	"net/http"
	"os/exec"
	"regexp"
	"strings"

	"github.com/tako-mcp/tako/streamablehttp"
	"github.com/tako-mcp/tako/websocket"
)

// Words for the errors a person meets most, built here once rather than
// wrapped at every layer: the layers' own messages repeat what the stage
// already says ("start x: stdio: start x: fork/exec x: ...").

// startFailure says why a command could not be started, and what to do.
func startFailure(name string, err error) (string, bool) {
	var pe *fs.PathError
	var ee *exec.Error
	switch {
	case errors.As(err, &pe) && errors.Is(pe.Err, fs.ErrNotExist):
		return fmt.Sprintf("%s: no such file (is it installed, and is the path right?)", pe.Path), true
	case errors.As(err, &pe) && errors.Is(pe.Err, fs.ErrPermission):
		return fmt.Sprintf("%s: permission denied (is it executable?)", pe.Path), true
	case errors.As(err, &ee):
		return fmt.Sprintf("%s: %v (is it installed, and on PATH?)", ee.Name, ee.Err), true
	}
	return "", false
}

// httpFailure summarises an unexpected HTTP answer: the status and the
// page's title (or its first line, or the message of a JSON error), never
// the whole page.
func httpFailure(e *streamablehttp.StatusError) string {
	return answerFailure("the server answered", e.Code, e.Body)
}

// answerFailure is what httpFailure and wsHandshakeFailure say: what (the
// request the server answered) and the status, the page's summary when the
// status line does not say it already, and the hint for the status.
func answerFailure(what string, code int, body string) string {
	msg := fmt.Sprintf("%s HTTP %d %s", what, code, http.StatusText(code))
	s := pageSummary(body)
	if s != "" && !strings.Contains(msg, s) {
		msg += " (" + truncate(s, 120) + ")"
	}
	return msg + statusHint(code, s)
}

// statusHint says what to check after an HTTP status that the URL or the
// server's own checks explain.
func statusHint(code int, summary string) string {
	switch {
	case code == http.StatusNotFound, code == http.StatusMethodNotAllowed, code == http.StatusNotImplemented:
		return ": is the URL the server's MCP endpoint (often /mcp)?"
	case code == http.StatusForbidden && strings.Contains(strings.ToLower(summary), "host"):
		// The TypeScript SDK's DNS-rebinding protection, among others:
		// the name in the URL is not one the server allows.
		return ": the server's Host check refuses the name in the URL (use a name it allows, or allow this one in its settings)"
	case code == http.StatusForbidden && strings.Contains(strings.ToLower(summary), "origin"):
		return ": the server's Origin check refuses the request"
	}
	return ""
}

// wsHandshakeFailure summarises a WebSocket opening handshake that got an
// HTTP answer instead of the switch, as httpFailure does for --http.
func wsHandshakeFailure(e *websocket.HandshakeError) string {
	return answerFailure("the server answered the WebSocket handshake with", e.StatusCode, e.Body)
}

// isBearerChallenge reports whether a WWW-Authenticate header asks for an
// OAuth bearer token: a 401 or 403 without one is not about a login.
func isBearerChallenge(h string) bool {
	h = strings.ToLower(strings.TrimSpace(h))
	return strings.HasPrefix(h, "bearer") || strings.HasPrefix(h, "dpop") || strings.Contains(h, ", bearer") || strings.Contains(h, ", dpop")
}

// contentTypeFailure says that a successful HTTP answer was not MCP (a web
// page, a login portal), with the page's title, as httpFailure does for a
// status.
func contentTypeFailure(e *streamablehttp.ContentTypeError) string {
	what := e.ContentType
	if what == "" {
		what = "a body with no Content-Type"
	}
	if s := pageSummary(e.Body); s != "" {
		what += " (" + truncate(s, 80) + ")"
	}
	want := "JSON or an event stream"
	if e.Method == http.MethodGet {
		want = "an event stream"
	}
	return fmt.Sprintf("the server answered %s, not %s: is the URL the server's MCP endpoint (often /mcp)?", what, want)
}

var (
	titleRE = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)
	h1RE    = regexp.MustCompile(`(?is)<h1[^>]*>(.*?)</h1>`)
	tagRE   = regexp.MustCompile(`<[^>]*>`)
)

// pageSummary is the message of a JSON error body, the title of an HTML
// page, or the first line of a body that is neither.
func pageSummary(body string) string {
	if m := jsonErrorMessage(body); m != "" {
		return m
	}
	for _, re := range []*regexp.Regexp{titleRE, h1RE} {
		if m := re.FindStringSubmatch(body); m != nil {
			if s := cleanLine(html.UnescapeString(tagRE.ReplaceAllString(m[1], " "))); s != "" && !strings.EqualFold(s, "error response") {
				return s
			}
		}
	}
	if looksLikeHTML(body) {
		return "" // a page without a telling title: the status says enough
	}
	for l := range strings.SplitSeq(body, "\n") {
		if l = cleanLine(l); l != "" {
			return l
		}
	}
	return ""
}

// looksLikeHTML reports whether body starts like a web page.
func looksLikeHTML(body string) bool {
	head := strings.ToLower(strings.TrimSpace(body[:min(len(body), 512)]))
	return strings.HasPrefix(head, "<!doctype") || strings.HasPrefix(head, "<html") || strings.Contains(head, "<html") || strings.Contains(head, "<head") || strings.Contains(head, "<body")
}

// tellingLine matches the line of a crashed program's stderr that says
// why: Node's "Error: Cannot find module ...", Python's last
// "ModuleNotFoundError: ...", Go's "panic: ...", "fatal: ...".
var tellingLine = regexp.MustCompile(`^(?:[A-Za-z_][\w.]*(?:Error|Exception)|Error|panic|fatal error|fatal|FATAL|error|ERROR)\b[^:]{0,40}:\s*\S`)

// npmError and npmNoise sort npm's lines (npx starts most servers): the
// first error line that says something is the reason, such as "npm error
// 404 Not Found - GET .../a-misspelled-package"; its code, its bare "404"
// lines and the path of its log are not.
var (
	npmError = regexp.MustCompile(`^npm (?:error|ERR!)\s`)
	npmNoise = regexp.MustCompile(`^npm (?:error|ERR!)(?:\s+\d*|\s+(?:code|errno|syscall|path)\s.*|\s+A complete log of this run.*|\s+Log files were not written.*)$`)
)

// tellingStderr picks the most telling of a server's stderr lines: npm's
// first error line that says something, else the last line that looks like
// an error (an exception, a panic), else the last few lines.
func tellingStderr(lines []string) string {
	for _, l := range lines {
		if npmError.MatchString(l) && !npmNoise.MatchString(l) {
			return l
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if tellingLine.MatchString(lines[i]) {
			return lines[i]
		}
	}
	return strings.Join(lines[max(len(lines)-3, 0):], " / ")
}
