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
)

// Words for the errors a person meets most, built here once rather than
// wrapped at every layer: the layers' own messages repeat what the stage
// already says ("start x: stdio: start x: fork/exec x: ...").

// startFailure says why a command could not be started, and what to do.
func startFailure(name string, err error) (string, bool) {
	var pe *fs.PathError
	var ee *exec.Error
	switch {
	case errors.As(err, &ee):
		return fmt.Sprintf("%s: %v (is it installed, and on PATH?)", ee.Name, ee.Err), true
	case errors.As(err, &pe) && errors.Is(pe.Err, fs.ErrNotExist):
		return fmt.Sprintf("%s: no such file (is it installed, and is the path right?)", pe.Path), true
	case errors.As(err, &pe) && errors.Is(pe.Err, fs.ErrPermission):
		return fmt.Sprintf("%s: permission denied (is it executable?)", pe.Path), true
	}
	return "", false
}

// httpFailure summarises an unexpected HTTP answer: the status and the
// page's title (or its first line), never the whole page.
func httpFailure(e *streamablehttp.StatusError) string {
	msg := fmt.Sprintf("the server answered HTTP %d %s", e.Code, http.StatusText(e.Code))
	if s := pageSummary(e.Body); s != "" && !strings.Contains(msg, s) {
		msg += " (" + truncate(s, 80) + ")"
	}
	switch e.Code {
	case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotImplemented:
		msg += ": is the URL the server's MCP endpoint (often /mcp)?"
	}
	return msg
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

// pageSummary is the title of an HTML page, or the first line of a body
// that is not HTML.
func pageSummary(body string) string {
	for _, re := range []*regexp.Regexp{titleRE, h1RE} {
		if m := re.FindStringSubmatch(body); m != nil {
			if s := cleanLine(html.UnescapeString(tagRE.ReplaceAllString(m[1], " "))); s != "" && !strings.EqualFold(s, "error response") {
				return s
			}
		}
	}
	if strings.Contains(strings.ToLower(body[:min(len(body), 200)]), "<html") {
		return ""
	}
	for l := range strings.SplitSeq(body, "\n") {
		if l = cleanLine(l); l != "" {
			return l
		}
	}
	return ""
}

// tellingLine matches the line of a crashed program's stderr that says
// why: Node's "Error: Cannot find module ...", Python's last
// "ModuleNotFoundError: ...", Go's "panic: ...", "fatal: ...".
var tellingLine = regexp.MustCompile(`^(?:[A-Za-z_][\w.]*(?:Error|Exception)|Error|panic|fatal error|fatal|FATAL|error|ERROR)\b[^:]{0,40}:\s*\S`)

// tellingStderr picks the most telling of a server's stderr lines: the
// last that looks like an error, else the last line.
func tellingStderr(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if tellingLine.MatchString(lines[i]) {
			return lines[i]
		}
	}
	return lines[len(lines)-1]
}
