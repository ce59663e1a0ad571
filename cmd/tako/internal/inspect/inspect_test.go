package inspect

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tako-mcp/tako/mcp"
)

// TestGateRefusesAndStartsNothing: SECURITY.md's rules for tako inspect,
// request by request. Without the token (or with a wrong one), with a
// foreign Origin or "null", with a rebinding Host, a request is refused
// (401, 403) and no server starts, not even when it asks for one; a POST
// that is not JSON is refused (415); a command given with the token does
// not run until it is confirmed, a confirmation is good once and for that
// command only.
func TestGateRefusesAndStartsNothing(t *testing.T) {
	starts := filepath.Join(t.TempDir(), "starts")
	r := start(t, &Config{})
	srv := testServer(t, starts)
	form := connectRequest{Kind: "stdio", Command: srv.Command, Env: srv.Env}
	token := "Authorization: Bearer " + r.ins.token
	_, port, _ := strings.Cut(strings.TrimPrefix(r.base, "http://"), ":")
	for _, tc := range []struct {
		name string
		hdr  []string
		want int
	}{
		{"no token", nil, http.StatusUnauthorized},
		{"a wrong token", []string{"Authorization: Bearer AAAAAAAAAAAAAAAAAAAAAAAAAA"}, http.StatusUnauthorized},
		{"the token in a foreign page's request", []string{token, "Origin: https://evil.example"}, http.StatusForbidden},
		{"the token from a sandboxed frame", []string{token, "Origin: null"}, http.StatusForbidden},
		{"a rebound Host", []string{token, "Host: evil.example:" + port}, http.StatusForbidden},
		{"a rebound Host that looks local", []string{token, "Host: 127.0.0.1.evil.example:" + port}, http.StatusForbidden},
	} {
		for _, path := range []string{"/api/servers", "/api/confirm", "/api/registry"} {
			code, body := r.req(t, "POST", path, form, tc.hdr...)
			if code != tc.want {
				t.Errorf("%s: POST %s: HTTP %d %s, want %d", tc.name, path, code, body, tc.want)
			}
		}
		for _, path := range []string{"/", "/api/state", "/api/events", "/assets/js/core.js", "/api/export"} {
			if code, _ := r.req(t, "GET", path, nil, tc.hdr...); code != tc.want {
				t.Errorf("%s: GET %s: HTTP %d, want %d", tc.name, path, code, tc.want)
			}
		}
	}
	if code, _ := r.req(t, "POST", "/api/servers", nil, token, "Content-Type: application/x-www-form-urlencoded"); code != http.StatusUnsupportedMediaType {
		t.Errorf("a form POST: HTTP %d, want 415", code)
	}
	if code, _ := r.req(t, "GET", "/?token="+r.ins.token, nil, "Origin: "+r.base); code != http.StatusOK {
		t.Errorf("the page with its token: HTTP %d", code)
	}

	// With the token: the command comes back to be confirmed, and
	// nothing runs yet.
	var asked struct{ Confirm confirm }
	r.api(t, "POST", "/api/servers", form, &asked)
	if asked.Confirm.ID == "" || len(asked.Confirm.Argv) == 0 || asked.Confirm.Argv[0] != srv.Command {
		t.Fatalf("POST /api/servers with a command answered %+v, want a confirmation of that command", asked)
	}
	for _, id := range []string{"", "not-the-id", strings.ToLower(asked.Confirm.ID)} {
		if code, _ := r.req(t, "POST", "/api/confirm", map[string]string{"id": id}, token); code != http.StatusNotFound {
			t.Errorf("confirming with %q: HTTP %d, want 404", id, code)
		}
	}
	if n := countStarts(starts); n != 0 {
		t.Fatalf("%d servers started before the confirmation", n)
	}
	ev := r.follow(t)
	var sum summary
	r.api(t, "POST", "/api/confirm", map[string]string{"id": asked.Confirm.ID}, &sum)
	ev.connected(t, r, sum.ID)
	if n := countStarts(starts); n != 1 {
		t.Errorf("%d servers started after the confirmation, want 1", n)
	}
	if code, _ := r.req(t, "POST", "/api/confirm", map[string]string{"id": asked.Confirm.ID}, token); code != http.StatusNotFound {
		t.Errorf("a second confirmation: HTTP %d, want 404", code)
	}
	if n := countStarts(starts); n != 1 {
		t.Errorf("%d servers started after a second confirmation, want 1", n)
	}
	// A cancelled confirmation runs nothing either.
	r.api(t, "POST", "/api/servers", form, &asked)
	r.api(t, "POST", "/api/confirm", map[string]any{"id": asked.Confirm.ID, "cancel": true}, nil)
	if code, _ := r.req(t, "POST", "/api/confirm", map[string]string{"id": asked.Confirm.ID}, token); code != http.StatusNotFound {
		t.Errorf("confirming a cancelled command: HTTP %d, want 404", code)
	}
	if n := countStarts(starts); n != 1 {
		t.Errorf("%d servers started in all, want 1", n)
	}
}

