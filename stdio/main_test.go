package stdio_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tako-mcp/tako/mcp"
	"github.com/tako-mcp/tako/mcptest"
	"github.com/tako-mcp/tako/stdio"
	"github.com/tako-mcp/tako/transport"
)

// serverEnv makes the test binary, re-executed by a test, act as an MCP
// server on its stdin and stdout instead of running the tests. Its value is
// the mode: "echo" serves until stdin ends; "reference" serves mcptest's
// reference server, and "reference-paged" the same with three tools per
// tools/list page, and "faults" the same with the fault in faultEnv;
// "banner" writes bannerLines to stdout and then serves the reference
// server, "bannerhang" writes them and never answers, "bannerexit" writes
// them and exits with status 3; "stubborn" ignores SIGTERM and keeps
// running after stdin ends; "deaf" never reads stdin; "closestdin" and
// "closestdout" close that pipe and live on; "sleep" just sleeps (a
// grandchild); "termmarker" outlives its stdin and, on SIGTERM, writes the
// file named in markerEnv and exits.
const serverEnv = "TAKO_STDIO_TEST_SERVER"

// markerEnv names the file the "termmarker" server writes when it gets
// SIGTERM.
const markerEnv = "TAKO_STDIO_TEST_MARKER"

// readyNote is the line the "termmarker" server writes to stdout once it
// catches SIGTERM, so that a test signals it no earlier.
const readyNote = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"ready"}}` + "\n"

func TestMain(m *testing.M) {
	if mode := os.Getenv(serverEnv); mode != "" {
		os.Exit(runServer(mode))
	}
	goleak.VerifyTestMain(m)
}

// lingerFor is how long a test server that will not exit by itself stays
// up: far longer than any test, short enough that a bug leaves no process
// behind for long.
const lingerFor = 2 * time.Minute

func runServer(mode string) int {
	switch mode {
	case "sleep", "deaf":
		time.Sleep(lingerFor)
		return 0
	case "stubborn":
		ignoreSIGTERM()
		serve()
		time.Sleep(lingerFor)
		return 0
	case "stubbornreference":
		// A real MCP server that outlives its stdin and ignores SIGTERM.
		ignoreSIGTERM()
		serveReference()
		time.Sleep(lingerFor)
		return 0
	case "silentstubborn":
		// Reads nothing, answers nothing, ignores SIGTERM.
		ignoreSIGTERM()
		time.Sleep(lingerFor)
		return 0
	case "echo":
		serve()
		return 0
	case "banner":
		// A server that logs to stdout before it serves.
		os.Stdout.WriteString(bannerLines)
		return serveReference()
	case "bannerhang":
		// Logs to stdout and never answers: not an MCP server at all,
		// or one whose messages go elsewhere.
		os.Stdout.WriteString(bannerLines)
		time.Sleep(lingerFor)
		return 0
	case "bannerexit":
		// Prints its usage to stdout and exits.
		os.Stdout.WriteString(bannerLines)
		return 3
	case "reference":
		return serveReference()
	case "reference-paged":
		return serveReferencePaged()
	case "faults":
		return serveFaults()
	case "termmarker":
		// Ignores the end of stdin (it never reads it); SIGTERM is what
		// ends it, and it leaves a file behind to say so.
		term := notifySIGTERM()
		os.Stdout.WriteString(readyNote)
		select {
		case <-term:
			if err := os.WriteFile(os.Getenv(markerEnv), []byte("SIGTERM\n"), 0o600); err != nil {
				return 6
			}
			return 0
		case <-time.After(lingerFor):
			return 0
		}
	case "closestdin", "closestdout":
		// Close one pipe, say so on stdout (after closing stdin, before
		// closing stdout), and live on.
		const note = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"closing"}}` + "\n"
		if mode == "closestdin" {
			closeFD(0)
			os.Stdout.WriteString(note)
		} else {
			os.Stdout.WriteString(note)
			closeFD(1)
		}
		time.Sleep(lingerFor)
		return 0
	}
	os.Stderr.WriteString("unknown test server mode " + mode + "\n")
	return 2
}

// serverParams are the parameters of the test server's methods.
type serverParams struct {
	Size   int    `json:"size,omitempty"`   // huge: payload bytes
	IDLast bool   `json:"idLast,omitempty"` // huge: put the id after the payload
	Code   int    `json:"code,omitempty"`   // die: exit status
	Stderr string `json:"stderr,omitempty"` // die, stderr: what to write there
	Name   string `json:"name,omitempty"`   // env: the variable
	Setsid bool   `json:"setsid,omitempty"` // spawn: leave the process group
}

