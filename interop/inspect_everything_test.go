package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"strings"
	"testing"
	"time"
)

// TestInspectEverything: a person at `tako inspect` with the reference
// server twice, side by side, over stdio and over Streamable HTTP. On each:
// the panel connects; the tools page lists the tools; the echo form is
// filled and run and the result shows; the long-running operation shows
// its progress and is cancelled; a resource is read, subscribed to, and an
// update arrives; an elicitation form is answered in the page; the
// server's log messages and notifications arrive; the history shows the
// call grouped with its messages, expands to its JSON, and copies it as a
// tako command. A screenshot of each page is kept (TAKO_ARTIFACTS).
func TestInspectEverything(t *testing.T) {
	ctx := strictTestContext(t, 3*time.Minute)
	stdio := everythingStdio(t)
	httpURL := everythingHTTP(t, "streamableHttp")
	in := startInspector(t, ctx, nil, "--stdio", stdio, "--http", httpURL)
	p := openPage(t, newBrowser(t), in.URL)
	u, _ := url.Parse(httpURL)
	names := []string{"server-everything", "localhost-" + u.Port()}
	for _, name := range names {
		p.waitConnected(name+" to connect", name)
	}
	if n := eval[int](p, `document.querySelectorAll('section.panel:not(.empty)').length`); n != 2 {
		t.Fatalf("%d panels side by side, want 2", n)
	}
	t.Run("keyboard", func(t *testing.T) {
		p.t = t
		// The tabs are a tablist: the arrow keys move between them.
		p.openTab(names[0], "tools")
		p.do("press the right arrow", chromedp.Steps(chromedp.Focus(chromedp.CSS(panel(names[0])+` [role=tab][data-tab="tools"]`)), chromedp.KeyEvent(kb.ArrowRight)))
		p.waitFor("the next tab", fmt.Sprintf(`document.activeElement.dataset.tab === 'info' && !!document.querySelector(%q)`, panel(names[0])+` [role=tabpanel][data-page="info"]`))
	})
	defer t.Run("labels", func(t *testing.T) {
		p.t = t
		// Every control a person can reach has a name a screen reader says.
		unlabelled := eval[[]string](p, `[...document.querySelectorAll('input, select, textarea, button')].filter((e) => e.offsetParent !== null)
			.filter((e) => !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !(e.tagName === 'BUTTON' && e.textContent.trim()))
			.map((e) => e.outerHTML.slice(0, 120))`)
		if len(unlabelled) > 0 {
			t.Errorf("controls without a label:\n\t%s", strings.Join(unlabelled, "\n\t"))
		}
	})
	for i, name := range names {
		t.Run(strings.SplitN(name, "-", 2)[0], func(t *testing.T) {
			p.t = t
			pn := panel(name)
			first := i == 0

			// Tools: list, form, run echo, see the result.
			p.openTab(name, "tools")
			p.waitFor("the tool list", fmt.Sprintf(`!!document.querySelector(%q)`, pn+` [data-tool="echo"]`))
			p.click(pn + ` [data-tool="echo"]`)
			p.typeIn(pn+` [data-path="message"]`, "hello from the page")
			if first {
				p.screenshot("tools")
			}
			p.click(pn + ` button.run`)
			p.waitFor("the echo result", fmt.Sprintf(`(document.querySelector(%q) || {}).innerText?.includes('Echo: hello from the page')`, pn+` .result[data-state="done"]`))

			// A long call: progress, then cancel.
			p.click(pn + ` [data-tool="trigger-long-running-operation"]`)
			p.typeIn(pn+` [data-path="duration"]`, "20")
			p.typeIn(pn+` [data-path="steps"]`, "20")
			p.click(pn + ` button.run`)
			p.waitFor("progress", fmt.Sprintf(`(() => { const b = document.querySelector(%q); return b && !b.hidden && b.value >= 1; })()`, pn+` progress.prog`))
			if first {
				p.screenshot("progress")
			}
			p.click(pn + ` button.cancel`)
			p.waitFor("the call cancelled", fmt.Sprintf(`!!document.querySelector(%q)`, pn+` .result[data-state="cancelled"]`))

			// Resources: read, subscribe, see an update.
			const uri = "demo://resource/static/document/features.md"
			p.openTab(name, "resources")
			p.click(pn + fmt.Sprintf(` [data-uri=%q]`, uri))
			p.waitFor("the resource's text", fmt.Sprintf(`(document.querySelector(%q) || {}).innerText?.includes('Everything Server')`, pn+` .contents`))
			p.click(pn + ` button.subscribe`)
			p.waitFor("the subscription", fmt.Sprintf(`(document.querySelector(%q) || {}).textContent === 'Unsubscribe'`, pn+` button.subscribe`))
			callTool(t, in, ctx, name, "toggle-subscriber-updates", `{}`)
			p.waitFor("an update", fmt.Sprintf(`(document.querySelector(%q) || {}).children?.length > 0`, pn+` ol.updates`))
			if first {
				p.screenshot("resources")
			}
			callTool(t, in, ctx, name, "toggle-subscriber-updates", `{}`) // stop the timer

			// An elicitation, answered in the page.
			p.openTab(name, "tools")
			p.click(pn + ` [data-tool="trigger-elicitation-request"]`)
			p.click(pn + ` button.run`)
			p.waitFor("the elicitation form", fmt.Sprintf(`!!document.querySelector(%q)`, pn+` form.elicit`))
			p.typeIn(pn+` form.elicit [data-path="name"]`, "Ada Lovelace")
			if first {
				p.screenshot("elicitation")
			}
			p.click(pn + ` form.elicit button.accept`)
			p.openTab(name, "tools")
			p.waitFor("the elicitation's result", fmt.Sprintf(`(document.querySelector(%q) || {}).innerText?.includes('Ada Lovelace')`, pn+` .result[data-state="done"]`))

			// A tool run as a task: the Tasks page follows it.
			if first {
				p.openTab(name, "tools")
				p.click(pn + ` [data-tool="simulate-research-query"]`)
				p.typeIn(pn+` [data-path="topic"]`, "octopus")
				p.click(pn + ` .toolform input[type="checkbox"] + label[for^="task"]`)
				p.click(pn + ` button.run`)
				p.openTab(name, "tasks")
				p.waitFor("the task", fmt.Sprintf(`!!document.querySelector(%q)`, pn+` tr[data-task] td.status`))
				p.screenshot("tasks")
				p.openTab(name, "tools")
				p.waitFor("the task's result", fmt.Sprintf(`(document.querySelector(%q) || {}).innerText?.includes('Research Report: octopus')`, pn+` .result[data-state="done"]`))
			}

			// A prompt, its arguments completed as one types.
			p.openTab(name, "prompts")
			p.click(pn + ` [data-prompt="completable-prompt"]`)
			p.typeIn(pn+` [data-arg="department"]`, "E")
			p.waitFor("the completion", fmt.Sprintf(`[...document.querySelectorAll(%q)].some((o) => o.value === 'Engineering')`, pn+` datalist option`))
			p.typeIn(pn+` [data-arg="department"]`, "Engineering")
			p.typeIn(pn+` [data-arg="name"]`, "Alice")
			p.click(pn + ` .detail form button[type="submit"]`)
			p.waitFor("the prompt's messages", fmt.Sprintf(`(document.querySelector(%q) || {}).innerText?.includes('Please promote Alice to the head of the Engineering team')`, pn+` ol.messages`))
			if first {
				p.screenshot("prompts")
			}

			// Logs and notifications.
			p.openTab(name, "logs")
			callTool(t, in, ctx, name, "toggle-simulated-logging", `{}`)
			p.waitFor("a log message", fmt.Sprintf(`!!document.querySelector(%q)`, pn+` .note.log`))
			callTool(t, in, ctx, name, "toggle-simulated-logging", `{}`)
			if first {
				p.screenshot("logs")
			}

			// The history: the echo call grouped with its response, its
			// JSON, and the tako command.
			p.openTab(name, "history")
			p.waitFor("the history", fmt.Sprintf(`[...document.querySelectorAll(%q)].some((r) => r.dataset.method === 'tools/call')`, pn+` tr.h`))
			seq := eval[string](p, fmt.Sprintf(`[...document.querySelectorAll(%q)].find((r) => r.dataset.method === 'tools/call' && r.classList.contains('out') && r.classList.contains('request')).dataset.seq`, pn+` tr.h`))
			grouped := eval[int](p, fmt.Sprintf(`[...document.querySelectorAll(%q)].filter((r) => r.dataset.group === %q).length`, pn+` tr.h`, seq))
			if grouped < 2 {
				t.Errorf("the echo call's conversation has %d messages in the history, want its request and response", grouped)
			}
			p.click(pn + fmt.Sprintf(` tr.h[data-seq=%q] button`, seq))
			p.waitFor("the message's JSON", fmt.Sprintf(`(document.querySelector(%q) || {}).innerText?.includes('"tools/call"')`, pn+` tr.hbody`))
			if first {
				p.screenshot("history")
			}
			// The clipboard of a headless browser is not readable: the
			// page's copy is caught where it writes.
			eval[bool](p, `(navigator.clipboard.writeText = async (s) => { window.__copied = s; }, true)`)
			p.click(pn + ` tr.hbody button.copycmd`)
			p.waitFor("the copied command", `typeof window.__copied === 'string'`)
			copied := eval[string](p, `window.__copied`)
			if !strings.HasPrefix(copied, "tako call echo ") || !strings.Contains(copied, "hello from the page") {
				t.Errorf("copied %q, want a tako call echo command", copied)
			}
			eval[bool](p, `delete window.__copied`)

			if first {
				return
			}
			// The network view of the HTTP server: each POST with its
			// status, its Mcp-Session-Id, the JSON-RPC method, and the
			// events of the SSE answers.
			p.openTab(name, "network")
			p.waitFor("the network entries", fmt.Sprintf(`[...document.querySelectorAll(%q)].some((r) => r.innerText.includes('tools/call') && r.querySelector('.status').textContent === '200')`, pn+` table.net tbody tr`))
			row := eval[string](p, fmt.Sprintf(`[...document.querySelectorAll(%q)].find((r) => r.innerText.includes('tools/call') && r.innerText.includes('events')).dataset.n`, pn+` table.net tbody tr`))
			p.click(pn + fmt.Sprintf(` table.net tr[data-n=%q] button`, row))
			p.waitFor("the request's headers and events", fmt.Sprintf(`(() => { const t = document.querySelector(%q).innerText; return t.includes('Mcp-Session-Id') && t.includes('Mcp-Protocol-Version') && t.includes('SSE events'); })()`, pn+` table.net tr.hbody`))
			p.screenshot("network")
		})
	}
}

