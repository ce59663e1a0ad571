package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// helperEnv, set in the environment of the test binary, makes it a small
// MCP server on stdio instead of running tests (see TestMain). Its value is
// the mode. The end-to-end tests start it through tako's own --env flag, so
// every test that reaches it also shows that --env reaches the child.
const helperEnv = "TAKO_CLI_TEST_HELPER"

// helperStartsEnv, set to a file name, makes the helper append a line with
// its pid to that file as it starts, so that a test can count the servers
// a bridge started (startsIn).
const helperStartsEnv = "TAKO_CLI_TEST_STARTS"

// recordStart appends this process's pid to file; one short O_APPEND write
// per process, so concurrent starts do not mix their lines.
func recordStart(file string) {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Fprintf(os.Stderr, "helper: %v\n", err)
		os.Exit(5)
	}
	fmt.Fprintf(f, "%d\n", os.Getpid())
	f.Close()
}

// The helper's tools/list pages, written out by hand so that the tests can
// tell whether --json keeps every byte: unusual key order, whitespace inside
// the objects, a field no revision defines, escapes a re-encoder would
// rewrite.
const (
	helperTool1 = `{"name":"env","description":"Returns an environment variable.\nSecond line.","inputSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"x-vendor":{"z":1,"a":2}}}`
	helperTool2 = `{ "inputSchema" : { "$schema":"https://json-schema.org/draft/2020-12/schema", "type":"object", "additionalProperties":false }, "name":"content", "title":"All content types \u00e9\u2028", "annotations":{"readOnlyHint":true}, "futureField":[1,2.50,"x"] }`
	helperTool3 = `{"name":"hang","description":"Never answers.","inputSchema":{"type":"object"},"annotations":{"destructiveHint":false,"idempotentHint":true,"openWorldHint":true}}`
	helperTool4 = `{"name":"die","description":"Exits with status 7.","inputSchema":{"type":"object"}}`
	// helperTool5 answers a JSON-RPC error worded as the TypeScript SDK
	// words them ("MCP error -32602: ..."); code is required and has a
	// default, as Playwright MCP's schemas have.
	helperTool5 = `{"name":"rpcerror","description":"Answers a JSON-RPC error.","inputSchema":{"type":"object","properties":{"message":{"type":"string"},"code":{"type":"integer","default":-32602},"repeat":{"type":"integer","default":1}},"required":["message","code"]}}`

	helperPage1 = `{"tools":[` + helperTool1 + `,` + helperTool2 + `],"nextCursor":"page 2"}`
	helperPage2 = `{"tools":[` + helperTool3 + `,` + helperTool4 + `,` + helperTool5 + `]}`

	// helperContent is the result of the "content" tool: one block of
	// every kind, and structured content.
	helperContent = `{"content":[{"type":"text","text":"first"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},{"type":"audio","data":"AAAAAA==","mimeType":"audio/wav"},{"type":"resource_link","uri":"file:///tmp/report.txt","name":"report"},{"type":"resource","resource":{"uri":"mem://note","mimeType":"text/plain","text":"embedded note"}},{"type":"resource","resource":{"uri":"mem://bin","blob":"AAEC"}}],"structuredContent":{"ok":true},"x-extra":{"kept":true}}`

	// helperUsage is what a program that is not an MCP server prints on
	// stdout: lines in colour, with a tab.
	helperUsage = "\x1b[1mUsage:\x1b[0m helper [--port N]\n\t--port N\tlisten on port N\n"

	// helperEscapes is text, as JSON, that would style the terminal, set
	// its title, move the cursor and overwrite a line, were it written
	// as is: what some servers' results carry.
	helperEscapes = `"\u001b[2mdim\u001b[0m plain\u001b]0;pwned\u0007 bell\u001b[2J\rback\r\nnext\u0008\u009b31m"`

	helperDieStderr  = "helper: fatal: dying on purpose"
	helperHangStderr = "helper: hang: the call arrived"
)

