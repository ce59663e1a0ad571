package interop

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestInspectRefusals: SECURITY.md's rules for tako inspect, against the
// built command. A request without the token, one from a foreign Origin
// and one with a rebinding Host are refused, and no server starts, not
// even for a request that asks for one and confirms it. Then the same
// from a real browser: a page of another site (served on 127.0.0.2) that
// knows the token and tries a JSON fetch, a simple text/plain POST, a form
// POST and an image GET; and the inspector's own URL loaded under a
// rebound name (Chromium resolves evil.example to 127.0.0.1). The
// inspector's log names each refusal, and the starts file stays empty.
// Last, the page itself, with the token, does start the server, once
// confirmed: the refusals are the gate's, not the harness's.
func TestInspectRefusals(t *testing.T) {
	ctx := strictTestContext(t, 2*time.Minute)
	node, args := everything(t)
	dir := t.TempDir()
	starts := filepath.Join(dir, "starts")
	script := filepath.Join(dir, "server.sh")
	os.WriteFile(script, []byte(fmt.Sprintf("#!/bin/sh\necho start >> '%s'\nexec '%s' '%s' stdio\n", starts, node, args[0])), 0o755)
	countStarts := func() int {
		b, _ := os.ReadFile(starts)
		return strings.Count(string(b), "start")
	}
	in := startInspector(t, ctx, nil)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(in.Base, "http://"))

	post := func(path string, body string, hdr ...string) int {
		req, _ := http.NewRequestWithContext(ctx, "POST", in.Base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for _, h := range hdr {
			k, v, _ := strings.Cut(h, ": ")
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	bearer := "Authorization: Bearer " + in.Token
	for _, tc := range []struct {
		name string
		hdr  []string
		want int
	}{
		{"no token", nil, 401},
		{"a foreign Origin", []string{bearer, "Origin: https://evil.example"}, 403},
		{"a rebinding Host", []string{bearer, "Host: evil.example:" + port}, 403},
	} {
		if got := post("/api/servers", `{"kind":"stdio","command":"`+script+`"}`, tc.hdr...); got != tc.want {
			t.Errorf("%s: HTTP %d, want %d", tc.name, got, tc.want)
		}
		if got := post("/api/confirm", `{"id":"x"}`, tc.hdr...); got != tc.want {
			t.Errorf("%s, confirm: HTTP %d, want %d", tc.name, got, tc.want)
		}
	}

	// A page of another site, in Chromium, that knows the token.
	evil := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>evil</title><iframe name=sink></iframe><form id=f method=POST target=sink action="%[1]s/api/servers" enctype="text/plain"><input name='{"kind":"stdio","command":"%[3]s","x":"' value='"}'></form>
<img src="%[1]s/api/state?token=%[2]s">
<script>
const body = JSON.stringify({kind: "stdio", command: %[4]q});
const tries = [
  fetch("%[1]s/api/servers", {method: "POST", headers: {"Content-Type": "application/json", "Authorization": "Bearer %[2]s"}, body}).then(r => "json " + r.status, e => "json refused"),
  fetch("%[1]s/api/servers?token=%[2]s", {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body}).then(r => "simple sent", e => "simple refused"),
];
Promise.all(tries).then(r => { document.title = "done " + r.join(", "); });
</script>`, in.Base, in.Token, script, script)
	})}
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatalf("listening on 127.0.0.2: %v", err)
	}
	go evil.Serve(ln)
	t.Cleanup(func() { evil.Close() })
	browser := newBrowser(t, chromedp.Flag("host-resolver-rules", "MAP evil.example 127.0.0.1"))
	bctx, cancel := context.WithTimeout(browser, pageWait)
	defer cancel()
	if err := chromedp.Do(bctx, chromedp.Navigate("http://"+ln.Addr().String()+"/")); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(bctx, chromedp.Poll[string](`document.title.startsWith("done") && document.title`))
	if err != nil {
		t.Fatalf("the foreign page: %v", err)
	}
	if !strings.Contains(title, "json refused") {
		t.Errorf("the foreign page's fetch: %q, want it refused (no CORS for other origins)", title)
	}
	if err := chromedp.Do(bctx, chromedp.Evaluate[chromedp.Void](`document.querySelector("iframe").onload = () => { window.posted = true }; document.getElementById("f").submit()`)); err != nil {
		t.Fatal(err)
	}
	// The form posts into a frame, so that its navigation neither aborts
	// the next one nor is aborted by it; the frame's load says it is done.
	if _, err := chromedp.Run(bctx, chromedp.Poll[bool](`window.posted === true`)); err != nil {
		t.Fatalf("the form's post: %v", err)
	}
	resp, err := chromedp.RunResponse(bctx, chromedp.Navigate("http://evil.example:"+port+"/?token="+in.Token))
	if err != nil {
		t.Fatalf("the rebound name: %v", err)
	}
	if resp.Status != 403 {
		t.Errorf("the inspector under a rebound name answered %d, want 403", resp.Status)
	}
	// Each refusal is in the inspector's log; nothing started.
	if n := countStarts(); n != 0 {
		t.Fatalf("%d servers started for refused requests", n)
	}
	for _, want := range []string{"does not carry the right token", "another origin", "does not name this machine"} {
		if !strings.Contains(in.stderr.String(), want) {
			t.Errorf("the inspector's log lacks %q:\n%s", want, in.stderr)
		}
	}

	// The inspector's own page, with the token, starts it once confirmed.
	p := openPage(t, browser, in.URL)
	p.typeIn(`#empty form.connect input[name="command"]`, script)
	p.click(`#empty form.connect button[type="submit"]`)
	p.waitFor("the confirmation", `document.getElementById('confirm').open && document.getElementById('confirm').innerText.includes(`+js(script)+`)`)
	if n := countStarts(); n != 0 {
		t.Fatalf("%d servers started before the confirmation", n)
	}
	p.screenshot("confirm")
	p.click(`#confirm-run`)
	p.waitFor("the server to connect", `(document.querySelector('section.panel .pstate') || {}).dataset?.state === 'connected'`)
	if n := countStarts(); n != 1 {
		t.Errorf("%d servers started after the confirmation, want 1", n)
	}
}
