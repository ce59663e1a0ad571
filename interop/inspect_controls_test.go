package interop

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestInspectStopAndDecline: with examples/demo-server over stdio, a
// sampling request the person declines ends the call with the server's
// answer to a refusal, and a call paused at input_required that the
// person stops ends as stopped, with nothing left waiting.
func TestInspectStopAndDecline(t *testing.T) {
	ctx := strictTestContext(t, 2*time.Minute)
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
	noneWaits := func() {
		t.Helper()
		p.openTab(name, "client")
		p.waitFor("no request left waiting", fmt.Sprintf(`!document.querySelector(%q)`, pn+` article.req`))
	}

	run("sample", map[string]string{"prompt": "Will you answer?"})
	p.waitFor("the sampling request", has(`article.req`, "Will you answer?"))
	p.click(pn + ` article.req button.decline`)
	p.openTab(name, "tools")
	p.waitFor("the declined call's end", has(`.result:not([data-state="running"])`, "declined"))
	if eval[bool](p, has(`.result`, "Will you answer?")) {
		t.Error("the declined call shows a sampled answer")
	}
	p.screenshot("sampling declined")
	noneWaits()

	p.openTab(name, "history")
	p.click(pn + ` input.pause`)
	p.waitFor("the pause on", `document.getElementById('status').textContent.includes('will wait for you')`)
	run("roots", nil)
	p.waitFor("the paused call", has(`article.req.paused li[data-ask]`, "roots/list"))
	p.click(pn + ` article.req.paused button.stop`)
	p.openTab(name, "tools")
	p.waitFor("the stopped call", has(`.result[data-state="failed"]`, "stopped at input_required"))
	p.screenshot("stopped")
	noneWaits()
}

// TestInspectEverythingControls: with server-everything over stdio, what
// the other tests do not drive: the echo form filled and run with the
// keyboard alone; a resource template read with its variable filled in;
// a task's Result button, and its Cancel button on a task that waits for
// the person (an ambiguous research query, held at input_required).
func TestInspectEverythingControls(t *testing.T) {
	ctx := strictTestContext(t, 3*time.Minute)
	in := startInspector(t, ctx, nil, "--stdio", everythingStdio(t))
	p := openPage(t, newBrowser(t), in.URL)
	const name = "server-everything"
	pn := panel(name)
	p.waitConnected("the server to connect", name)
	active := func(sel string) string {
		return fmt.Sprintf(`document.activeElement === document.querySelector(%q)`, sel)
	}
	press := func(what string, keys string) {
		t.Helper()
		p.do(what, chromedp.KeyEvent(keys))
	}

	t.Run("keyboard", func(t *testing.T) {
		p.t = t
		p.openTab(name, "tools")
		p.waitFor("the tool list", fmt.Sprintf(`!!document.querySelector(%q)`, pn+` [data-tool="echo"]`))
		// From the search field, Tab walks to echo; Enter opens its form
		// with the focus in its field; typing and Enter run it.
		p.do("focus the search", chromedp.Focus(chromedp.CSS(pn+` input.search`)))
		for i := 0; !eval[bool](p, active(pn+` [data-tool="echo"]`)); i++ {
			if i == 60 {
				t.Fatalf("60 presses of Tab did not reach echo (the focus is on %s)", eval[string](p, `document.activeElement.outerHTML.slice(0, 120)`))
			}
			press("Tab", kb.Tab)
		}
		press("Enter on echo", kb.Enter)
		p.waitFor("the focus in echo's form", active(pn+` form.toolform [data-path="message"]`))
		press("type the message", "typed with the keys")
		press("Enter in the field", kb.Enter)
		p.waitFor("the echo result", fmt.Sprintf(`(document.querySelector(%q) || {}).innerText?.includes('Echo: typed with the keys')`, pn+` .result[data-state="done"]`))
	})

	t.Run("template", func(t *testing.T) {
		p.t = t
		p.openTab(name, "resources")
		tmpl := pn + ` [data-template$="/text/{resourceId}"]`
		p.click(tmpl)
		p.typeIn(pn+` .detail input[data-var="resourceId"]`, "7")
		p.click(pn + ` .detail form button[type="submit"]`)
		p.waitFor("the template's resource", fmt.Sprintf(`(document.querySelector(%q) || {}).innerText?.includes('Resource 7: This is a plaintext resource')`, pn+` .detail .contents`))
		p.screenshot("template")
	})

	t.Run("tasks", func(t *testing.T) {
		p.t = t
		asTask := func(args map[string]string, tick string) {
			t.Helper()
			p.openTab(name, "tools")
			p.waitFor("the tool list", fmt.Sprintf(`!!document.querySelector(%q)`, pn+` [data-tool="simulate-research-query"]`))
			p.click(pn + ` [data-tool="simulate-research-query"]`)
			for k, v := range args {
				p.typeIn(pn+fmt.Sprintf(` [data-path=%q]`, k), v)
			}
			if tick != "" {
				p.click(pn + fmt.Sprintf(` [data-path=%q]`, tick))
			}
			p.click(pn + ` .toolform input[type="checkbox"] + label[for^="task"]`)
			p.click(pn + ` button.run`)
		}
		row := func(i int) string { return fmt.Sprintf(`%s tr[data-task]:nth-child(%d)`, pn, i) }

		asTask(map[string]string{"topic": "octopus"}, "")
		p.openTab(name, "tasks")
		p.waitFor("the task", fmt.Sprintf(`!!document.querySelector(%q)`, row(1)))
		p.click(row(1) + ` button.tresult`)
		p.waitFor("the task's result", fmt.Sprintf(`(document.querySelector(%q) || {}).innerText?.includes('Research Report: octopus')`, pn+` [data-page="tasks"] .out`))

		asTask(map[string]string{"topic": "squid"}, "ambiguous")
		// The server's question comes to the Requests page, and the
		// task waits for it.
		p.waitFor("the task's question", fmt.Sprintf(`[...document.querySelectorAll(%q)].some((e) => e.innerText.includes('squid'))`, pn+` article.req`))
		p.openTab(name, "tasks")
		p.click(row(2) + ` button.tstatus`)
		p.waitFor("the second task waiting for the person", fmt.Sprintf(`(document.querySelector(%q) || {}).className === 'status input_required'`, row(2)+` td.status`))
		p.click(row(2) + ` button.tcancel`)
		p.waitFor("the task cancelled", fmt.Sprintf(`(document.querySelector(%q) || {}).className === 'status cancelled'`, row(2)+` td.status`))
		// Its question is withdrawn from the Requests page.
		p.openTab(name, "client")
		p.waitFor("the cancelled task's question withdrawn", fmt.Sprintf(`![...document.querySelectorAll(%q)].some((e) => e.innerText.includes('squid'))`, pn+` article.req`))
		p.screenshot("task cancelled")
	})
}
