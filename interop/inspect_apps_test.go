package interop

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

var (
	inspectPeerOnce sync.Once
	inspectPeerBin  string
	inspectPeerErr  error
)

// inspectPeer builds servers/inspectpeer once.
func inspectPeer(t *testing.T) string {
	t.Helper()
	inspectPeerOnce.Do(func() {
		bin := filepath.Join(peerBin, "inspectpeer")
		out, err := exec.Command("go", "build", "-o", bin, "./servers/inspectpeer").CombinedOutput()
		if err != nil {
			inspectPeerErr = fmt.Errorf("building servers/inspectpeer: %v\n%s", err, out)
			return
		}
		inspectPeerBin = bin
	})
	if inspectPeerErr != nil {
		t.Fatal(inspectPeerErr)
	}
	return inspectPeerBin
}

// TestInspectAppsViewersAndScale: against servers/inspectpeer with 2,000
// extra tools. The tools page stays responsive (the list is paged and
// searchable; the page answers within a second while it draws); a 16 MiB
// result is shown cut, with a download of the whole, and the page still
// answers; the output schema's verdict is shown, for a result that keeps
// it and one that breaks it; the content viewers show an image, audio, a
// PDF, a CSV table and HTML in a frame without scripts; and a tool's MCP
// App opens in a sandboxed frame, speaks the Apps protocol with the page
// (initialize, the tool's result, a tools/call of its own, ui/message).
func TestInspectAppsViewersAndScale(t *testing.T) {
	ctx := strictTestContext(t, 2*time.Minute)
	in := startInspector(t, ctx, nil, "--stdio", inspectPeer(t)+" -tools 2000")
	p := openPage(t, newBrowser(t), in.URL)
	name := "inspectpeer"
	pn := panel(name)
	p.waitConnected("the server to connect", name)

	// 2,000 tools: listed, paged, found by search, the page responsive.
	start := time.Now()
	p.openTab(name, "tools")
	p.waitFor("the long list", fmt.Sprintf(`(document.querySelector(%q) || {}).textContent === '2006 of 2006 tools'`, pn+` .side .count`))
	listed := time.Since(start)
	if n := eval[int](p, fmt.Sprintf(`document.querySelectorAll(%q).length`, pn+` ul.tools li`)); n > 100 {
		t.Errorf("%d tools drawn at once; want a page of them", n)
	}
	p.typeIn(pn+` input.search`, "tool-1999")
	p.waitFor("the search", fmt.Sprintf(`(() => { const l = document.querySelectorAll(%q); return l.length === 1 && l[0].dataset.tool === 'tool-1999'; })()`, pn+` ul.tools li button`))
	answered := responsive(t, p)
	t.Logf("2,000 tools listed and drawn in %s; the page answers in %s", listed.Round(time.Millisecond), answered.Round(time.Millisecond))
	p.typeIn(pn+` input.search`, "")

	// 16 MiB.
	p.click(pn + ` [data-tool="big"]`)
	p.typeIn(pn+` [data-path="bytes"]`, fmt.Sprint(16<<20))
	start = time.Now()
	p.click(pn + ` button.run`)
	// 16 MiB through a -race build of tako on a loaded machine of 2 cores
	// took 7 s on an idle machine and over 30 s on one shared with builds.
	p.waitWithin(2*time.Minute, "the cut result", fmt.Sprintf(`!!document.querySelector(%q)`, pn+` .result[data-state="done"] .cut`))
	shown := time.Since(start)
	answered = responsive(t, p)
	if n := eval[int](p, fmt.Sprintf(`document.querySelector(%q).innerText.length`, pn+` .result`)); n > 1<<20 {
		t.Errorf("the page holds %d characters of the 16 MiB result; want its start", n)
	}
	href := eval[string](p, fmt.Sprintf(`document.querySelector(%q).href`, pn+` .result a.download`))
	resp, err := http.Get(href)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || n < 16<<20 {
		t.Errorf("the download: HTTP %d, %d bytes", resp.StatusCode, n)
	}
	t.Logf("a 16 MiB result shown in %s; the page answers in %s", shown.Round(time.Millisecond), answered.Round(time.Millisecond))
	p.screenshot("big result")

	// The output schema's verdicts.
	for tool, want := range map[string]string{"add": "conforms to the output schema", "bad-output": "does not conform"} {
		p.click(pn + fmt.Sprintf(` [data-tool=%q]`, tool))
		if tool == "add" {
			p.typeIn(pn+` [data-path="a"]`, "2")
			p.typeIn(pn+` [data-path="b"]`, "3")
		}
		p.click(pn + ` button.run`)
		p.waitFor(tool+"'s verdict", fmt.Sprintf(`(document.querySelector(%q) || {}).innerText?.includes(%q)`, pn+` .result .verdict`, want))
	}

	// The viewers.
	p.click(pn + ` [data-tool="contents"]`)
	p.click(pn + ` button.run`)
	p.waitFor("the viewers", fmt.Sprintf(`(() => { const r = document.querySelector(%q); if (!r) return false;
		const img = r.querySelector('img.img'), f = r.querySelector('iframe.htmlframe');
		return img && img.complete && img.naturalWidth === 8 && !!r.querySelector('audio') && !!r.querySelector('object[type="application/pdf"]')
			&& r.querySelectorAll('.csv tbody tr').length === 2 && r.querySelector('.csv').innerText.includes('Lovelace, A.')
			&& f && f.getAttribute('sandbox') === '' && f.src.includes('/frame/'); })()`, pn+` .result[data-state="done"]`))
	p.screenshot("viewers")

	// The App.
	p.click(pn + ` [data-tool="show-app"]`)
	p.click(pn + ` button.run`)
	p.waitFor("the app's frame", fmt.Sprintf(`(() => { const f = document.querySelector(%q); return f && f.getAttribute('sandbox') === 'allow-scripts'; })()`, pn+` iframe.appframe`))
	p.waitFor("the app's report", fmt.Sprintf(`(document.querySelector(%q) || {}).innerText?.includes('app saw app result and add gave 5')`, pn+` ol.applog`))
	if h := eval[string](p, fmt.Sprintf(`document.querySelector(%q).style.height`, pn+` iframe.appframe`)); h != "140px" {
		t.Errorf("the app asked for 140px, the frame is %q", h)
	}
	p.screenshot("app")
	// The app's own tools/call went to the server through the page: it is
	// in the history.
	p.openTab(name, "history")
	p.waitFor("the app's call in the history", fmt.Sprintf(`[...document.querySelectorAll(%q)].some((r) => r.innerText.includes('tools/call') && r.innerText.includes(' add'))`, pn+` tr.h`))
}

// responsive is how long the page takes to answer a trivial evaluation,
// which must be under a second: a page busy drawing does not answer.
func responsive(t *testing.T, p *inspectPage) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.tab, pageWait)
	defer cancel()
	start := time.Now()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[int](`1 + 1`)); err != nil {
		t.Fatal(err)
	}
	d := time.Since(start)
	if d > time.Second {
		t.Errorf("the page took %s to answer", d)
	}
	if strings.Contains(p.text("#status"), "Cannot") {
		t.Errorf("the page says %q", p.text("#status"))
	}
	return d
}