// TestInspectReadmeScreenshot makes the README's picture of the tools
// page when TAKO_README_SCREENSHOT names the file to write: the
// reference server over stdio and over HTTP side by side, echo run in
// one, the tiny image in the other.
func TestInspectReadmeScreenshot(t *testing.T) {
	file := os.Getenv("TAKO_README_SCREENSHOT")
	if file == "" {
		t.Skip("TAKO_README_SCREENSHOT is not set")
	}
	ctx := strictTestContext(t, 2*time.Minute)
	httpURL := everythingHTTP(t, "streamableHttp")
	in := startInspector(t, ctx, nil, "--stdio", everythingStdio(t), "--http", httpURL)
	p := openPage(t, newBrowser(t, chromedp.WindowSize(1600, 1000)), in.URL)
	u, _ := url.Parse(httpURL)
	for i, name := range []string{"server-everything", "localhost-" + u.Port()} {
		pn := panel(name)
		p.waitConnected(name+" to connect", name)
		p.openTab(name, "tools")
		tool := []string{"echo", "get-tiny-image"}[i]
		p.click(pn + fmt.Sprintf(` [data-tool=%q]`, tool))
		if i == 0 {
			p.typeIn(pn+` [data-path="message"]`, "hello from tako inspect")
		}
		p.click(pn + ` button.run`)
		p.waitFor("the result", fmt.Sprintf(`!!document.querySelector(%q)`, pn+` .result[data-state="done"]`))
	}
	eval[bool](p, `(window.scrollTo(0, 0), document.activeElement.blur(), true)`)
	p.readmeShot(file, 900)
}