// TestCheckAddr: the page is served to this machine only, unless asked.
func TestCheckAddr(t *testing.T) {
	for addr, ok := range map[string]bool{"127.0.0.1:0": true, "[::1]:8080": true, "localhost:1": true, "0.0.0.0:0": false, ":8080": false, "192.168.1.2:0": false, "nonsense": false} {
		if err := checkAddr(addr, false); (err == nil) != ok {
			t.Errorf("checkAddr(%q): %v", addr, err)
		}
	}
	if err := checkAddr("0.0.0.0:0", true); err != nil {
		t.Errorf("with AllowRemote: %v", err)
	}
}

// TestToolCallAndHistory: a server of the command line connects at once;
// its tools list; a call of echo runs and its result comes as an event;
// the history has its request and response, in order, grouped, with the
// time between them, and each message's JSON; the page's security headers
// come with every answer.
func TestToolCallAndHistory(t *testing.T) {
	r := start(t, &Config{Servers: []Target{{Server: testServer(t, "")}}})
	ev := r.follow(t)
	ev.connected(t, r, "s1")
	var tools struct{ Tools []mcp.Tool }
	r.api(t, "GET", "/api/servers/s1/tools", nil, &tools)
	if len(tools.Tools) < 10 {
		t.Fatalf("%d tools listed", len(tools.Tools))
	}
	var started run
	r.api(t, "POST", "/api/servers/s1/call", map[string]any{"name": "echo", "arguments": map[string]string{"message": "hi inspector"}}, &started)
	done := ev.runEnded(t, started.ID)
	if done.State != "done" || textOf(t, done) != "hi inspector" {
		t.Fatalf("echo ended %s %q: %s", done.State, textOf(t, done), done.Error)
	}
	var h struct{ Entries []entry }
	r.api(t, "GET", "/api/history?server=s1", nil, &h)
	var req, resp *entry
	for i := range h.Entries {
		e := &h.Entries[i]
		if e.Method == mcp.MethodToolsCall && e.Name == "echo" && e.Kind == "request" {
			req = e
		}
		if req != nil && e.Kind == "response" && e.ID == req.ID && e.Dir == dirIn {
			resp = e
		}
	}
	if req == nil || resp == nil {
		t.Fatalf("the history lacks the echo call's request or response: %+v", h.Entries)
	}
	if resp.Group != req.Seq || req.Group != req.Seq || resp.Seq <= req.Seq || resp.Ms <= 0 || resp.Method != mcp.MethodToolsCall {
		t.Errorf("request %+v and response %+v: want the response after, in the request's group, timed", *req, *resp)
	}
	var msg struct{ Message json.RawMessage }
	r.api(t, "GET", "/api/history/"+strconv.FormatInt(resp.Seq, 10), nil, &msg)
	if !strings.Contains(string(msg.Message), "hi inspector") {
		t.Errorf("the response's JSON: %s", msg.Message)
	}
	// The session's export has the messages themselves.
	code, export := r.req(t, "GET", "/api/export?token="+r.ins.token, nil)
	var ex struct {
		Servers []summary
		History []struct {
			Seq     int64
			Message json.RawMessage
		}
	}
	if err := json.Unmarshal(export, &ex); code != 200 || err != nil || len(ex.Servers) != 1 || len(ex.History) < 2 {
		t.Fatalf("the export: HTTP %d, %v, %d servers, %d messages", code, err, len(ex.Servers), len(ex.History))
	}
	if !strings.Contains(string(export), "hi inspector") {
		t.Error("the export lacks the call's messages")
	}
	// The page's headers.
	req2, _ := http.NewRequest("GET", r.base+"/?token="+r.ins.token, nil)
	res, err := testClient.Do(req2)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	for k, want := range map[string]string{"Content-Security-Policy": "script-src 'self'", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff"} {
		if got := res.Header.Get(k); !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
}

// TestProgressAndCancel: a call with progress reports it as events; a
// cancel ends the run as cancelled, and the server is told
// (notifications/cancelled, in the call's group in the history).
func TestProgressAndCancel(t *testing.T) {
	r := start(t, &Config{Servers: []Target{{Server: testServer(t, "")}}})
	ev := r.follow(t)
	ev.connected(t, r, "s1")
	var started run
	r.api(t, "POST", "/api/servers/s1/call", map[string]any{"name": "sleep", "arguments": map[string]int{"ms": 60_000}}, &started)
	ev.wait(t, "progress", func(d json.RawMessage) bool { return strings.Contains(string(d), started.ID) })
	r.api(t, "POST", "/api/runs/"+started.ID+"/cancel", struct{}{}, nil)
	ev.wait(t, "message", func(d json.RawMessage) bool {
		var e entry
		json.Unmarshal(d, &e)
		return e.Method == mcp.NotificationCancelled && e.Dir == dirOut && e.Label == "tools/call sleep"
	})
	if done := ev.runEnded(t, started.ID); done.State != "cancelled" {
		t.Fatalf("the cancelled call ended %s", done.State)
	}
}

// TestServerRequestsAnswered: an elicitation and a sampling request come
// to the page as events and wait there; the page's answers reach the
// server; roots edited in the page are what roots/list answers; a bad
// root is refused.
func TestServerRequestsAnswered(t *testing.T) {
	r := start(t, &Config{Servers: []Target{{Server: testServer(t, "")}}})
	ev := r.follow(t)
	ev.connected(t, r, "s1")

	var started run
	r.api(t, "POST", "/api/servers/s1/call", map[string]any{"name": "elicit", "arguments": map[string]string{"message": "who?"}}, &started)
	var sr serverRequest
	json.Unmarshal(ev.wait(t, "request", nil), &sr)
	if sr.Kind != "elicitation" || !strings.Contains(string(sr.Params), "who?") {
		t.Fatalf("the request: %s %s", sr.Kind, sr.Params)
	}
	r.api(t, "POST", "/api/servers/s1/requests/"+sr.ID, answer{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil)
	if done := ev.runEnded(t, started.ID); !strings.Contains(textOf(t, done), "Ada") {
		t.Errorf("elicit returned %q", textOf(t, done))
	}
	if code, _ := r.req(t, "POST", "/api/servers/s1/requests/"+sr.ID, answer{Action: "accept"}, "Authorization: Bearer "+r.ins.token); code != http.StatusNotFound {
		t.Errorf("answering twice: HTTP %d, want 404", code)
	}

	r.api(t, "POST", "/api/servers/s1/call", map[string]any{"name": "sample", "arguments": map[string]string{"prompt": "2+2?"}}, &started)
	json.Unmarshal(ev.wait(t, "request", nil), &sr)
	if sr.Kind != "sampling" {
		t.Fatalf("the request: %s", sr.Kind)
	}
	r.api(t, "POST", "/api/servers/s1/requests/"+sr.ID, answer{Action: "approve", Text: "four"}, nil)
	if done := ev.runEnded(t, started.ID); textOf(t, done) != "four" {
		t.Errorf("sample returned %q", textOf(t, done))
	}

	r.api(t, "PUT", "/api/servers/s1/roots", []mcp.Root{{URI: "file:///tmp/inspected", Name: "tmp"}}, nil)
	r.api(t, "POST", "/api/servers/s1/call", map[string]any{"name": "roots"}, &started)
	if done := ev.runEnded(t, started.ID); !strings.Contains(textOf(t, done), "file:///tmp/inspected") {
		t.Errorf("roots returned %q", textOf(t, done))
	}
	if code, _ := r.req(t, "PUT", "/api/servers/s1/roots", []mcp.Root{{URI: "https://example.com"}}, "Authorization: Bearer "+r.ins.token); code != http.StatusBadRequest {
		t.Errorf("a root that is no file:// URI: HTTP %d, want 400", code)
	}
}

// TestBigResultIsCut: a large result reaches the page as its start (the
// text cut, its length said) and is downloadable whole. (interop's
// browser test has the 16 MiB one; this is the unit's, 4 MiB, which -race
// makes slow enough.)
func TestBigResultIsCut(t *testing.T) {
	r := start(t, &Config{Servers: []Target{{Server: testServer(t, "")}}})
	ev := r.follow(t)
	ev.connected(t, r, "s1")
	var started run
	r.api(t, "POST", "/api/servers/s1/call", map[string]any{"name": "big", "arguments": map[string]int{"bytes": 4 << 20}}, &started)
	done := ev.runEnded(t, started.ID)
	if done.State != "done" || !done.Cut || len(done.View) > 2*maxTextShown || !strings.Contains(string(done.View), `"textCut":4194304`) {
		t.Fatalf("the run: %s cut %v, a view of %d bytes", done.State, done.Cut, len(done.View))
	}
	code, b := r.req(t, "GET", "/api/runs/"+done.ID+"/download?token="+r.ins.token, nil)
	if code != 200 || len(b) < 4<<20 {
		t.Fatalf("the download: HTTP %d, %d bytes", code, len(b))
	}
}

// TestFramesAreSingleUse: a frame's document loads once, in a frame only,
// without the token, with a policy that sandboxes it and lets it reach
// nothing; HTML content runs no script, an App runs its own.
func TestFramesAreSingleUse(t *testing.T) {
	r := start(t, &Config{})
	var f struct{ URL string }
	r.api(t, "POST", "/api/frames", map[string]string{"html": "<p>hi</p>"}, &f)
	if code, _ := r.req(t, "GET", f.URL, nil, "Sec-Fetch-Dest: document"); code != http.StatusForbidden {
		t.Errorf("the frame as a page: HTTP %d, want 403", code)
	}
	req, _ := http.NewRequest("GET", r.base+f.URL, nil)
	req.Header.Set("Sec-Fetch-Dest", "iframe")
	res, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	csp := res.Header.Get("Content-Security-Policy")
	if res.StatusCode != 200 || !strings.HasPrefix(csp, "sandbox;") || !strings.Contains(csp, "script-src 'none'") || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("the frame: HTTP %d, CSP %q", res.StatusCode, csp)
	}
	if code, _ := r.req(t, "GET", f.URL, nil, "Sec-Fetch-Dest: iframe"); code != http.StatusNotFound {
		t.Errorf("the frame a second time: HTTP %d, want 404", code)
	}
	if code, _ := r.req(t, "GET", f.URL, nil, "Host: evil.example"); code != http.StatusForbidden {
		t.Errorf("a frame with a rebound Host: HTTP %d, want 403", code)
	}
	if !strings.Contains(frameCSP(true), "sandbox allow-scripts;") || !strings.Contains(frameCSP(true), "script-src 'unsafe-inline'") || strings.Contains(frameCSP(true), "connect-src") {
		t.Errorf("an App's policy: %q", frameCSP(true))
	}
}

// TestShutdownEndsEverything: ending Run ends the servers (their
// processes), every event stream and every goroutine (goleak in TestMain).
func TestShutdownEndsEverything(t *testing.T) {
	r := start(t, &Config{Servers: []Target{{Server: testServer(t, "")}}})
	ev := r.follow(t)
	ev.connected(t, r, "s1")
	s := r.ins.server("s1")
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	r.ins.shutdown()
	select {
	case <-sess.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the session outlived the shutdown")
	}
	select {
	case <-ev.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the event stream outlived the shutdown")
	}
}

// TestRunOpensThePage: Run prints the page's URL with its token and hands
// it to the browser (Config.Open); with NoBrowser it only prints it; it
// refuses to listen beyond loopback before anything starts.
func TestRunOpensThePage(t *testing.T) {
	for _, noBrowser := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		var out strings.Builder
		opened := make(chan string, 1)
		done := make(chan error, 1)
		printed := make(chan struct{})
		go func() {
			done <- Run(ctx, &Config{NoBrowser: noBrowser, Out: writerFunc(func(b []byte) (int, error) {
				out.Write(b)
				select {
				case <-printed:
				default:
					close(printed)
				}
				return len(b), nil
			}), Open: func(u string) error { opened <- u; return nil }})
		}()
		select {
		case <-printed:
		case err := <-done:
			t.Fatalf("Run: %v", err)
		case <-time.After(10 * time.Second):
			t.Fatal("no URL printed")
		}
		var got string
		if !noBrowser {
			select {
			case got = <-opened:
			case <-time.After(10 * time.Second):
				t.Fatal("the browser was not opened")
			}
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		line := out.String()
		if !strings.HasPrefix(line, "tako inspect: http://127.0.0.1:") || !strings.Contains(line, "/?token=") {
			t.Errorf("printed %q", line)
		}
		if noBrowser && len(opened) > 0 || !noBrowser && !strings.Contains(line, got) {
			t.Errorf("NoBrowser %v: opened %q, printed %q", noBrowser, got, line)
		}
	}
	if err := Run(context.Background(), &Config{Addr: "0.0.0.0:0", NoBrowser: true}); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("Run on 0.0.0.0: %v", err)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// TestPauseAtInputRequired: with the pause asked for, a call whose server
// answers input_required is held there: the page is told what the server
// asks for (a "paused" request with the inputRequests), the history
// already has the input_required result in the call's group, and the call
// goes on only once the person lets it (then the roots edited meanwhile
// are what it gets), or ends when the person stops it. Without the pause
// the same call runs through.
func TestPauseAtInputRequired(t *testing.T) {
	r := start(t, &Config{Servers: []Target{{Server: testServer(t, "")}}})
	ev := r.follow(t)
	ev.connected(t, r, "s1")

	var sum summary
	r.api(t, "POST", "/api/servers/s1/pause", map[string]bool{"on": true}, &sum)
	if !sum.Pause || !sum.Features["pause"] {
		t.Fatalf("after asking for the pause: pause %v, feature %v", sum.Pause, sum.Features["pause"])
	}
	var started run
	r.api(t, "POST", "/api/servers/s1/call", map[string]any{"name": "roots"}, &started)
	var sr serverRequest
	json.Unmarshal(ev.wait(t, "request", nil), &sr)
	var p paused
	json.Unmarshal(sr.Params, &p)
	if sr.Kind != "paused" || p.Method != mcp.MethodToolsCall || !strings.Contains(string(p.Result), `"input_required"`) || !strings.Contains(string(p.Result), mcp.MethodRootsList) {
		t.Fatalf("the paused request: %s %+v", sr.Kind, p)
	}
	var h struct{ Entries []entry }
	r.api(t, "GET", "/api/history?server=s1", nil, &h)
	var call, ir *entry
	for i := range h.Entries {
		e := &h.Entries[i]
		if e.Kind == "request" && e.Name == "roots" {
			call = e
		}
		if call != nil && e.Kind == "response" && e.Group == call.Group && e.ID == p.ID {
			ir = e
		}
	}
	if call == nil || ir == nil {
		t.Fatalf("the history lacks the call or its input_required result in its group: %+v", h.Entries)
	}
	var now run
	r.api(t, "GET", "/api/runs/"+started.ID, nil, &now)
	if now.State != "running" {
		t.Fatalf("the paused call is %s, want running", now.State)
	}
	// The person edits the roots while the call waits, then lets it go on.
	r.api(t, "PUT", "/api/servers/s1/roots", []mcp.Root{{URI: "file:///tmp/paused", Name: "p"}}, nil)
	r.api(t, "POST", "/api/servers/s1/requests/"+sr.ID, answer{Action: "continue"}, nil)
	if done := ev.runEnded(t, started.ID); done.State != "done" || !strings.Contains(textOf(t, done), "file:///tmp/paused") {
		t.Fatalf("the call let go on ended %s: %q %s", done.State, textOf(t, done), done.Error)
	}

	// Stopped there, the call ends with the person's reason.
	r.api(t, "POST", "/api/servers/s1/call", map[string]any{"name": "roots"}, &started)
	json.Unmarshal(ev.wait(t, "request", nil), &sr)
	if code, _ := r.req(t, "POST", "/api/servers/s1/requests/"+sr.ID, answer{Action: "accept"}, "Authorization: Bearer "+r.ins.token); code != http.StatusBadRequest {
		t.Errorf("answering a pause with accept: HTTP %d, want 400", code)
	}
	r.api(t, "POST", "/api/servers/s1/requests/"+sr.ID, answer{Action: "stop"}, nil)
	if done := ev.runEnded(t, started.ID); done.State == "done" || !strings.Contains(done.Error, "stopped at input_required") {
		t.Fatalf("the stopped call ended %s: %s", done.State, done.Error)
	}

	// Without the pause, nothing waits.
	r.api(t, "POST", "/api/servers/s1/pause", map[string]bool{"on": false}, &sum)
	r.api(t, "POST", "/api/servers/s1/call", map[string]any{"name": "roots"}, &started)
	if done := ev.runEnded(t, started.ID); done.State != "done" {
		t.Fatalf("the call without a pause ended %s: %s", done.State, done.Error)
	}
}