// npm404 is what npx writes on stderr for a misspelled package (the
// registry's host replaced): the line that says what went wrong comes
// second, and the last one only points to a log file.
var npm404 = []string{
	"npm error code E404",
	"npm error 404 Not Found - GET https://registry.example/@modelcontextprotocol%2fserver-everythin",
	"npm error 404",
	"npm error 404  The requested resource '@modelcontextprotocol/server-everythin@*' could not be found or you do not have permission to access it.",
	"npm error 404",
	"npm error 404 Note that you can also install from a",
	"npm error 404 tarball, folder, http url, or git url.",
	"npm error A complete log of this run can be found in: /root/.npm/_logs/2026-12-01T21_47_23_757Z-debug-0.log",
}

// helperMain runs the helper server in the given mode and returns the exit
// status. Modes: "server" serves the tools above; "resources" serves them
// and resources too; "notifier" answers each resources/subscribe with a
// log message, an update of the resource and a change of its tools; "die-at-start" writes a
// few lines on stderr and exits with status 4 before reading anything;
// "npm-404" writes what npx writes for a misspelled package and exits
// with status 1; "usage-on-stdout" writes its usage (helperUsage) on stdout and exits with
// status 2; "logs-on-stdout" writes the same lines and then answers
// nothing; "browser" is no server but a $BROWSER (helperBrowser).
func helperMain(mode string) int {
	if f := os.Getenv(helperStartsEnv); f != "" {
		recordStart(f)
	}
	switch mode {
	case "browser":
		return helperBrowser(os.Args[1:])
	case "die-at-start":
		fmt.Fprintln(os.Stderr, "helper: starting")
		fmt.Fprintln(os.Stderr, "helper: cannot open /etc/helper.conf: no such file or directory")
		return 4
	case "npm-404":
		for _, l := range npm404 {
			fmt.Fprintln(os.Stderr, l)
		}
		return 1
	case "usage-on-stdout":
		os.Stdout.WriteString(helperUsage)
		return 2
	case "logs-on-stdout":
		os.Stdout.WriteString(helperUsage)
		io.Copy(io.Discard, os.Stdin)
		return 0
	case "server", "resources", "notifier":
	case "stubborn":
		// The server, which outlives its stdin and ignores SIGTERM.
		signal.Ignore(syscall.SIGTERM)
		defer time.Sleep(10 * time.Minute)
	default:
		fmt.Fprintf(os.Stderr, "helper: unknown mode %q\n", mode)
		return 2
	}

	var mu sync.Mutex
	changed := false // "notifier" mode: the tools changed
	send := func(line string) {
		mu.Lock()
		defer mu.Unlock()
		os.Stdout.WriteString(line + "\n")
	}
	reply := func(id json.RawMessage, result string) {
		send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + `}`)
	}
	fail := func(id json.RawMessage, code int, msg string) {
		b, _ := json.Marshal(msg)
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, id, code, b))
	}

	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64*1024), 16<<20)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string          `json:"protocolVersion"`
				Cursor          *string         `json:"cursor"`
				Name            string          `json:"name"`
				Arguments       json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintf(os.Stderr, "helper: bad line %q: %v\n", in.Text(), err)
			continue
		}
		if req.ID == nil {
			continue // a notification: initialized, cancelled
		}
		switch p := req.Params; req.Method {
		case "initialize":
			v := p.ProtocolVersion
			switch v {
			case "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05":
			default:
				v = "2025-11-25"
			}
			caps := `{"tools":{}}`
			switch mode {
			case "resources":
				caps = `{"tools":{},"resources":{}}`
			case "notifier":
				caps = `{"tools":{"listChanged":true},"resources":{"subscribe":true},"logging":{}}`
			}
			reply(req.ID, `{"protocolVersion":"`+v+`","capabilities":`+caps+`,"serverInfo":{"name":"helper","version":"1.0.0"}}`)
		case "ping":
			reply(req.ID, `{}`)
		case "resources/list":
			// "resources" mode declares resources, lists one, and answers
			// resources/templates/list with -32601 (the default below),
			// as servers that have no templates do.
			reply(req.ID, `{"resources":[{"uri":"mem://escapes","name":"escapes","mimeType":"text/plain"}]}`)
		case "resources/subscribe":
			reply(req.ID, `{}`)
			var sub struct {
				Params struct {
					URI string `json:"uri"`
				} `json:"params"`
			}
			json.Unmarshal(in.Bytes(), &sub)
			b, _ := json.Marshal(sub.Params.URI)
			send(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"helper","data":"hello from the helper"}}`)
			send(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":` + string(b) + `}}`)
			// Then the tools change: one is added (see tools/list), the
			// others are gone.
			changed = true
			send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
		case "resources/read":
			reply(req.ID, `{"contents":[{"uri":"mem://escapes","mimeType":"text/plain","text":`+helperEscapes+`}]}`)
		case "tools/list":
			switch {
			case changed && p.Cursor == nil:
				reply(req.ID, `{"tools":[`+helperTool1+`,{"name":"added","inputSchema":{"type":"object"}}]}`)
			case p.Cursor == nil:
				reply(req.ID, helperPage1)
			case *p.Cursor == "page 2":
				reply(req.ID, helperPage2)
			default:
				fail(req.ID, -32602, "invalid cursor")
			}
		case "tools/call":
			switch p.Name {
			case "env":
				var a struct{ Name string }
				if err := json.Unmarshal(p.Arguments, &a); err != nil || a.Name == "" {
					reply(req.ID, `{"content":[{"type":"text","text":"env wants {\"name\":...}"}],"isError":true}`)
					continue
				}
				v, ok := os.LookupEnv(a.Name)
				if !ok {
					v = "(unset)"
				}
				b, _ := json.Marshal(v)
				reply(req.ID, `{"content":[{"type":"text","text":`+string(b)+`}]}`)
			case "content":
				reply(req.ID, helperContent)
			case "hang":
				// No answer; the client's timeout ends the call, and
				// closing stdin ends the loop.
				fmt.Fprintln(os.Stderr, helperHangStderr)
			case "die":
				fmt.Fprintln(os.Stderr, helperDieStderr)
				return 7
			case "rpcerror":
				a := struct {
					Message string
					Code    *int
					Repeat  int
				}{Repeat: 1}
				_ = json.Unmarshal(p.Arguments, &a)
				code := -32602 // the schema's default, which the server assumes
				if a.Code != nil {
					code = *a.Code
				}
				fail(req.ID, code, fmt.Sprintf("MCP error %d: %s", code, strings.Repeat(a.Message, max(a.Repeat, 1))))
			default:
				fail(req.ID, -32602, "Unknown tool: "+p.Name)
			}
		default:
			// server/discover among others: a legacy server does not
			// know it, and says so.
			fail(req.ID, -32601, "Method not found: "+req.Method)
		}
	}
	return 0
}

// helperCommand is the --stdio value that starts the test binary as the
// helper server. -test.run=^$ keeps it from running the tests should the
// helper variable fail to reach it: it then exits at once and the test
// fails on a closed connection instead of recursing.
func helperCommand(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return shellQuote(exe) + " '-test.run=^$'"
}

// helperBrowser is a browser that only loads the URL it is given (the
// last argument) and follows the redirects, as `curl -sSL` would, so that
// the login tests need nothing installed. It exits 0 once the last page
// has loaded, 1 if one failed to.
func helperBrowser(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "browser: no URL")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args[len(args)-1], nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "browser:", err)
		return 1
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, "browser:", err)
		return 1
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		fmt.Fprintln(os.Stderr, "browser:", err)
		return 1
	}
	return 0
}