// serve answers requests on stdin and stdout until stdin ends. Methods:
//
//	echo    answers with its params
//	huge    writes a response line of about size bytes, with decoy "id"s
//	junk    writes lines that are not JSON-RPC, then answers {}
//	batch   answers with a batch: its response and a notification
//	die     writes stderr, a last notification, and exits with code
//	env     answers {"value": $name}
//	cwd     answers {"value": working directory}
//	spawn   starts a sleeping grandchild holding stdout, answers {"pid": N}
//	stderr  writes stderr, answers {}
func serve() {
	raw := &mcptest.RawStream{W: os.Stdout}
	conn := stdio.NewStreamConn(os.Stdin, raw, stdio.StreamOptions{})
	ctx := context.Background()
	reply := func(id mcp.ID, result any) {
		m, err := mcp.NewResponse(id, result, nil)
		if err == nil {
			err = conn.Write(ctx, m)
		}
		if err != nil {
			os.Exit(4)
		}
	}
	for {
		msg, err := conn.Read(ctx)
		if err != nil {
			var me *transport.MessageError
			if errors.As(err, &me) {
				continue
			}
			return
		}
		if !msg.IsRequest() {
			continue
		}
		var p serverParams
		_ = json.Unmarshal(msg.Params, &p)
		switch msg.Method {
		case "echo":
			reply(msg.ID, msg.Params)
		case "huge":
			_ = raw.WriteRaw(ctx, hugeLine(msg.ID, p.Size, p.IDLast))
		case "junk":
			_ = raw.WriteRaw(ctx, []byte(junk))
			reply(msg.ID, json.RawMessage(`{}`))
		case "batch":
			line := append([]byte(`[{"jsonrpc":"2.0","id":`), msg.ID.AppendJSON(nil)...)
			line = append(line, `,"result":{"batched":true}},{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"in a batch"}}]`+"\n"...)
			_ = raw.WriteRaw(ctx, line)
		case "die":
			os.Stderr.WriteString(p.Stderr)
			n, _ := mcp.NewNotification("notifications/message", map[string]string{"level": "info", "data": "last words"})
			_ = conn.Write(ctx, n)
			os.Exit(p.Code)
		case "env":
			reply(msg.ID, map[string]string{"value": os.Getenv(p.Name)})
		case "cwd":
			wd, _ := os.Getwd()
			reply(msg.ID, map[string]string{"value": wd})
		case "args":
			reply(msg.ID, map[string][]string{"args": os.Args[1:]})
		case "spawn":
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), serverEnv+"=sleep")
			cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
			cmd.SysProcAttr = spawnAttr(p.Setsid)
			if err := cmd.Start(); err != nil {
				os.Exit(5)
			}
			reply(msg.ID, map[string]int{"pid": cmd.Process.Pid})
		case "stderr":
			os.Stderr.WriteString(p.Stderr)
			reply(msg.ID, json.RawMessage(`{}`))
		}
	}
}

// junk is what the junk method writes: not JSON, blank lines, JSON that is
// not JSON-RPC (with an "id" that must not be taken for one), and a line
// that starts like a batch.
const junk = "this line is not JSON\n" +
	"\n" +
	"   \t\n" +
	`{"level":"info","id":1,"msg":"a log record, not JSON-RPC"}` + "\n" +
	"[INFO] starting up\n"

// bannerLines are the three lines the banner modes write to stdout: a
// coloured log line ending in CRLF, a line with a tab, and a long line with
// a bell in it.
var bannerLines = "\x1b[32mINFO\x1b[0m Listening on http://127.0.0.1:8080\r\n" +
	"WARN\tno config file, using defaults\n" +
	"\a" + strings.Repeat("x", 500) + "\n"

// hugeLine returns a response to id whose result holds a string of size
// bytes. The line carries decoy "id" members inside the result and inside
// the string, and the real id before or after the payload.
func hugeLine(id mcp.ID, size int, idLast bool) []byte {
	var b bytes.Buffer
	b.Grow(size + 200)
	b.WriteString(`{"jsonrpc":"2.0",`)
	if !idLast {
		b.WriteString(`"id":`)
		b.Write(id.AppendJSON(nil))
		b.WriteString(`,`)
	}
	b.WriteString(`"result":{"id":"decoy","content":[{"type":"text","text":"\"id\":99,`)
	for b.Len() < size {
		b.WriteString(`abcdefghij\"\\{[`)
	}
	b.WriteString(`"}],"nested":{"id":98}}`)
	if idLast {
		b.WriteString(`,"id":`)
		b.Write(id.AppendJSON(nil))
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// startServer starts the test binary as a server in the given mode and
// closes it when the test ends.
func startServer(t testing.TB, mode string, opts stdio.Options) *stdio.Conn {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts.Command = exe
	// GORACE: a server built with -race otherwise sleeps 1 s in os.Exit,
	// which would count against the exit-detection figures.
	opts.Env = append(opts.Env, serverEnv+"="+mode, "GORACE=atexit_sleep_ms=0")
	c, err := stdio.Start(context.Background(), &opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// request builds a request or fails the test.
func request(t testing.TB, id mcp.ID, method string, params any) *mcp.Message {
	t.Helper()
	m, err := mcp.NewRequest(id, method, params)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// call writes a request and reads the next message.
func call(t testing.TB, c transport.Conn, id mcp.ID, method string, params any) (*mcp.Message, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Write(ctx, request(t, id, method, params)); err != nil {
		return nil, err
	}
	return c.Read(ctx)
}

// mustCall is call that fails the test on an error or a response to
// another id.
func mustCall(t testing.TB, c transport.Conn, id mcp.ID, method string, params any) *mcp.Message {
	t.Helper()
	m, err := call(t, c, id, method, params)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	if m.ID != id || !m.IsResponse() {
		t.Fatalf("%s: got message %+v, want the response to %s", method, m, id)
	}
	return m
}
