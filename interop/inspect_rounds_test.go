package interop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

var (
	demoOnce  sync.Once
	demoBin   string
	demoBuild error
)

// demoServer builds examples/demo-server (the root module's reference
// tools, speaking both protocol eras) once, into peerBin.
func demoServer(t *testing.T) string {
	t.Helper()
	demoOnce.Do(func() {
		bin := filepath.Join(peerBin, "demo-server")
		build := exec.Command("go", "build", "-o", bin, "./examples/demo-server")
		build.Dir = ".."
		if out, err := build.CombinedOutput(); err != nil {
			demoBuild = errors.New(err.Error() + ": " + string(out))
			return
		}
		demoBin = bin
	})
	if demoBuild != nil {
		t.Fatalf("building examples/demo-server: %v", demoBuild)
	}
	return demoBin
}

// TestInspectRoundTrips: a person at `tako inspect` with a 2026-07-28
// server (examples/demo-server over stdio), whose sampling, roots and
// elicitation come as input_required rounds. The Info page shows the
// revision and a ping's latency; roots edited in the page are what the
// server's roots tool gets; a sampling request is answered in the page
// with the person's text; the log level set on the Logs page makes the
// server send its log line (it sends none unasked); with "Pause at
// input_required" on, a call stops at its input_required result, shown
// with what the server asks for, while its History has that result in the
// call's conversation, until the person lets it go on; the export
// downloaded from the page holds it all.
func TestInspectRoundTrips(t *testing.T) {
	ctx := strictTestContext(t, 3*time.Minute)
	in := startInspector(t, ctx, nil, "--stdio", demoServer(t))
	p := openPage(t, newBrowser(t), in.URL)
	name := serverNames(t, in, ctx)["stdio"]
	pn := panel(name)
	p.waitConnected("the server to connect", name)
	has := func(sel, text string) string { return hasText(name, sel, text) }
	run := func(tool string, args map[string]string) {
		t.Helper()
		p.runTool(name, tool, args)
	}
	result := func(what, text string) {
		t.Helper()
		p.openTab(name, "tools")
		p.waitFor(what, has(`.result[data-state="done"]`, text))
	}

	// Info: the revision and a ping's latency.
	p.openTab(name, "info")
	p.waitFor("the revision", has(`dl.facts`, "2026-07-28"))
	p.click(pn + ` button.ping`)
	p.waitFor("the ping's latency", fmt.Sprintf(`/answered in [0-9.]+ m?s/.test((document.querySelector(%q) || {}).textContent)`, pn+` .latency`))
	p.screenshot("info")

	// Roots edited in the page.
	p.openTab(name, "client")
	p.click(pn + ` button.addroot`)
	p.typeIn(pn+` ol.rootlist li:last-child input[aria-label="Root URI"]`, "file:///tmp/tako-inspect-root")
	p.typeIn(pn+` ol.rootlist li:last-child input[aria-label="Root name"]`, "the test's")
	p.click(pn + ` button.saveroots`)
	p.waitFor("the roots saved", `document.getElementById('status').textContent === 'Roots saved.'`)
	run("roots", nil)
	result("the roots the server got", "file:///tmp/tako-inspect-root")

	// Sampling, answered by the person.
	run("sample", map[string]string{"prompt": "What is six times seven?"})
	p.waitFor("the sampling request", has(`article.req`, "What is six times seven?"))
	p.typeIn(pn+` article.req textarea.answer`, "forty-two, said a person")
	p.screenshot("sampling")
	p.click(pn + ` article.req button.send`)
	result("the sampled answer", "forty-two, said a person")

	// The log level: none asked, no log line; asked for info, the line.
	run("notify", nil)
	result("notify's answer", "ok")
	p.openTab(name, "logs")
	if n := eval[int](p, fmt.Sprintf(`document.querySelectorAll(%q).length`, pn+` .note.log`)); n != 0 {
		t.Fatalf("%d log lines before a level was asked for", n)
	}
	eval[bool](p, fmt.Sprintf(`(() => { const s = document.querySelector(%q); s.focus(); s.value = 'info'; s.dispatchEvent(new Event('change', {bubbles: true})); return true; })()`, pn+` select.loglevel`))
	p.waitFor("the level set", `document.getElementById('status').textContent === 'Log level info.'`)
	run("notify", nil)
	result("notify's answer", "ok")
	p.openTab(name, "logs")
	p.waitFor("the log line", has(`.note.log`, "notify called"))
	p.screenshot("logs")

	// Paused at input_required.
	p.openTab(name, "history")
	p.click(pn + ` input.pause`)
	p.waitFor("the pause on", `document.getElementById('status').textContent.includes('will wait for you')`)
	run("roots", nil)
	p.waitFor("the paused call", has(`article.req.paused li[data-ask]`, "roots/list"))
	p.screenshot("paused")
	p.openTab(name, "tools")
	if eval[bool](p, fmt.Sprintf(`!!document.querySelector(%q)`, pn+` .result[data-state="done"]`)) {
		t.Fatal("the paused call has a result")
	}
	p.openTab(name, "history")
	p.waitFor("the input_required result in the history", fmt.Sprintf(`(() => {
		const rows = [...document.querySelectorAll(%q)];
		const call = rows.filter((r) => r.dataset.method === 'tools/call' && r.classList.contains('request')).pop();
		return call && rows.some((r) => r.dataset.group === call.dataset.group && r.classList.contains('response') && r.classList.contains('in'));
	})()`, pn+` tr.h`))
	seq := eval[string](p, fmt.Sprintf(`[...document.querySelectorAll(%q)].filter((r) => r.dataset.method === 'tools/call' && r.classList.contains('response')).pop().dataset.seq`, pn+` tr.h`))
	p.click(pn + fmt.Sprintf(` tr.h[data-seq=%q] button`, seq))
	p.waitFor("the input_required result's JSON", has(`tr.hbody`, "input_required"))
	p.screenshot("paused history")
	p.openTab(name, "client")
	p.click(pn + ` article.req.paused button.continue`)
	result("the call let go on", "file:///tmp/tako-inspect-root")
	p.openTab(name, "history")
	group := eval[string](p, fmt.Sprintf(`document.querySelector(%q).dataset.group`, pn+fmt.Sprintf(` tr.h[data-seq=%q]`, seq)))
	// The call, its input_required result, the retry, its result.
	if n := eval[int](p, fmt.Sprintf(`[...document.querySelectorAll(%q)].filter((r) => r.dataset.group === %q).length`, pn+` tr.h`, group)); n < 4 {
		t.Errorf("the paused call's conversation has %d messages, want at least its two rounds", n)
	}

	// The session exported from the page.
	dir := t.TempDir()
	wait, cancel := context.WithTimeout(p.tab, pageWait)
	defer cancel()
	downloads := chromedp.Events(wait, browser.DownloadProgress)
	p.do("allow downloads", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: ptrTo(true)})
		return err
	}))
	p.click(`#export`)
	file := ""
	for ev, err := range downloads {
		if err != nil {
			break
		}
		if ev.State == browser.DownloadProgressStateCompleted {
			file = filepath.Join(dir, ev.GUID)
			break
		}
	}
	if file == "" {
		t.Fatalf("no export downloaded within %s", pageWait)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var ex struct {
		Servers []struct{ Name string }
		History []struct{ Message json.RawMessage }
	}
	if err := json.Unmarshal(b, &ex); err != nil || len(ex.Servers) != 1 || !strings.Contains(string(b), "input_required") || !strings.Contains(string(b), "forty-two, said a person") {
		t.Errorf("the export (%d bytes, %v): want the server and the messages, input_required and the sampled answer among them", len(b), err)
	}
}

func ptrTo[T any](v T) *T { return &v }