// callTool calls a tool of the server called name through the
// inspector's API, as the page does, and waits for it to end.
func callTool(t *testing.T, in *inspector, ctx context.Context, name, tool, args string) {
	t.Helper()
	var st struct {
		Servers []struct{ ID, Name string }
	}
	in.api(t, ctx, "GET", "/api/state", nil, &st)
	id := ""
	for _, s := range st.Servers {
		if s.Name == name {
			id = s.ID
		}
	}
	var run struct{ ID, State, Error string }
	if code := in.api(t, ctx, "POST", "/api/servers/"+id+"/call", map[string]any{"name": tool, "arguments": json.RawMessage(args)}, &run); code != 200 {
		t.Fatalf("calling %s: HTTP %d", tool, code)
	}
	// The run's end is an event of the page's stream; the API is polled
	// here, with a deadline.
	wait, cancel := context.WithTimeout(ctx, pageWait)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for run.State == "running" || run.State == "" {
		select {
		case <-wait.Done():
			t.Fatalf("%s still runs after %s", tool, pageWait)
		case <-tick.C:
		}
		in.api(t, ctx, "GET", "/api/runs/"+run.ID, nil, &run)
	}
	if run.State != "done" {
		t.Fatalf("%s: %s %s", tool, run.State, run.Error)
	}
}
